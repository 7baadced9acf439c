package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.ClientKeys;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's local page cache on a real master and worker (short-circuit off, so every read of Strata is a
 * ReadBlock call the worker counts): a second read is served from the pages, a corrupt page is dropped and
 * read again byte-exact, the directory stays within its quota and evicts by the policy, a new client on the
 * same directory serves the old one's pages, and a file rewritten at the same path never returns old pages.
 */
class PageCacheIntegrationTest {
  private static final int PAGE = 4096;
  private static final int PAGE_FILE = PAGE + 16;

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set(ClientKeys.WRITE_TYPE_DEFAULT.name(), WriteType.MUST_CACHE.name()).build().start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static FileSystem client(Path dir, long quota, String eviction) {
    Map<String, String> s = new HashMap<>();
    s.put("strata.user.shortcircuit.mode", "off");
    s.put(ClientKeys.PAGE_CACHE_ENABLED.name(), "true");
    s.put(ClientKeys.PAGE_CACHE_DIR.name(), dir.toString());
    s.put(ClientKeys.PAGE_CACHE_PAGE_SIZE.name(), Integer.toString(PAGE));
    s.put(ClientKeys.PAGE_CACHE_SIZE.name(), Long.toString(quota));
    s.put(ClientKeys.PAGE_CACHE_EVICTION.name(), eviction);
    return FileSystem.create(cluster.clientConf().withAll(s));
  }

  private static FileSystem client(Path dir) {
    return client(dir, 1 << 20, "LRU");
  }

  private static byte[] data(int length, long seed) {
    byte[] data = new byte[length];
    new Random(seed).nextBytes(data);
    return data;
  }

  private static void write(String path, byte[] data) throws IOException {
    try (FileOutStream out = cluster.client().createFile(path, CreateFileOptions.defaults().withBlockSize(64 * 1024))) {
      out.write(data);
    }
  }

  /** ReadBlock calls the worker received, over TCP and its domain socket, and its block transfers. */
  private static long workerReads() {
    return cluster.worker(0).dataCalls("ReadBlock", false) + cluster.worker(0).dataCalls("ReadBlock", true)
        + cluster.worker(0).transfer().requests();
  }

