package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.WorkerProcess;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Workers let go of shuffle partitions whose files ended without their hearing: now and then a heartbeat names the
 * files whose blocks the worker keeps ({@code strata.worker.held.files.check.interval}, here 200 ms) and the master
 * answers which ended. A sealed partition's file is complete, so nothing else told its workers after a driver that
 * died (or whose drop failed): each kept its partition, and a replica of a shared UFS its whole uncommitted copy in
 * held temp blocks, until it registered again. Its sealed file still reads whole. Real two-worker cluster, real push
 * clients (no Spark).
 */
class ShuffleHeldFilesIntegrationTest {
  private static PushRig rig;

  @BeforeAll
  static void start() throws Exception {
    rig = new PushRig(LocalStrataCluster.builder().workers(2).set("strata.worker.held.files.check.interval",
        "200ms").build().start(), 2);
  }

  @AfterAll
  static void stop() {
    rig.close();
  }

  private static boolean anyHolds(long fileId) {
    for (WorkerProcess w : rig.cluster.workers()) {
      if (w.shuffle().store().openFileIds().contains(fileId)) {
        return true;
      }
    }
    return false;
  }

  @Test
  void aSealedPartition_isLetGoByItsWorkers_onceTheMasterSaysItsFileEnded() throws Exception {
    List<PartitionLocation> locs = rig.lifecycle.register("app-held", 0, 2);
    PushClient p = rig.pusher("app-held", 0, locs, 64 << 10);
    List<String> pushed = new ArrayList<>();
    for (int partition = 0; partition < 2; partition++) {
      byte[] b = ("partition " + partition + " ").repeat(100).getBytes(StandardCharsets.UTF_8);
      p.push(partition, 0, 7, b, 0, b.length);
      pushed.add(new String(b, StandardCharsets.UTF_8));
    }
    p.finish();
    assertThat(locs).allSatisfy(l -> assertThat(anyHolds(l.fileId())).isTrue());

    SealedShuffle sealed = rig.lifecycle.seal(0);

    await().atMost(Duration.ofSeconds(20)).until(() -> locs.stream().noneMatch(l -> anyHolds(l.fileId())));
    for (int partition = 0; partition < 2; partition++) {
      List<String> read = new ArrayList<>();
      try (PartitionReader r = new PartitionReader(rig.fs, sealed.files().get(partition), Map.of(0, 7L))) {
        r.forEachRemaining(b -> read.add(new String(b, StandardCharsets.UTF_8)));
      }
      assertThat(read).as("partition %d, read after its workers let it go", partition)
          .containsExactly(pushed.get(partition));
    }
    rig.lifecycle.unregister(0); // the drop finds nothing left to drop, and says nothing
  }
}
