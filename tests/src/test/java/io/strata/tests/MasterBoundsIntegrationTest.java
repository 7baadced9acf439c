package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.WorkerState;
import io.strata.minicluster.LocalStrataCluster;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The master's worker-registry bounds over a real cluster (issue 9, point 6): a delete of more blocks than
 * one heartbeat reply may carry still empties the worker, batch after batch; a lost worker is forgotten
 * after the forget time.
 */
class MasterBoundsIntegrationTest {
  private LocalStrataCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void deleteOfMoreBlocksThanABatch_removesThemAllInBatches() throws Exception {
    cluster = LocalStrataCluster.builder().workers(1)
        .set("strata.master.worker.removals.per.heartbeat.max", 3)
        .set("strata.worker.heartbeat.interval", "50ms")
        .build().start();
    FileSystem fs = cluster.client();
    try (FileOutStream out = fs.createFile("/many", CreateFileOptions.defaults().withBlockSize(65_536)
        .withWriteType(WriteType.MUST_CACHE))) {
      out.write(new byte[10 * 65_536]);
    }
    assertThat(cluster.worker(0).store().committedBlocks()).hasSize(10);
    fs.delete("/many");
    await().atMost(Duration.ofSeconds(30)).until(() -> cluster.worker(0).store().committedBlocks().isEmpty());
  }

  @Test
  void lostWorker_isForgotten_afterTheForgetTime() throws Exception {
    // 3 s without a heartbeat (every 200 ms) before a worker is lost: the live worker 0 must not be taken for lost
    // (and its locations dropped) when a loaded machine delays its heartbeats for a second.
    cluster = LocalStrataCluster.builder().workers(2)
        .set("strata.master.worker.timeout", "3s")
        .set("strata.master.worker.lost.check.interval", "100ms")
        .set("strata.master.worker.lost.forget.after", "2s")
        .build().start();
    BlockMaster bm = cluster.master().fileSystemMaster().blockMaster();
    long gone = cluster.worker(1).workerId();
    cluster.stopWorker(1);
    await().atMost(Duration.ofSeconds(20)).until(() -> bm.lostWorkers().stream().anyMatch(w -> w.id() == gone));
    await().atMost(Duration.ofSeconds(20)).until(() -> bm.lostWorkers().isEmpty());
    assertThat(bm.liveWorkers()).extracting(WorkerState::id).containsExactly(cluster.worker(0).workerId());
  }
}
