package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.WorkerState;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.store.HangingUnlink;
import java.io.IOException;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A block removal the master orders (its file deleted) whose unlink hangs, as on a dying disk, does not stop the
 * worker's heartbeats: the master keeps it live past its worker timeout (before, the removal ran on the heartbeat
 * thread, no heartbeat went out while the unlink hung, and the master declared the worker lost and dropped every
 * location it held). Once the unlink ends the block is gone and reported, so the master stops asking. A real master
 * and worker in this JVM; the worker's store unlinks through a {@link HangingUnlink} that holds the block's unlink on a
 * latch.
 */
class RemovalOffTheHeartbeatIntegrationTest {
  private static final int BLOCK = 64 * 1024;
  private static final Duration WORKER_TIMEOUT = Duration.ofSeconds(2);

  /** The worker's fsync, whose unlink of the doomed block's file hangs once named. */
  private final HangingUnlink dyingDisk = new HangingUnlink();
  private LocalStrataCluster cluster;

  @AfterEach
  void stop() {
    dyingDisk.release.countDown();
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aMasterOrderedRemovalWhoseUnlinkHangs_doesNotStopHeartbeats() throws Exception {
    cluster = LocalStrataCluster.builder().workers(1).workerDurability(dyingDisk)
        .set("strata.user.block.size.default", BLOCK)
        .set("strata.worker.heartbeat.interval", "100ms")
        .set("strata.master.worker.timeout", WORKER_TIMEOUT.toMillis() + "ms")
        .build().start();
    FileSystem fs = cluster.client();
    byte[] kept = write(fs, "/kept", 1);
    write(fs, "/doomed", 2);
    long doomed = fs.getBlockLocations("/doomed").get(0).blockId();
    BlockMaster blocks = cluster.master().fileSystemMaster().blockMaster();
    long workerId = cluster.worker(0).workerId();

    dyingDisk.hang(Long.toString(doomed));
    fs.delete("/doomed"); // the next heartbeat reply asks the worker to remove the block
    assertThat(dyingDisk.unlinking.await(10, TimeUnit.SECONDS)).as("the worker reached the block's unlink").isTrue();
    long hungAt = System.currentTimeMillis();

    // For longer than the master's worker timeout the unlink hangs, and the worker stays live, heartbeating.
    await("the worker stays live at the master while its unlink hangs").during(WORKER_TIMEOUT.plusSeconds(1))
        .atMost(WORKER_TIMEOUT.plusSeconds(5))
        .until(() -> live(blocks, workerId) != null);
    assertThat(blocks.lostWorkers()).isEmpty();
    assertThat(live(blocks, workerId).lastHeartbeatMs()).as("heartbeats after the unlink began to hang")
        .isGreaterThan(hungAt + WORKER_TIMEOUT.toMillis());
    assertThat(cluster.worker(0).workerId()).as("never registered again").isEqualTo(workerId);
    assertThat(fs.getBlockLocations("/kept")).allSatisfy(b -> assertThat(b.locations()).hasSize(1));
    assertThat(read(fs, "/kept")).isEqualTo(kept);

    dyingDisk.release.countDown();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      assertThat(cluster.worker(0).store().committedBlocks()).noneMatch(b -> b.blockId() == doomed);
      assertThat(blocks.removalsOf(workerId)).as("the removal was reported").doesNotContain(doomed);
    });
    assertThat(blocks.lostWorkers()).isEmpty();
    assertThat(read(fs, "/kept")).isEqualTo(kept);
  }

  private static WorkerState live(BlockMaster blocks, long workerId) {
    return blocks.liveWorkers().stream().filter(w -> w.id() == workerId).findFirst().orElse(null);
  }

  private static byte[] write(FileSystem fs, String path, long seed) throws IOException {
    byte[] data = new byte[BLOCK / 2];
    new Random(seed).nextBytes(data);
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withWriteType(WriteType.MUST_CACHE))) {
      out.write(data);
    }
    return data;
  }

  private static byte[] read(FileSystem fs, String path) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }
}
