package io.strata.tests.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.GetStatusOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.ReadType;
import io.strata.client.options.WriteType;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.server.ufs.UfsManager;
import io.strata.server.ufs.UnderFileSystem;
import io.strata.worker.WorkerProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Write types, read types, persistence and caching end to end, on a real master and two real workers in
 * this JVM, over one kind of under file system (a local dir, HDFS): each subclass provides the cluster and
 * the Strata directory backed by its UFS. Every test works in its own directory below that one. The test
 * that stops every worker runs last.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class UfsEndToEndContract {
  static final int BLOCK = 64 * 1024;
  /** Two and a half blocks. */
  static final int LENGTH = BLOCK * 5 / 2;

  protected LocalStrataCluster cluster;
  protected FileSystem fs;
  private final UfsManager ufsClients = new UfsManager();
  /** This test's directory in Strata, and the same directory in the UFS. */
  protected String dir;
  protected String ufsDir;

  /** Starts the cluster (and the UFS); called once. */
  protected abstract LocalStrataCluster startCluster() throws Exception;

  /** The Strata directory backed by the UFS under test. */
  protected abstract String strataRoot();

  /** The UFS URI of {@link #strataRoot()}. */
  protected abstract String ufsRoot();

  protected void stopUfs() throws Exception {}

  /** The settings every subclass's cluster uses: small blocks, a quick persist scheduler. */
  static LocalStrataCluster.Builder baseCluster() {
    return LocalStrataCluster.builder().workers(2)
        .set("strata.user.block.size.default", BLOCK)
        .set("strata.master.ufs.block.size", BLOCK)
        .set("strata.master.persist.check.interval", "100ms")
        .set("strata.master.persist.retry.interval.min", "100ms")
        .set("strata.master.persist.retry.interval.max", "1s");
  }

  @BeforeAll
  void start() throws Exception {
    cluster = startCluster();
    fs = cluster.client();
  }

  @AfterAll
  void stop() throws Exception {
    ufsClients.close();
    if (cluster != null) {
      cluster.close();
    }
    stopUfs();
  }

  @BeforeEach
  void makeDir(TestInfo info) throws IOException {
    String name = info.getTestMethod().orElseThrow().getName();
    dir = strataRoot() + "/" + name;
    ufsDir = ufsRoot() + "/" + name;
    fs.createDirectory(dir, CreateDirectoryOptions.defaults().withRecursive(true)
        .withWriteType(WriteType.CACHE_THROUGH));
  }

  // ---- helpers ----

  static byte[] data(long seed, int length) {
    byte[] b = new byte[length];
    new Random(seed).nextBytes(b);
    return b;
  }

  void write(String path, byte[] content, WriteType type) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withWriteType(type))) {
      out.write(content);
    }
  }

  byte[] read(String path, ReadType type) throws IOException {
    try (FileInStream in = fs.openFile(path, OpenFileOptions.defaults().withReadType(type))) {
      return in.readAllBytes();
    }
  }

  UnderFileSystem ufs() throws IOException {
    return ufsClients.get(ufsRoot(), Map.of());
  }

  void writeStraightToUfs(String uri, byte[] content) throws IOException {
    try (OutputStream out = ufs().create(uri)) {
      out.write(content);
    }
  }

  byte[] readStraightFromUfs(String uri) throws IOException {
    try (InputStream in = ufs().open(uri, 0)) {
      return in.readAllBytes();
    }
  }

  /** Blocks of the file that at least one worker holds. */
  long cachedBlocks(String path) throws IOException {
    return fs.getBlockLocations(path).stream().filter(b -> !b.locations().isEmpty()).count();
  }

  long ufsBlockReads() {
    long n = 0;
    for (WorkerProcess w : cluster.workers()) {
      if (!w.isClosed()) {
        n += w.ufsBlockReads();
      }
    }
    return n;
  }

  void awaitPersisted(String path) {
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50)).until(
        () -> fs.getStatus(path).persistenceState().equals("PERSISTED"));
  }

  // ---- write types x read types ----

  @Test
  @Order(1)
  void everyWriteType_isReadByteExact_byEveryReadType_withThePersistenceStateItPromises() throws Exception {
    for (WriteType w : WriteType.values()) {
      String path = dir + "/" + w;
      byte[] content = data(w.ordinal(), LENGTH);
      write(path, content, w);
      URIStatus s = fs.getStatus(path);
      assertThat(s.length()).as(w + " length").isEqualTo(LENGTH);
      switch (w) {
        case MUST_CACHE -> assertThat(s.persistenceState()).isEqualTo("NOT_PERSISTED");
        case CACHE_THROUGH, THROUGH -> assertThat(s.persistenceState()).as(w.toString()).isEqualTo("PERSISTED");
        case ASYNC_THROUGH -> awaitPersisted(path);
      }
      if (w != WriteType.MUST_CACHE) {
        assertThat(readStraightFromUfs(ufsDir + "/" + w)).as(w + " in the UFS").isEqualTo(content);
      } else {
        assertThat(ufs().getStatus(ufsDir + "/" + w)).as("MUST_CACHE leaves the UFS alone").isNull();
      }
      assertThat(cachedBlocks(path)).as(w + " cached blocks").isEqualTo(w == WriteType.THROUGH ? 0 : 3);
      for (ReadType r : ReadType.values()) {
        assertThat(read(path, r)).as(w + " read " + r).isEqualTo(content);
      }
    }
  }

  @Test
  @Order(2)
  void readingAThroughFile_cachesItUnlessNoCache() throws Exception {
    byte[] content = data(7, LENGTH);
    write(dir + "/nocache", content, WriteType.THROUGH);
    write(dir + "/cache", content, WriteType.THROUGH);
    assertThat(read(dir + "/nocache", ReadType.NO_CACHE)).isEqualTo(content);
    assertThat(cachedBlocks(dir + "/nocache")).isZero();
    assertThat(read(dir + "/cache", ReadType.CACHE)).isEqualTo(content);
    await().atMost(Duration.ofSeconds(10)).until(() -> cachedBlocks(dir + "/cache") == 3);
    List<FileBlockInfo> blocks = fs.getBlockLocations(dir + "/cache");
    assertThat(blocks).extracting(FileBlockInfo::length).containsExactly((long) BLOCK, (long) BLOCK,
        (long) (LENGTH - 2 * BLOCK));
  }

  @Test
  @Order(3)
  void aFileWrittenStraightIntoTheUfs_isListedAndReadThroughStrata() throws Exception {
    byte[] content = data(11, LENGTH);
    writeStraightToUfs(ufsDir + "/outside/part-00000", content);
    List<String> names = new ArrayList<>();
    fs.listStatus(dir + "/outside").forEach(s -> names.add(s.name()));
    assertThat(names).containsExactly("part-00000");
    URIStatus s = fs.getStatus(dir + "/outside/part-00000");
    assertThat(s.persistenceState()).isEqualTo("PERSISTED");
    assertThat(s.length()).isEqualTo(LENGTH);
    assertThat(read(dir + "/outside/part-00000", ReadType.CACHE)).isEqualTo(content);
    // The worker commits a block it cached once the reader has its bytes: the master learns of it just after.
    await().atMost(Duration.ofSeconds(10)).until(() -> cachedBlocks(dir + "/outside/part-00000") == 3);
  }

  @Test
  @Order(4)
  void changesMadeStraightInTheUfs_becomeVisible_whenTheSyncIntervalSaysSo() throws Exception {
    writeStraightToUfs(ufsDir + "/a", data(1, 10));
    assertThat(fs.listStatus(dir)).extracting(URIStatus::name).containsExactly("a");
    writeStraightToUfs(ufsDir + "/b", data(2, 20));
    assertThat(fs.listStatus(dir, ListStatusOptions.defaults().withSyncIntervalMs(-1)))
        .extracting(URIStatus::name).containsExactly("a");
    assertThat(fs.listStatus(dir, ListStatusOptions.defaults().withSyncIntervalMs(0)))
        .extracting(URIStatus::name).containsExactly("a", "b");
    writeStraightToUfs(ufsDir + "/a", data(3, 30));
    assertThat(fs.getStatus(dir + "/a", GetStatusOptions.defaults().withSyncIntervalMs(0)).length()).isEqualTo(30);
    assertThat(read(dir + "/a", ReadType.CACHE)).isEqualTo(data(3, 30));
  }

  @Test
  @Order(5)
  void free_thenRead_cachesTheFileAgain() throws Exception {
    byte[] content = data(5, LENGTH);
    write(dir + "/f", content, WriteType.CACHE_THROUGH);
    assertThat(cachedBlocks(dir + "/f")).isEqualTo(3);
    List<Long> ids = fs.getBlockLocations(dir + "/f").stream().map(FileBlockInfo::blockId).toList();
    assertThat(fs.free(dir + "/f", false, false).blocksFreed()).isEqualTo(3);
    assertThat(cachedBlocks(dir + "/f")).isZero();
    // Workers drop freed blocks at their next heartbeat.
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.workers().stream().filter(w -> !w.isClosed())
        .allMatch(w -> w.store().committedBlocks().stream().noneMatch(b -> ids.contains(b.blockId()))));
    assertThat(read(dir + "/f", ReadType.CACHE)).isEqualTo(content);
    await().atMost(Duration.ofSeconds(10)).until(() -> cachedBlocks(dir + "/f") == 3);
    assertThat(read(dir + "/f", ReadType.CACHE)).isEqualTo(content);
  }

  @Test
  @Order(6)
  void concurrentReadersOfAnUncachedBlock_causeOneUfsRead() throws Exception {
    byte[] content = data(13, BLOCK);
    writeStraightToUfs(ufsDir + "/hot", content);
    fs.getStatus(dir + "/hot");
    long before = ufsBlockReads();
    int readers = 8;
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(readers);
    try {
      List<Future<byte[]>> results = new ArrayList<>();
      for (int i = 0; i < readers; i++) {
        Callable<byte[]> task = () -> {
          go.await();
          return read(dir + "/hot", ReadType.CACHE);
        };
        results.add(pool.submit(task));
      }
      go.countDown();
      for (Future<byte[]> r : results) {
        assertThat(r.get()).isEqualTo(content);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(ufsBlockReads() - before).isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> cachedBlocks(dir + "/hot") == 1);
  }

  @Test
  @Order(7)
  void persist_ofAMustCacheFile_writesItToTheUfs() throws Exception {
    byte[] content = data(17, LENGTH);
    write(dir + "/late", content, WriteType.MUST_CACHE);
    assertThat(fs.persist(dir + "/late", Duration.ofSeconds(60)).persistenceState()).isEqualTo("PERSISTED");
    assertThat(readStraightFromUfs(ufsDir + "/late")).isEqualTo(content);
  }

  /**
   * A file rewritten straight in the UFS at the same length while one of its blocks is cached: a read never mixes the
   * cached old bytes with new ones from the UFS (the worker compares the UFS mtime with the one Strata recorded and
   * refuses the uncached block); once a sync picks up the change, the file reads as the UFS now holds it.
   */
  @Test
  @Order(8)
  void aFileRewrittenInTheUfsAtTheSameLength_isNeverReadMixed() throws Exception {
    String path = dir + "/same";
    byte[] before = data(11, LENGTH);
    write(path, before, WriteType.THROUGH);
    try (FileInStream in = fs.openFile(path, OpenFileOptions.defaults().withReadType(ReadType.CACHE))) {
      assertThat(in.readNBytes(100)).isEqualTo(java.util.Arrays.copyOf(before, 100)); // caches block 0 only
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> cachedBlocks(path) == 1);
    long recorded = ufs().getStatus(ufsDir + "/same").modificationTimeMs();
    byte[] after = data(12, LENGTH);
    do {
      Thread.sleep(5); // a new mtime, at the UFS's millisecond resolution
      writeStraightToUfs(ufsDir + "/same", after);
    } while (ufs().getStatus(ufsDir + "/same").modificationTimeMs() == recorded);

    org.assertj.core.api.Assertions.assertThatThrownBy(() -> read(path, ReadType.CACHE))
        .hasMessageContaining("changed in the under file system")
        .hasMessageContaining("loadMetadata");
    assertThat(fs.getStatus(path, GetStatusOptions.defaults().withSyncIntervalMs(0)).length()).isEqualTo(LENGTH);
    assertThat(read(path, ReadType.CACHE)).isEqualTo(after);
  }

  @Test
  @Order(100)
  void aCacheThroughFile_isReadByteExact_afterEveryWorkerIsGone_fromANewWorkerWithEmptyTiers() throws Exception {
    byte[] content = data(19, LENGTH);
    write(dir + "/durable", content, WriteType.CACHE_THROUGH);
    int n = cluster.workers().size();
    for (int i = 0; i < n; i++) {
      cluster.stopWorker(i);
    }
    int fresh = cluster.addWorker();
    assertThat(cluster.worker(fresh).store().committedBlocks()).isEmpty();
    await().atMost(Duration.ofSeconds(30)).until(() -> fs.getWorkers().size() == 1 && cachedBlocks(dir + "/durable") == 0);
    assertThat(read(dir + "/durable", ReadType.CACHE)).isEqualTo(content);
    await().atMost(Duration.ofSeconds(10)).until(() -> cachedBlocks(dir + "/durable") == 3);
  }
}
