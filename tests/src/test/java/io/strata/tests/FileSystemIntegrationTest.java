package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.DirectoryNotEmptyException;
import io.strata.common.exception.NotFoundException;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** End-to-end file system behaviour over a real master and three real workers in this JVM. */
class FileSystemIntegrationTest {
  private static final long MB = 1 << 20;
  private static LocalStrataCluster cluster;
  private static FileSystem fs;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(3).set("strata.worker.tier.0.quota", "1GB").build().start();
    fs = cluster.client();
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  /** Deterministic content: byte i of a file with this seed. */
  static byte[] data(long seed, int length) {
    byte[] b = new byte[length];
    new Random(seed).nextBytes(b);
    return b;
  }

  static void writeFile(String path, byte[] content, long blockSize) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(blockSize))) {
      out.write(content);
    }
  }

  static byte[] readAll(String path) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }

  @Test
  void largeFile_spansBlocksOnSeveralWorkers_andReadsBackByteExact() throws Exception {
    long blockSize = 16 * MB;
    long total = 200 * MB;
    MessageDigest written = MessageDigest.getInstance("SHA-256");
    Random random = new Random(42);
    byte[] buf = new byte[(int) (3 * MB + 12345)];
    try (FileOutStream out = fs.createFile("/big/file.bin", CreateFileOptions.defaults().withBlockSize(blockSize))) {
      long left = total;
      while (left > 0) {
        int n = (int) Math.min(buf.length, left);
        random.nextBytes(buf);
        out.write(buf, 0, n);
        written.update(buf, 0, n);
        left -= n;
      }
    }
    URIStatus status = fs.getStatus("/big/file.bin");
    assertThat(status.length()).isEqualTo(total);
    assertThat(status.complete()).isTrue();

    MessageDigest read = MessageDigest.getInstance("SHA-256");
    long count = 0;
    try (FileInStream in = fs.openFile("/big/file.bin")) {
      byte[] r = new byte[1 << 20];
      int n;
      while ((n = in.read(r)) > 0) {
        read.update(r, 0, n);
        count += n;
      }
    }
    assertThat(count).isEqualTo(total);
    assertThat(read.digest()).isEqualTo(written.digest());

    // 13 blocks (12 full + 1 of 8 MiB), placed on more than one worker.
    Set<String> workers = new HashSet<>();
    int blocks = 0;
    for (int w = 0; w < 3; w++) {
      int held = (int) cluster.worker(w).store().committedBlocks().stream()
          .filter(b -> io.strata.common.id.BlockId.fileId(b.blockId()) == status.id()).count();
      if (held > 0) {
        workers.add("w" + w);
      }
      blocks += held;
    }
    assertThat(blocks).isEqualTo(13);
    assertThat(workers).hasSizeGreaterThan(1);
    fs.delete("/big", DeleteOptions.defaults().withRecursive(true));
  }

  @Test
  void positionedReads_atBlockBoundaries_returnTheRightBytes() throws Exception {
    int blockSize = 64 * 1024;
    byte[] content = data(7, blockSize * 4 + 100);
    writeFile("/pread/f", content, blockSize);
    try (FileInStream in = fs.openFile("/pread/f")) {
      long[] positions = {0, blockSize - 1, blockSize, blockSize + 1, 2L * blockSize - 3, 3L * blockSize,
          4L * blockSize - 1, 4L * blockSize, content.length - 1};
      for (long p : positions) {
        int len = (int) Math.min(10, content.length - p);
        byte[] got = new byte[len];
        assertThat(in.positionedRead(p, got, 0, len)).isEqualTo(len);
        byte[] expected = java.util.Arrays.copyOfRange(content, (int) p, (int) p + len);
        assertThat(got).as("bytes at %d", p).isEqualTo(expected);
      }
      // A read across three blocks in one call.
      byte[] span = new byte[blockSize * 2 + 20];
      in.readFully(blockSize - 10, span, 0, span.length);
      assertThat(span).isEqualTo(java.util.Arrays.copyOfRange(content, blockSize - 10, blockSize - 10 + span.length));
      // Positioned reads leave the stream position alone; seek then sequential read continues correctly.
      assertThat(in.getPos()).isZero();
      in.seek(2L * blockSize - 5);
      byte[] seq = new byte[10];
      int got = 0;
      while (got < 10) {
        got += in.read(seq, got, 10 - got);
      }
      assertThat(seq).isEqualTo(java.util.Arrays.copyOfRange(content, 2 * blockSize - 5, 2 * blockSize + 5));
      assertThat(in.getPos()).isEqualTo(2L * blockSize + 5);
      // At EOF: -1 from both kinds of read.
      assertThat(in.positionedRead(content.length, new byte[4], 0, 4)).isEqualTo(-1);
      in.seek(content.length);
      assertThat(in.read()).isEqualTo(-1);
    }
  }

  @Test
  void concurrentWriters_ofDifferentFiles_eachReadBackTheirOwnBytes() throws Exception {
    int writers = 8;
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < writers; i++) {
        final int id = i;
        futures.add(pool.submit(() -> {
          byte[] content = data(100 + id, 300_000 + id * 7919);
          writeFile("/concurrent/f" + id, content, 128 * 1024);
          return null;
        }));
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    for (int i = 0; i < writers; i++) {
      assertThat(readAll("/concurrent/f" + i)).isEqualTo(data(100 + i, 300_000 + i * 7919));
    }
    assertThat(fs.listStatus("/concurrent")).hasSize(writers);
  }

  @Test
  void renameAndDelete_ofDirectoriesWithFiles() throws Exception {
    fs.createDirectory("/tree/a/b", CreateDirectoryOptions.defaults().withRecursive(true));
    writeFile("/tree/a/f1", data(1, 1000), 65_536);
    writeFile("/tree/a/b/f2", data(2, 150_000), 65_536);

    fs.rename("/tree/a", "/tree/moved");
    assertThat(fs.exists("/tree/a")).isFalse();
    assertThat(fs.exists("/tree/a/b/f2")).isFalse();
    assertThat(readAll("/tree/moved/b/f2")).isEqualTo(data(2, 150_000));
    assertThat(fs.getStatus("/tree/moved/f1").path()).isEqualTo("/tree/moved/f1");

    fs.rename("/tree/moved/b/f2", "/tree/f2-renamed");
    assertThat(readAll("/tree/f2-renamed")).isEqualTo(data(2, 150_000));

    assertThatThrownBy(() -> fs.rename("/tree/moved", "/tree/moved/b/inside"))
        .isInstanceOf(io.strata.common.exception.InvalidArgumentException.class)
        .hasMessageContaining("inside the source");
    assertThatThrownBy(() -> fs.rename("/tree/moved/f1", "/tree/f2-renamed"))
        .isInstanceOf(AlreadyExistsException.class);
    assertThatThrownBy(() -> fs.delete("/tree/moved")).isInstanceOf(DirectoryNotEmptyException.class);

    long f1 = fs.getStatus("/tree/moved/f1").id();
    assertThat(blocksOfFile(f1)).isEqualTo(1);
    fs.delete("/tree/moved", DeleteOptions.defaults().withRecursive(true));
    assertThat(fs.exists("/tree/moved")).isFalse();
    assertThat(fs.exists("/tree/moved/f1")).isFalse();
    assertThatThrownBy(() -> fs.getStatus("/tree/moved/f1")).isInstanceOf(NotFoundException.class);
    // The deleted file's block leaves its worker at the next heartbeat.
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .until(() -> blocksOfFile(f1) == 0);
    assertThat(readAll("/tree/f2-renamed")).isEqualTo(data(2, 150_000));
  }

  /**
   * A file renamed (or its directory renamed) while it is being written completes where it is then, with every byte
   * written, as HDFS completes by inode: the close succeeds, the old path is gone, and a CACHE_THROUGH file's UFS copy
   * lands at the new path. Before, the complete looked the file up by its old path, failed, and lease recovery
   * deleted the renamed file and its bytes minutes later.
   */
  @Test
  void aFileRenamedWhileWritten_completesAtItsNewPath_withEveryByte() throws Exception {
    fs.createDirectory("/renamed/dir", CreateDirectoryOptions.defaults().withRecursive(true));
    byte[] first = data(31, 200_000);
    byte[] second = data(32, 150_000);
    try (FileOutStream out = fs.createFile("/renamed/src", CreateFileOptions.defaults().withBlockSize(65_536)
        .withWriteType(io.strata.client.options.WriteType.MUST_CACHE))) {
      out.write(first, 0, 100_000);
      fs.rename("/renamed/src", "/renamed/dst");
      out.write(first, 100_000, 100_000);
    }
    assertThat(fs.exists("/renamed/src")).isFalse();
    assertThat(readAll("/renamed/dst")).isEqualTo(first);

    try (FileOutStream out = fs.createFile("/renamed/dir/f", CreateFileOptions.defaults().withBlockSize(65_536)
        .withWriteType(io.strata.client.options.WriteType.CACHE_THROUGH))) {
      out.write(second, 0, 30_000); // less than a chunk: the UFS copy starts after the rename
      fs.rename("/renamed/dir", "/renamed/moved");
      out.write(second, 30_000, 120_000);
    }
    assertThat(fs.getStatus("/renamed/moved/f").persistenceState()).isEqualTo("PERSISTED");
    assertThat(readAll("/renamed/moved/f")).isEqualTo(second);
    assertThat(java.nio.file.Files.readAllBytes(cluster.rootUfsDir().resolve("renamed/moved/f"))).isEqualTo(second);
    assertThat(fs.exists("/renamed/dir")).isFalse();

    // The directory renamed after the UFS copy started (its temporary copy moved with the directory).
    fs.createDirectory("/renamed/dir2", CreateDirectoryOptions.defaults());
    try (FileOutStream out = fs.createFile("/renamed/dir2/g", CreateFileOptions.defaults().withBlockSize(65_536)
        .withWriteType(io.strata.client.options.WriteType.CACHE_THROUGH))) {
      out.write(second, 0, 140_000); // two chunks sent: the worker writes the UFS copy
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> {
        try (var names = java.nio.file.Files.list(cluster.rootUfsDir().resolve("renamed/dir2"))) {
          return names.anyMatch(n -> n.getFileName().toString().startsWith(".g.strata-"));
        }
      });
      fs.rename("/renamed/dir2", "/renamed/moved2");
      out.write(second, 140_000, 10_000);
    }
    assertThat(readAll("/renamed/moved2/g")).isEqualTo(second);
    assertThat(java.nio.file.Files.readAllBytes(cluster.rootUfsDir().resolve("renamed/moved2/g")))
        .isEqualTo(second);
  }

  private static long blocksOfFile(long fileId) {
    long n = 0;
    for (int w = 0; w < cluster.workers().size(); w++) {
      n += cluster.worker(w).store().committedBlocks().stream()
          .filter(b -> io.strata.common.id.BlockId.fileId(b.blockId()) == fileId).count();
    }
    return n;
  }

  @Test
  void listing_ofTenThousandEntries_returnsEveryNameInOrder() throws Exception {
    fs.createDirectory("/many");
    for (int i = 0; i < 10_000; i++) {
      fs.createDirectory(String.format("/many/d%05d", i));
    }
    List<URIStatus> all = fs.listStatus("/many");
    assertThat(all).hasSize(10_000);
    for (int i = 0; i < all.size(); i++) {
      assertThat(all.get(i).name()).isEqualTo(String.format("d%05d", i));
      assertThat(all.get(i).path()).isEqualTo(String.format("/many/d%05d", i));
    }
    assertThat(fs.getStatus("/many").childCount()).isEqualTo(10_000);
    fs.delete("/many", DeleteOptions.defaults().withRecursive(true));
  }

  @Test
  void recursiveListing_includesNestedEntries() throws Exception {
    fs.createDirectory("/rec/x/y", CreateDirectoryOptions.defaults().withRecursive(true));
    writeFile("/rec/x/y/z", data(3, 10), 65_536);
    writeFile("/rec/top", data(4, 10), 65_536);
    List<String> paths = new ArrayList<>();
    for (URIStatus s : fs.listStatus("/rec", ListStatusOptions.defaults().withRecursive(true))) {
      paths.add(s.path());
    }
    assertThat(paths).containsExactlyInAnyOrder("/rec/top", "/rec/x", "/rec/x/y", "/rec/x/y/z");
  }

  @Test
  void emptyFile_isCompleteWithNoBlocks() throws Exception {
    fs.createFile("/empty").close();
    URIStatus s = fs.getStatus("/empty");
    assertThat(s.complete()).isTrue();
    assertThat(s.length()).isZero();
    assertThat(readAll("/empty")).isEmpty();
  }
}
