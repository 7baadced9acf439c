package io.strata.tests.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.BlockLocation;
import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.MountOptions;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.ReadType;
import io.strata.client.options.TtlAction;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.PermissionDeniedException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.id.BlockId;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.WorkerKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Caching policies and bad input around the under file system, on a real master, two real workers and a
 * local-dir UFS: passive caching to the reader's local worker, TTLs, nested mounts and their rules, an
 * unreachable UFS, and a UFS that breaks in the middle of a write (nothing half-written stays visible).
 *
 * <p>Worker 0 advertises {@code localhost} (the test client's host), worker 1 {@code 127.0.0.1}: both are
 * loopback, but the client sees only worker 0 as local.
 */
class UfsPoliciesIntegrationTest {
  private static final int BLOCK = 64 * 1024;

  private static LocalStrataCluster cluster;
  private static FileSystem fs;
  /** A client on "the other host": worker 1 is its local worker. */
  private static FileSystem remote;

  @TempDir
  static Path tmp;

  @BeforeAll
  static void start() throws IOException {
    cluster = UfsEndToEndContract.baseCluster().workers(1).set("strata.master.ttl.check.interval", "100ms")
        // The failing-UFS tests mount with fs.file.impl, which only an operator may allow.
        .set("strata.master.mount.options.unsafe.allowed", "true").build()
        .start();
    cluster.addWorker(Map.of(WorkerKeys.HOSTNAME.name(), "127.0.0.1"));
    cluster.waitForWorkers(2, 30_000);
    fs = cluster.client();
    remote = FileSystem.create(cluster.clientConf().withAll(Map.of("strata.user.hostname", "127.0.0.1")));
  }

  @AfterAll
  static void stop() throws IOException {
    if (remote != null) {
      remote.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private static void write(FileSystem client, String path, byte[] content, WriteType type) throws IOException {
    try (FileOutStream out = client.createFile(path, CreateFileOptions.defaults().withWriteType(type))) {
      out.write(content);
    }
  }

  private static byte[] read(FileSystem client, String path, ReadType type) throws IOException {
    try (FileInStream in = client.openFile(path, OpenFileOptions.defaults().withReadType(type))) {
      return in.readAllBytes();
    }
  }

  private static Set<String> holders(String path) throws IOException {
    Set<String> out = new HashSet<>();
    for (FileBlockInfo b : fs.getBlockLocations(path)) {
      for (BlockLocation l : b.locations()) {
        out.add(l.address().host());
      }
    }
    return out;
  }

  // ---- passive caching ----

  @Test
  void aBlockReadFromAnotherHost_isCachedOnTheReadersLocalWorker() throws Exception {
    byte[] content = UfsEndToEndContract.data(1, BLOCK * 2);
    write(remote, "/passive/f", content, WriteType.MUST_CACHE);
    assertThat(holders("/passive/f")).containsExactly("127.0.0.1");
    assertThat(read(fs, "/passive/f", ReadType.CACHE)).isEqualTo(content);
    await().atMost(Duration.ofSeconds(10)).until(() -> holders("/passive/f").equals(Set.of("127.0.0.1", "localhost")));
    assertThat(fs.getBlockLocations("/passive/f")).allSatisfy(b -> assertThat(b.locations()).hasSize(2));
  }

  @Test
  void noCacheReads_andClientsWithPassiveCachingOff_leaveTheBlocksWhereTheyAre() throws Exception {
    byte[] content = UfsEndToEndContract.data(2, BLOCK);
    write(remote, "/passive/g", content, WriteType.MUST_CACHE);
    // Each read from its own client: closing a client waits for its calls to finish, so a passive-cache
    // request either reading sent has reached worker 0 by then and is in its async-cache queue.
    try (FileSystem noCache = FileSystem.create(cluster.clientConf())) {
      assertThat(read(noCache, "/passive/g", ReadType.NO_CACHE)).isEqualTo(content);
    }
    try (FileSystem off = FileSystem.create(cluster.clientConf()
        .withAll(Map.of("strata.user.file.passive.cache.enabled", "false")))) {
      assertThat(read(off, "/passive/g", ReadType.CACHE)).isEqualTo(content);
    }
    // Once worker 0's queue is empty, whatever it was asked to cache is cached and listed at the master.
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.worker(0).asyncCachePending() == 0);
    assertThat(holders("/passive/g")).containsExactly("127.0.0.1");
  }

  // ---- TTLs ----

  @Test
  void anExpiredTtl_deletesTheFile_fromStrataAndTheUfs() throws Exception {
    write(fs, "/ttl/del", UfsEndToEndContract.data(3, 100), WriteType.CACHE_THROUGH);
    Path inUfs = cluster.rootUfsDir().resolve("ttl/del");
    assertThat(inUfs).exists();
    fs.setTtl("/ttl/del", 300, TtlAction.DELETE);
    await().atMost(Duration.ofSeconds(10)).until(() -> !fs.exists("/ttl/del"));
    assertThat(inUfs).doesNotExist();
  }

  @Test
  void anExpiredFreeTtl_freesTheBlocks_keepsTheFile_andClearsTheTtl() throws Exception {
    byte[] content = UfsEndToEndContract.data(4, BLOCK + 10);
    write(fs, "/ttl/free", content, WriteType.CACHE_THROUGH);
    assertThat(fs.setTtl("/ttl/free", 300, TtlAction.FREE).ttlMs()).isEqualTo(300);
    await().atMost(Duration.ofSeconds(10)).until(() -> fs.getStatus("/ttl/free").ttlMs() == -1);
    assertThat(holders("/ttl/free")).isEmpty();
    assertThat(read(fs, "/ttl/free", ReadType.NO_CACHE)).isEqualTo(content);
  }

  // ---- mounts ----

  @Test
  void aNestedReadOnlyMount_showsItsFiles_refusesWrites_andUnmounts() throws Exception {
    Path other = Files.createDirectories(tmp.resolve("archive"));
    Files.write(other.resolve("old.bin"), UfsEndToEndContract.data(5, 1000));
    fs.createDirectory("/mnt");
    fs.mount("/mnt/archive", other.toString(), MountOptions.defaults().withReadOnly(true)
        .withProperties(Map.of("fs.s3a.secret.key", "hush", "fs.s3a.endpoint", "e")));
    assertThat(fs.getMountTable()).anySatisfy(m -> {
      assertThat(m.path()).isEqualTo("/mnt/archive");
      assertThat(m.readOnly()).isTrue();
      // Credentials never go back to clients.
      assertThat(m.properties()).containsEntry("fs.s3a.secret.key", "******").containsEntry("fs.s3a.endpoint", "e");
    });
    assertThat(read(fs, "/mnt/archive/old.bin", ReadType.CACHE)).isEqualTo(UfsEndToEndContract.data(5, 1000));
    assertThatThrownBy(() -> write(fs, "/mnt/archive/new", new byte[1], WriteType.MUST_CACHE))
        .isInstanceOf(PermissionDeniedException.class).hasMessageContaining("read-only");
    assertThatThrownBy(() -> fs.mount("/mnt/archive", tmp.resolve("x").toString()))
        .isInstanceOf(AlreadyExistsException.class).hasMessageContaining("already the mount point");
    fs.unmount("/mnt/archive");
    assertThatThrownBy(() -> fs.getStatus("/mnt/archive/old.bin")).isInstanceOf(NotFoundException.class);
    assertThat(other.resolve("old.bin")).exists();
  }

  @Test
  void mountingOverANonEmptyPath_orAnUnreachableUfs_isRefusedWithAClearError() throws Exception {
    write(fs, "/busy/file", new byte[10], WriteType.MUST_CACHE);
    Path empty = Files.createDirectories(tmp.resolve("empty"));
    assertThatThrownBy(() -> fs.mount("/busy", empty.toString())).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("not an empty directory");
    assertThatThrownBy(() -> fs.mount("/busy/file", empty.toString()))
        .isInstanceOf(FailedPreconditionException.class);
    assertThatThrownBy(() -> fs.mount("/unreachable", "hdfs://127.0.0.1:1/data"))
        .isInstanceOf(UnavailableException.class).hasMessageContaining("hdfs://127.0.0.1:1/data");
    assertThat(fs.exists("/unreachable")).isFalse();
    assertThat(fs.getMountTable()).noneMatch(m -> m.path().equals("/unreachable") || m.path().equals("/busy"));
  }

  // ---- a UFS that fails in the middle of a write ----

  @Test
  void aUfsThatBreaksMidWrite_failsTheWrite_andLeavesNothingHalfWritten() throws Exception {
    Path disk = Files.createDirectories(tmp.resolve("breaking"));
    fs.mount("/breaking", disk.toString(), MountOptions.defaults().withProperties(Map.of(
        "fs.file.impl", FailingFileSystem.class.getName(), "failing.fail.after.bytes", Integer.toString(BLOCK))));
    // Inode ids only grow: the failed files' ids lie between these two markers' ids.
    fs.createDirectory("/breaking-ids-before");
    long firstId = fs.getStatus("/breaking-ids-before").id();
    for (WriteType type : List.of(WriteType.CACHE_THROUGH, WriteType.THROUGH)) {
      String path = "/breaking/" + type;
      assertThatThrownBy(() -> write(fs, path, UfsEndToEndContract.data(6, BLOCK * 3), type))
          .isInstanceOf(IOException.class).hasMessageContaining("Injected failure");
      assertThat(fs.exists(path)).as(type + " visible").isFalse();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> {
      try (Stream<Path> left = Files.list(disk)) {
        return left.findAny().isEmpty(); // the worker deletes its partial copy
      }
    });
    fs.createDirectory("/breaking-ids-after");
    long lastId = fs.getStatus("/breaking-ids-after").id();
    // No worker keeps a block of the failed files (CACHE_THROUGH cached a block before the UFS broke).
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.workers().stream()
        .flatMap(w -> w.store().committedBlocks().stream())
        .noneMatch(b -> BlockId.fileId(b.blockId()) > firstId && BlockId.fileId(b.blockId()) < lastId));
    // The mount itself still works for writes that fit.
    write(fs, "/breaking/small", new byte[100], WriteType.CACHE_THROUGH);
    assertThat(Files.size(disk.resolve("small"))).isEqualTo(100);
  }

  @Test
  void anAsyncThroughFile_whoseUfsBreaks_staysCachedAndReadable_andIsNotMarkedPersisted() throws Exception {
    Path disk = Files.createDirectories(tmp.resolve("breaking-async"));
    fs.mount("/breaking-async", disk.toString(), MountOptions.defaults().withProperties(Map.of(
        "fs.file.impl", FailingFileSystem.class.getName(), "failing.fail.after.bytes", "10")));
    byte[] content = UfsEndToEndContract.data(7, 1000);
    write(fs, "/breaking-async/f", content, WriteType.ASYNC_THROUGH);
    assertThat(fs.getStatus("/breaking-async/f").persistenceState()).isEqualTo("TO_BE_PERSISTED");
    assertThatThrownBy(() -> fs.persist("/breaking-async/f", Duration.ofSeconds(2)))
        .isInstanceOf(IOException.class);
    assertThat(fs.getStatus("/breaking-async/f").persistenceState()).isEqualTo("TO_BE_PERSISTED");
    assertThat(read(fs, "/breaking-async/f", ReadType.CACHE)).isEqualTo(content);
    // Each failed attempt deletes its partial copy; once the file is gone no attempt starts again, and
    // when the last one has ended nothing of them is left.
    fs.delete("/breaking-async/f");
    await().atMost(Duration.ofSeconds(10)).until(() -> {
      try (Stream<Path> left = Files.list(disk)) {
        return cluster.workers().stream().allMatch(w -> w.persistsActive() == 0) && left.findAny().isEmpty();
      }
    });
  }

  static StrataConf conf() {
    return cluster.clientConf();
  }
}
