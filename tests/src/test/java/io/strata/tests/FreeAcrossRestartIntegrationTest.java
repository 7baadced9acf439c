package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.minicluster.LocalStrataCluster;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A free acknowledged while the worker holding the copies is down, then a master restart from the journal: the
 * worker, back with every block it holds, is told to remove the freed copies, the master lists none of them, and the
 * bytes are still read from the under file system. A real master and worker on loopback.
 */
class FreeAcrossRestartIntegrationTest {
  private static final int BLOCK = 64 * 1024;
  private LocalStrataCluster cluster;

  @AfterEach
  void tearDown() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aFreeAcknowledgedBeforeAMasterRestart_removesTheCopiesOfTheWorkerThatWasAway() throws Exception {
    cluster = LocalStrataCluster.builder().workers(1)
        .set("strata.user.block.size.default", BLOCK)
        .set("strata.master.worker.timeout", "60s") // the worker stays live at the master while it is down
        .build().start();
    FileSystem fs = cluster.client();
    byte[] data = new byte[BLOCK * 2 + 100];
    new Random(7).nextBytes(data);
    try (FileOutStream out = fs.createFile("/freed/f", CreateFileOptions.defaults().withRecursive(true)
        .withWriteType(WriteType.CACHE_THROUGH))) {
      out.write(data);
    }
    List<Long> blockIds = new ArrayList<>();
    for (FileBlockInfo b : fs.getBlockLocations("/freed/f")) {
      assertThat(b.locations()).hasSize(1);
      blockIds.add(b.blockId());
    }
    assertThat(held(0)).containsAll(blockIds);

    cluster.stopWorker(0); // its blocks stay in its dir; the removals the free asks for never reach it
    assertThat(fs.free("/freed", true, false).filesFreed()).isEqualTo(1);
    cluster.restartMaster(); // replays the journal, free included
    cluster.restartWorker(0); // registers with every block it holds, the freed ones too

    FileSystem after = cluster.client();
    await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
        assertThat(held(0)).as("copies the worker holds").doesNotContainAnyElementsOf(blockIds));
    for (FileBlockInfo b : after.getBlockLocations("/freed/f")) {
      assertThat(b.locations()).as("block %d", b.blockId()).isEmpty();
    }
    assertThat(Files.readAllBytes(cluster.rootUfsDir().resolve("freed/f"))).as("the UFS copy").isEqualTo(data);
    try (FileInStream in = after.openFile("/freed/f")) {
      assertThat(in.readAllBytes()).isEqualTo(data);
    }
  }

  private Set<Long> held(int worker) {
    return cluster.worker(worker).store().committedBlocks().stream().map(m -> m.blockId())
        .collect(Collectors.toSet());
  }
}
