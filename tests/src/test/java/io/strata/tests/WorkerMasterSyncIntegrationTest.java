package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.master.file.FileSystemMaster;
import io.strata.minicluster.LocalStrataCluster;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The worker holds no lock across its heartbeat RPC: while a heartbeat is stuck at the master, a client
 * still writes and completes a file on that worker (its block commits go through), and once the heartbeat
 * returns the worker's blocks are all still listed. A real master and worker in this JVM; the heartbeat is
 * held at the master by holding the monitor its handler needs (the persist scheduler's, which block
 * commits and completes never take).
 */
class WorkerMasterSyncIntegrationTest {
  private static final int BLOCK = 64 * 1024;
  private LocalStrataCluster cluster;
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void stop() {
    release.countDown();
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aHeartbeatStuckAtTheMaster_doesNotBlockBlockCommits() throws Exception {
    cluster = LocalStrataCluster.builder().workers(1)
        .set("strata.user.block.size.default", BLOCK)
        .set("strata.worker.heartbeat.interval", "50ms")
        .set("strata.network.rpc.timeout", "60s") // the stuck heartbeat outlasts the test's bound
        .build().start();
    FileSystem fs = cluster.client();
    byte[] before = write(fs, "/before", 1);

    FileSystemMaster master = cluster.master().fileSystemMaster();
    java.lang.reflect.Field f = FileSystemMaster.class.getDeclaredField("persister");
    f.setAccessible(true);
    Object scheduler = f.get(master);
    CountDownLatch held = new CountDownLatch(1);
    Thread holder = new Thread(() -> {
      synchronized (scheduler) {
        held.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }, "holds-persist-scheduler");
    holder.setDaemon(true);
    holder.start();
    assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
    // A heartbeat handler is now stuck at the master, so the worker's heartbeat RPC is in flight.
    await().atMost(Duration.ofSeconds(10)).until(() -> blockedOn(scheduler) != null);

    CompletableFuture<byte[]> during = CompletableFuture.supplyAsync(() -> {
      try {
        return write(fs, "/during", 2);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    byte[] written;
    try {
      written = during.get(10, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("A write did not finish in 10 s while a heartbeat was stuck at the master: the "
          + "worker holds a lock across its heartbeat RPC; threads:\n" + Arrays.stream(ManagementFactory.getThreadMXBean()
          .dumpAllThreads(true, true)).map(ThreadInfo::toString).collect(java.util.stream.Collectors.joining()));
    }
    assertThat(blockedOn(scheduler)).as("the heartbeat was still stuck while the file was written").isNotNull();
    assertThat(read(fs, "/during")).isEqualTo(written);

    release.countDown();
    holder.join(10_000);
    // Heartbeats resume; every block of both files is still listed on the worker, and reads back.
    await().atMost(Duration.ofSeconds(10)).until(() -> blockedOn(scheduler) == null);
    for (String p : new String[] {"/before", "/during"}) {
      assertThat(fs.getBlockLocations(p)).allSatisfy(b -> assertThat(b.locations()).hasSize(1));
    }
    assertThat(read(fs, "/before")).isEqualTo(before);
    assertThat(read(fs, "/during")).isEqualTo(written);
  }

  /**
   * Frees and re-caches racing heartbeats every 10 ms (commits of new copies crossing heartbeats that
   * carry the old copies' removals, and replies asking removals): once quiet, the master lists a block on
   * the worker exactly when the worker holds it, and the file reads back.
   */
  @Test
  void freesAndRecachesRacingHeartbeats_leaveMasterAndWorkerAgreeing() throws Exception {
    cluster = LocalStrataCluster.builder().workers(1)
        .set("strata.user.block.size.default", BLOCK)
        .set("strata.worker.heartbeat.interval", "10ms")
        .build().start();
    FileSystem fs = cluster.client();
    byte[] data = new byte[BLOCK * 4];
    new Random(7).nextBytes(data);
    try (FileOutStream out = fs.createFile("/f", CreateFileOptions.defaults().withWriteType(WriteType.CACHE_THROUGH))) {
      out.write(data);
    }
    for (int i = 0; i < 40; i++) {
      fs.free("/f", false, false);
      if (i % 2 == 0) {
        assertThat(read(fs, "/f")).isEqualTo(data); // a default read caches the blocks again
      }
    }
    assertThat(read(fs, "/f")).isEqualTo(data);
    var store = cluster.worker(0).store();
    await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
      for (var b : fs.getBlockLocations("/f")) {
        boolean held = store.committedBlocks().stream().anyMatch(m -> m.blockId() == b.blockId());
        assertThat(b.locations().isEmpty()).as("block %d listed by the master: %s, held by the worker: %s",
            b.blockId(), b.locations(), held).isEqualTo(!held);
      }
    });
    assertThat(read(fs, "/f")).isEqualTo(data);
  }

  /** A thread blocked on {@code monitor}, or null. */
  private static ThreadInfo blockedOn(Object monitor) {
    int id = System.identityHashCode(monitor);
    return Arrays.stream(ManagementFactory.getThreadMXBean().dumpAllThreads(false, false))
        .filter(t -> t.getThreadState() == Thread.State.BLOCKED && t.getLockInfo() != null
            && t.getLockInfo().getIdentityHashCode() == id)
        .findFirst().orElse(null);
  }

  @Test
  void aWorkerWithMoreBlocksThanAMessageHolds_registersAgain_andReportsThemAll() throws Exception {
    // 64 KB messages: a registration carries 1,024 blocks; 5,000 one-KB blocks took about 75 KB in one, refused
    // for its size at every beat, so the worker never came back after the master restarted.
    cluster = LocalStrataCluster.builder().workers(1)
        .set("strata.network.max.message.size", "64KB")
        .set("strata.master.block.size.min", "1KB")
        .set("strata.worker.heartbeat.interval", "100ms")
        .build().start();
    FileSystem fs = cluster.client();
    int files = 250;
    int blocksEach = 20;
    for (int i = 0; i < files; i++) {
      try (FileOutStream out = fs.createFile("/many/f" + i, CreateFileOptions.defaults().withBlockSize(1024)
          .withWriteType(WriteType.MUST_CACHE).withRecursive(true))) {
        out.write(new byte[blocksEach * 1024]);
      }
    }
    assertThat(cluster.worker(0).store().committedBlocks()).hasSize(files * blocksEach);
    cluster.restartMaster(); // the worker registers again, with every block it holds
    FileSystem after = cluster.client();
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      for (int i = 0; i < files; i++) {
        for (io.strata.client.FileBlockInfo b : after.getBlockLocations("/many/f" + i)) {
          if (b.locations().isEmpty()) {
            return false;
          }
        }
      }
      return true;
    });
    try (FileInStream in = after.openFile("/many/f" + (files - 1))) {
      assertThat(in.readAllBytes()).hasSize(blocksEach * 1024);
    }
  }

  private static byte[] write(FileSystem fs, String path, long seed) throws java.io.IOException {
    byte[] data = new byte[BLOCK * 2 + 100];
    new Random(seed).nextBytes(data);
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withWriteType(WriteType.MUST_CACHE))) {
      out.write(data);
    }
    return data;
  }

  private static byte[] read(FileSystem fs, String path) throws java.io.IOException {
    try (FileInStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }
}
