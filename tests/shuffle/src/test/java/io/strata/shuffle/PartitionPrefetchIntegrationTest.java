package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.common.shuffle.BatchHeader;
import io.strata.minicluster.LocalStrataCluster;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An executor's read-ahead of small sealed partition files ({@link PartitionPrefetch}) on a real cluster: readers
 * of the partitions after a begun one take their files' bytes read ahead, byte for byte what the files hold; a file
 * whose status no longer matches, one too big, one past the byte budget, and one whose read had not started are
 * opened by their readers; a shuffle whose reads ahead mostly run elsewhere stops being read ahead; forgetting a
 * shuffle releases what it held. The files are plain Strata files holding one batch each, as sealed partition
 * files do.
 */
class PartitionPrefetchIntegrationTest {
  private static final int PARTITIONS = 60;
  private static LocalStrataCluster cluster;
  private static FileSystem fs;
  private static DriverEndpoint.Sealed sealed;
  private static final Map<Integer, byte[]> data = new HashMap<>();
  private ThreadPoolExecutor pool;

  @BeforeAll
  static void start() throws Exception {
    cluster = LocalStrataCluster.builder().workers(1).build().start();
    fs = cluster.client();
    Map<Integer, List<String>> files = new HashMap<>();
    Map<String, URIStatus> statuses = new HashMap<>();
    for (int p = 0; p < PARTITIONS; p++) {
      // Partition 7's file is bigger than the tests' largest file read ahead.
      byte[] d = ("records of partition " + p + " ").repeat(p == 7 ? 400 : 3).getBytes(StandardCharsets.UTF_8);
      data.put(p, d);
      String path = "/ra/p" + p;
      try (FileOutStream out = fs.createFile(path)) {
        ByteBuffer h = new BatchHeader(0, 7L, BatchHeader.batchId(0, true), d.length,
            BatchHeader.crc32c(d, 0, d.length)).toBuffer();
        byte[] hb = new byte[h.remaining()];
        h.get(hb);
        out.write(hb);
        out.write(d);
      }
      files.put(p, List.of(path));
      statuses.put(path, fs.getStatusWithBlocks(path));
    }
    sealed = new DriverEndpoint.Sealed(files, statuses, Map.of(), true);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  @AfterEach
  void closePool() {
    if (pool != null) {
      pool.shutdownNow();
    }
  }

  private PartitionPrefetch prefetch(int ahead, long maxBytes) {
    pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
    return new PartitionPrefetch(fs, new PartitionPrefetch.Settings(ahead, maxBytes, 1024), pool);
  }

  /** Waits until the pool went through {@code count} reads ahead in all. */
  private static void awaitReads(PartitionPrefetch ahead, long count) {
    await().atMost(Duration.ofSeconds(20)).until(() -> ahead.readsEnded() >= count);
  }

  /** Reads partition {@code p} as a reduce task does, taking what was read ahead; returns its records. */
  private static List<String> read(PartitionPrefetch ahead, int shuffle, int p, long[] filesReadAhead)
      throws Exception {
    List<String> got = new ArrayList<>();
    try (PartitionReader r = new PartitionReader(fs, sealed.files().get(p), sealed.statuses(), Map.of(0, 7L),
        (path, status) -> ahead.take(shuffle, path, status))) {
      while (r.hasNext()) {
        got.add(new String(r.next(), StandardCharsets.UTF_8));
      }
      assertThat(r.missing(java.util.Set.of(0))).isNull();
      filesReadAhead[0] += r.filesReadAhead();
    }
    return got;
  }

  private static long fileBytes(int p) {
    return BatchHeader.BYTES + data.get(p).length;
  }

  private static String text(int p) {
    return new String(data.get(p), StandardCharsets.UTF_8);
  }

  @Test
  void readersOfTheNextPartitions_takeTheirFilesReadAhead_byteForByte() throws Exception {
    PartitionPrefetch ahead = prefetch(4, 1 << 20);
    ahead.started(1, sealed, 0, 1);
    assertThat(ahead.readsPlanned()).isEqualTo(4); // partitions 1-4, not the begun 0
    awaitReads(ahead, 4);
    assertThat(ahead.reserved()).isEqualTo(fileBytes(1) + fileBytes(2) + fileBytes(3) + fileBytes(4));
    long[] readAhead = new long[1];
    assertThat(read(ahead, 1, 0, readAhead)).containsExactly(text(0));
    assertThat(readAhead[0]).isZero();
    for (int p = 1; p <= 4; p++) {
      ahead.started(1, sealed, p, p + 1);
      assertThat(read(ahead, 1, p, readAhead)).containsExactly(text(p));
    }
    assertThat(readAhead[0]).isEqualTo(4);
    assertThat(ahead.counts(1)).containsExactly(4, 0);
    // The window was topped up once half of it was begun (at 2: 5 and 6; at 4: 7 and 8); 7's file is too big to be
    // read ahead, so its reader opens it.
    assertThat(ahead.readsPlanned()).isEqualTo(4 + 3);
    awaitReads(ahead, 4 + 3);
    readAhead[0] = 0;
    for (int p = 5; p <= 8; p++) {
      ahead.started(1, sealed, p, p + 1);
      assertThat(read(ahead, 1, p, readAhead)).containsExactly(text(p));
    }
    assertThat(readAhead[0]).isEqualTo(3);
    ahead.forget(1);
    assertThat(ahead.reserved()).isZero();
    assertThat(ahead.counts(1)).containsExactly(0, 0);
  }

  /**
   * A read ahead that ends in an Error (say, out of memory) rather than an exception is not left running for ever:
   * the reader waiting for it opens the file itself. The Error is injected around the cluster's real client.
   */
  @Test
  void aReadAheadEndingInAnError_leavesItsFileToItsReader() throws Exception {
    String failing = sealed.files().get(21).get(0);
    FileSystem faulty = (FileSystem) java.lang.reflect.Proxy.newProxyInstance(FileSystem.class.getClassLoader(),
        new Class<?>[] {FileSystem.class}, (proxy, m, args) -> {
          if (m.getName().equals("openFile") && args != null && args.length == 2 && args[0] instanceof URIStatus st
              && st.path().equals(failing)) {
            throw new AssertionError("injected: reading " + failing + " failed with an Error");
          }
          try {
            return m.invoke(fs, args);
          } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
          }
        });
    pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
    PartitionPrefetch ahead = new PartitionPrefetch(faulty, new PartitionPrefetch.Settings(2, 1 << 20, 1024), pool);
    ahead.started(5, sealed, 20, 21); // 21 (its read fails with an Error) and 22, in one pool task
    // The Error ends the pool's task (and its thread, as an uncaught Error does): 22's read never starts.
    await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(20)).until(() -> ahead.readsEnded() >= 1);
    long[] readAhead = new long[1];
    java.util.concurrent.Future<List<String>> got = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "reader-of-21");
      t.setDaemon(true);
      return t;
    }).submit(() -> read(ahead, 5, 21, readAhead));
    assertThat(got.get(20, TimeUnit.SECONDS)).containsExactly(text(21));
    assertThat(readAhead[0]).as("opened by its reader").isZero();
    assertThat(read(ahead, 5, 22, readAhead)).containsExactly(text(22));
    assertThat(readAhead[0]).as("never started, so cancelled and opened by its reader").isZero();
    assertThat(ahead.counts(5)).as("taken (21, whose read had run), wasted (22)").containsExactly(1L, 1L);
    ahead.forget(5);
    assertThat(ahead.reserved()).isZero();
  }

  @Test
  void aFileWhoseStatusChanged_orWhoseReadHadNotStarted_isOpenedByItsReader() throws Exception {
    PartitionPrefetch ahead = prefetch(2, 1 << 20);
    CountDownLatch hold = new CountDownLatch(1);
    pool.execute(() -> {
      try {
        hold.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    ahead.started(2, sealed, 10, 11); // 11 and 12, queued behind the held task
    String p11 = sealed.files().get(11).get(0);
    assertThat(ahead.take(2, p11, sealed.statuses().get(p11))).isNull(); // not started: cancelled
    hold.countDown();
    awaitReads(ahead, 2);
    String p12 = sealed.files().get(12).get(0);
    URIStatus s12 = sealed.statuses().get(p12);
    URIStatus other = new URIStatus(s12.id() + 1, s12.path(), s12.name(), false, s12.length(), s12.blockSize(),
        true, s12.creationTimeMs(), s12.modificationTimeMs(), s12.owner(), s12.group(), s12.mode(), 0, s12.blocks(),
        s12.persistenceState(), false, -1, "", s12.ufsPath(), false, s12.accessTimeMs());
    assertThat(ahead.take(2, p12, other)).isNull(); // read from another file than this reader's
    assertThat(ahead.counts(2)).containsExactly(0, 2);
    assertThat(ahead.reserved()).isZero();
    long[] readAhead = new long[1];
    assertThat(read(ahead, 2, 12, readAhead)).containsExactly(text(12));
    assertThat(readAhead[0]).isZero();
  }

  @Test
  void theByteBudget_boundsWhatIsHeld() throws Exception {
    long one = fileBytes(20);
    PartitionPrefetch ahead = prefetch(8, 3 * one);
    ahead.started(3, sealed, 20, 21);
    awaitReads(ahead, 3);
    assertThat(ahead.reserved()).isEqualTo(3 * one); // 21-23 of 21-28
    long[] readAhead = new long[1];
    ahead.started(3, sealed, 21, 22);
    assertThat(read(ahead, 3, 21, readAhead)).containsExactly(text(21));
    ahead.started(3, sealed, 22, 23); // 21's bytes went to its reader: 24 fits now
    awaitReads(ahead, 4);
    assertThat(ahead.reserved()).isEqualTo(3 * one);
    for (int p = 22; p <= 24; p++) {
      ahead.started(3, sealed, p, p + 1);
      assertThat(read(ahead, 3, p, readAhead)).containsExactly(text(p));
    }
    assertThat(readAhead[0]).isEqualTo(4);
  }

  @Test
  void anEqualSeal_keepsWhatWasReadAhead_aNewSealOfTheShuffle_dropsIt() throws Exception {
    PartitionPrefetch ahead = prefetch(4, 1 << 20);
    ahead.started(6, sealed, 30, 31);
    awaitReads(ahead, 4); // 31-34
    // Another reader's answer: equal, another object (readers ask side by side as the seal ends).
    DriverEndpoint.Sealed same = new DriverEndpoint.Sealed(new HashMap<>(sealed.files()), sealed.statuses(), Map.of(),
        true);
    ahead.started(6, same, 31, 32);
    long[] readAhead = new long[1];
    assertThat(read(ahead, 6, 31, readAhead)).containsExactly(text(31));
    assertThat(readAhead[0]).isEqualTo(1);
    // The map stage ran again and its seal names other files: what was read of the old one is dropped unread.
    Map<Integer, List<String>> moved = new HashMap<>(sealed.files());
    moved.put(33, sealed.files().get(40));
    ahead.started(6, new DriverEndpoint.Sealed(moved, sealed.statuses(), Map.of(), true), 32, 33);
    String p32 = sealed.files().get(32).get(0); // read ahead of the old seal; begun, so not read for the new one
    assertThat(ahead.take(6, p32, sealed.statuses().get(p32))).isNull();
    assertThat(ahead.counts(6)).containsExactly(0, 0); // a new seal counts from nothing
  }

  @Test
  void anExecutorRunningAThirdOfThePartitions_stopsReadingAhead() throws Exception {
    PartitionPrefetch ahead = prefetch(4, 1 << 20);
    long[] readAhead = new long[1];
    int p = 0;
    // Runs partitions 0, 3, 6, ...: two of every three read ahead are run "elsewhere".
    for (; p < PARTITIONS - 6 && ahead.counts(4)[1] < PartitionPrefetch.WASTE_MIN + 4; p += 3) {
      ahead.started(4, sealed, p, p + 1);
      awaitReads(ahead, ahead.readsPlanned());
      assertThat(read(ahead, 4, p, readAhead)).containsExactly(text(p));
    }
    long[] counts = ahead.counts(4);
    assertThat(counts[1]).isGreaterThanOrEqualTo(PartitionPrefetch.WASTE_MIN).isGreaterThan(counts[0]);
    assertThat(ahead.reserved()).isZero();
    long before = ahead.readsPlanned();
    ahead.started(4, sealed, p, p + 1);
    assertThat(ahead.readsPlanned()).isEqualTo(before); // off for this shuffle
    assertThat(read(ahead, 4, p, readAhead)).containsExactly(text(p));
    // Another shuffle is read ahead all the same.
    ahead.started(5, sealed, 0, 1);
    assertThat(ahead.readsPlanned()).isEqualTo(before + 4);
  }
}