  /** Reads the whole file sequentially, in reads of an odd size that cross page boundaries. */
  private static byte[] readAll(FileSystem fs, String path) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      byte[] all = new byte[(int) in.length()];
      int done = 0;
      while (done < all.length) {
        int n = in.read(all, done, Math.min(1000, all.length - done));
        assertThat(n).isPositive();
        done += n;
      }
      assertThat(in.read()).isEqualTo(-1);
      return all;
    }
  }

  private static byte[] pread(FileSystem fs, String path, long position, int len) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      byte[] b = new byte[len];
      in.readFully(position, b, 0, len);
      return b;
    }
  }

  /** The page files in {@code dir} of the file at {@code path}, by page index. */
  private static List<Long> pagesOf(Path dir, String path) throws IOException {
    String prefix = cluster.client().getStatus(path).id() + "_";
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix) && n.endsWith(".page"))
          .map(n -> Long.parseLong(n.substring(n.lastIndexOf('_') + 1, n.length() - ".page".length())))
          .sorted().toList();
    }
  }

  private static long pageBytes(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().endsWith(".page")).mapToLong(p -> p.toFile().length()).sum();
    }
  }

  @Test
  void secondRead_isServedFromLocalPages_withoutReadingTheWorker() throws IOException {
    Path dir = tmp.resolve("second");
    byte[] data = data(5 * PAGE + 123, 1);
    write("/pc/second", data);
    try (FileSystem fs = client(dir)) {
      long before = workerReads();
      assertThat(readAll(fs, "/pc/second")).isEqualTo(data);
      long afterFirst = workerReads();
      assertThat(afterFirst).as("the first read reads the worker").isGreaterThan(before);
      assertThat(pagesOf(dir, "/pc/second")).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);

      assertThat(readAll(fs, "/pc/second")).isEqualTo(data);
      assertThat(pread(fs, "/pc/second", PAGE - 7, 2 * PAGE + 20))
          .isEqualTo(java.util.Arrays.copyOfRange(data, PAGE - 7, 3 * PAGE + 13));
      assertThat(pread(fs, "/pc/second", 5 * PAGE, 123))
          .isEqualTo(java.util.Arrays.copyOfRange(data, 5 * PAGE, 5 * PAGE + 123));
      assertThat(workerReads()).as("served from the local pages").isEqualTo(afterFirst);
    }
  }

  @Test
  void shortCircuitReads_fillThePages_andTheSecondReadOpensNoBlock() throws IOException {
    Path dir = tmp.resolve("shortcircuit");
    byte[] data = data(3 * PAGE + 5, 11);
    write("/pc/shortcircuit", data);
    Map<String, String> s = Map.of(ClientKeys.PAGE_CACHE_ENABLED.name(), "true",
        ClientKeys.PAGE_CACHE_DIR.name(), dir.toString(), ClientKeys.PAGE_CACHE_PAGE_SIZE.name(), "4KB");
    try (FileSystem fs = FileSystem.create(cluster.clientConf().withAll(s))) {
      long opens;
      try (FileInStream in = fs.openFile("/pc/shortcircuit")) {
        byte[] all = new byte[data.length];
        in.readFully(0, all, 0, all.length);
        assertThat(all).isEqualTo(data);
        opens = in.shortCircuit().opens();
        assertThat(opens).as("the worker is on this host: read short-circuit").isPositive();
      }
      try (FileInStream in = fs.openFile("/pc/shortcircuit")) {
        byte[] all = new byte[data.length];
        assertThat(in.read(all, 0, all.length)).isEqualTo(data.length);
        assertThat(all).isEqualTo(data);
        assertThat(in.shortCircuit().opens()).as("served from the pages").isEqualTo(opens);
      }
    }
  }

  @Test
  void positionedReadMiss_storesThePage_andTheNextPositionedReadHitsIt() throws IOException {
    Path dir = tmp.resolve("pread");
    byte[] data = data(3 * PAGE, 2);
    write("/pc/pread", data);
    try (FileSystem fs = client(dir)) {
      assertThat(pread(fs, "/pc/pread", PAGE + 5, 10)).isEqualTo(java.util.Arrays.copyOfRange(data, PAGE + 5, PAGE + 15));
      assertThat(pagesOf(dir, "/pc/pread")).containsExactly(1L);
      long reads = workerReads();
      assertThat(pread(fs, "/pc/pread", PAGE, PAGE)).isEqualTo(java.util.Arrays.copyOfRange(data, PAGE, 2 * PAGE));
      assertThat(workerReads()).isEqualTo(reads);
    }
  }

  @Test
  void corruptPageOnDisk_isDropped_andReadAgainByteExact() throws IOException {
    Path dir = tmp.resolve("corrupt");
    byte[] data = data(3 * PAGE, 3);
    write("/pc/corrupt", data);
    try (FileSystem fs = client(dir)) {
      assertThat(readAll(fs, "/pc/corrupt")).isEqualTo(data);
      long id = cluster.client().getStatus("/pc/corrupt").id();
      Path page1;
      try (Stream<Path> files = Files.list(dir)) {
        page1 = files.filter(p -> p.getFileName().toString().startsWith(id + "_")
            && p.getFileName().toString().endsWith("_1.page")).findFirst().orElseThrow();
      }
      byte[] raw = Files.readAllBytes(page1);
      raw[16 + 100] ^= (byte) 0x5a;
      Files.write(page1, raw);

      long reads = workerReads();
      assertThat(readAll(fs, "/pc/corrupt")).isEqualTo(data);
      assertThat(workerReads()).as("the corrupt page is read from Strata again").isGreaterThan(reads);
      // The page was stored again, sound: the next read needs no worker.
      reads = workerReads();
      assertThat(readAll(fs, "/pc/corrupt")).isEqualTo(data);
      assertThat(workerReads()).isEqualTo(reads);
      assertThat(Files.readAllBytes(page1)).isNotEqualTo(raw);
    }
  }

  @Test
  void readingMoreThanTheQuota_keepsTheDirWithinIt_andEvictsTheLeastRecentlyRead() throws IOException {
    Path dir = tmp.resolve("quota");
    byte[] data = data(10 * PAGE, 4);
    write("/pc/quota", data);
    long quota = 4L * PAGE_FILE;
    try (FileSystem fs = client(dir, quota, "LRU")) {
      for (int i = 0; i < 4; i++) {
        pread(fs, "/pc/quota", (long) i * PAGE, 1);
      }
      pread(fs, "/pc/quota", 0, 1); // page 0 is now the most recently read
      pread(fs, "/pc/quota", 4L * PAGE, 1);
      assertThat(pagesOf(dir, "/pc/quota")).containsExactly(0L, 2L, 3L, 4L);

      assertThat(readAll(fs, "/pc/quota")).isEqualTo(data);
      assertThat(pageBytes(dir)).isLessThanOrEqualTo(quota);
      assertThat(pagesOf(dir, "/pc/quota")).containsExactly(6L, 7L, 8L, 9L);
    }
  }

  @Test
  void lfu_keepsAPageReadOften_throughAScan() throws IOException {
    Path dir = tmp.resolve("lfu");
    byte[] data = data(10 * PAGE, 5);
    write("/pc/lfu", data);
    long quota = 4L * PAGE_FILE;
    try (FileSystem fs = client(dir, quota, "LFU")) {
      for (int i = 0; i < 4; i++) {
        pread(fs, "/pc/lfu", (long) i * PAGE, 1);
      }
      for (int n = 0; n < 10; n++) {
        pread(fs, "/pc/lfu", 0, 1);
      }
      assertThat(readAll(fs, "/pc/lfu")).isEqualTo(data);
      assertThat(pageBytes(dir)).isLessThanOrEqualTo(quota);
      assertThat(pagesOf(dir, "/pc/lfu")).contains(0L).hasSizeLessThanOrEqualTo(4);
    }
  }

  @Test
  void newClientOnTheSameDir_servesTheOldClientsPages() throws IOException {
    Path dir = tmp.resolve("restart");
    byte[] data = data(4 * PAGE + 1, 6);
    write("/pc/restart", data);
    try (FileSystem fs = client(dir)) {
      assertThat(readAll(fs, "/pc/restart")).isEqualTo(data);
      try (FileSystem second = client(dir)) {
        long reads = workerReads();
        assertThat(readAll(second, "/pc/restart")).isEqualTo(data);
        assertThat(workerReads()).as("the dir is in use: the second client reads Strata").isGreaterThan(reads);
      }
    }
    // A crash left a half-written temp file and a truncated page: both dropped at start.
    Path tmpFile = dir.resolve(".leftover.page.7.tmp");
    Files.write(tmpFile, new byte[10]);
    long id = cluster.client().getStatus("/pc/restart").id();
    Path page4;
    try (Stream<Path> files = Files.list(dir)) {
      page4 = files.filter(p -> p.getFileName().toString().startsWith(id + "_")
          && p.getFileName().toString().endsWith("_4.page")).findFirst().orElseThrow();
    }
    Files.write(page4, new byte[5]);
    try (FileSystem fs = client(dir)) {
      assertThat(Files.exists(tmpFile)).isFalse();
      assertThat(pagesOf(dir, "/pc/restart")).containsExactly(0L, 1L, 2L, 3L);
      long reads = workerReads();
      assertThat(pread(fs, "/pc/restart", 0, 4 * PAGE)).isEqualTo(java.util.Arrays.copyOf(data, 4 * PAGE));
      assertThat(workerReads()).as("pages written by the old client").isEqualTo(reads);
      assertThat(readAll(fs, "/pc/restart")).isEqualTo(data);
    }
    try (FileSystem small = client(dir, 2L * PAGE_FILE, "LRU")) {
      assertThat(pageBytes(dir)).as("the quota holds after the rebuild").isLessThanOrEqualTo(2L * PAGE_FILE);
    }
  }

  @Test
  void streamsOfOneClient_shareTheCacheConcurrently_byteExact_withinTheQuota() throws Exception {
    Path dir = tmp.resolve("concurrent");
    byte[] data = data(12 * PAGE + 77, 10);
    write("/pc/concurrent", data);
    long quota = 6L * PAGE_FILE;
    try (FileSystem fs = client(dir, quota, "LRU")) {
      java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
      try {
        List<java.util.concurrent.Future<Boolean>> results = new java.util.ArrayList<>();
        for (int t = 0; t < 4; t++) {
          int seed = t;
          results.add(pool.submit(() -> {
            Random r = new Random(seed);
            boolean exact = true;
            for (int i = 0; i < 20; i++) {
              if (i % 5 == 0) {
                exact &= java.util.Arrays.equals(readAll(fs, "/pc/concurrent"), data);
              } else {
                int pos = r.nextInt(data.length - 100);
                int len = 1 + r.nextInt(Math.min(3 * PAGE, data.length - pos));
                exact &= java.util.Arrays.equals(pread(fs, "/pc/concurrent", pos, len),
                    java.util.Arrays.copyOfRange(data, pos, pos + len));
              }
            }
            return exact;
          }));
        }
        for (java.util.concurrent.Future<Boolean> f : results) {
          assertThat(f.get(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        }
      } finally {
        pool.shutdownNow();
      }
      assertThat(pageBytes(dir)).isLessThanOrEqualTo(quota);
      try (Stream<Path> files = Files.list(dir)) {
        assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tmp"))).isEmpty();
      }
    }
  }

  @Test
  void fileRewrittenAtTheSamePath_neverReturnsOldPages() throws IOException {
    Path dir = tmp.resolve("rewrite");
    byte[] first = data(2 * PAGE + 9, 7);
    byte[] second = data(2 * PAGE + 9, 8);
    byte[] third = data(PAGE + 1, 9);
    write("/pc/rewrite", first);
    try (FileSystem fs = client(dir)) {
      assertThat(readAll(fs, "/pc/rewrite")).isEqualTo(first);
      cluster.client().delete("/pc/rewrite");
      write("/pc/rewrite", second);
      assertThat(readAll(fs, "/pc/rewrite")).isEqualTo(second);
      assertThat(pread(fs, "/pc/rewrite", 3, 2 * PAGE)).isEqualTo(java.util.Arrays.copyOfRange(second, 3, 3 + 2 * PAGE));
      fs.delete("/pc/rewrite");
      write("/pc/rewrite", third);
      assertThat(readAll(fs, "/pc/rewrite")).isEqualTo(third);
    }
  }

  /**
   * A directory other users may write is not used (their page would be served as file data); a directory the cache
   * makes is the user's alone; a page named in the layout before pages carried their file's creation time is
   * deleted at start (its file id alone could be another cluster's file).
   */
  @Test
  void aDirOthersMayWrite_isNotUsed_aDirItMakesIsTheUsersAlone_andOldPagesGo() throws IOException {
    byte[] data = data(2 * PAGE + 3, 11);
    write("/pc/perm", data);
    Path shared = Files.createDirectories(tmp.resolve("shared"));
    Files.setPosixFilePermissions(shared, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
    try (FileSystem fs = client(shared)) {
      assertThat(readAll(fs, "/pc/perm")).isEqualTo(data);
      long reads = workerReads();
      assertThat(readAll(fs, "/pc/perm")).isEqualTo(data);
      assertThat(workerReads()).as("no page cache: the worker is read again").isGreaterThan(reads);
    }
    assertThat(pageBytes(shared)).isZero();

    Path made = tmp.resolve("made").resolve("pages");
    try (FileSystem fs = client(made)) {
      assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(made)))
          .isEqualTo("rwx------");
      assertThat(readAll(fs, "/pc/perm")).isEqualTo(data);
      assertThat(pagesOf(made, "/pc/perm")).containsExactly(0L, 1L, 2L);
    }
    Path old = made.resolve(cluster.client().getStatus("/pc/perm").id() + "_" + data.length + "_1_0.page");
    Files.write(old, new byte[16]);
    try (FileSystem fs = client(made)) {
      assertThat(old).doesNotExist();
      long reads = workerReads();
      assertThat(readAll(fs, "/pc/perm")).isEqualTo(data);
      assertThat(workerReads()).as("the pages kept from before").isEqualTo(reads);
    }
  }
}
