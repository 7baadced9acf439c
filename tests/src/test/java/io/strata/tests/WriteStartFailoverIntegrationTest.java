package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.minicluster.LocalStrataCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A worker that refuses to start a block (its short-circuit CREATE fails: here its tier dir's {@code tmp/} is a file,
 * so no temp block can be made there) does not fail the write: the block starts at another worker, as a block that
 * fails later fails over. Before, the refusal ended the whole write. Two real workers, writes placed round robin so
 * that some blocks are first offered to the refusing worker.
 */
class WriteStartFailoverIntegrationTest {
  @Test
  void aWorkerRefusingToStartABlock_isLeftOut_andEveryWriteSucceedsElsewhere() throws Exception {
    try (LocalStrataCluster cluster = LocalStrataCluster.builder().workers(2)
        .set("strata.user.block.write.location.policy", "ROUND_ROBIN").build().start()) {
      Path tmp = cluster.baseDir().resolve("worker-0").resolve("tmp");
      try (var left = Files.list(tmp)) {
        assertThat(left).isEmpty();
      }
      Files.delete(tmp);
      Files.writeString(tmp, "not a directory");
      for (int i = 0; i < 4; i++) {
        // A new client each time: one that saw the refusal keeps the worker out for its own later writes.
        try (FileSystem fs = FileSystem.create(cluster.clientConf())) {
          byte[] data = new byte[200_000];
          new Random(i).nextBytes(data);
          try (FileOutStream out = fs.createFile("/start/" + i, CreateFileOptions.defaults().withBlockSize(65_536)
              .withWriteType(WriteType.MUST_CACHE))) {
            out.write(data);
          }
          try (FileInStream in = fs.openFile("/start/" + i)) {
            assertThat(in.readAllBytes()).as("file " + i).isEqualTo(data);
          }
        }
      }
    }
  }

  /**
   * CACHE_THROUGH with one worker full (of data not yet persisted, which nothing evicts) and the other refusing: no
   * worker takes the block, so it goes to the under file system only, as when every worker is full; the write
   * succeeds, PERSISTED, and reads back whole.
   */
  @Test
  void cacheThrough_withOneWorkerFullAndTheOtherRefusing_writesTheBlocksThroughToTheUfs() throws Exception {
    try (LocalStrataCluster cluster = LocalStrataCluster.builder().workers(2)
        .set("strata.worker.tier.0.quota", "256KB")
        .set("strata.user.block.write.location.policy", "ROUND_ROBIN").build().start()) {
      try (FileSystem fs = FileSystem.create(cluster.clientConf())) {
        for (int i = 0; i < 2; i++) { // fills both workers with blocks nothing may evict
          try (FileOutStream out = fs.createFile("/full/" + i, CreateFileOptions.defaults().withBlockSize(256 << 10)
              .withWriteType(WriteType.MUST_CACHE))) {
            out.write(new byte[256 << 10]);
          }
        }
      }
      Path tmp = cluster.baseDir().resolve("worker-0").resolve("tmp");
      Files.delete(tmp);
      Files.writeString(tmp, "not a directory");
      byte[] data = new byte[200_000];
      new Random(7).nextBytes(data);
      try (FileSystem fs = FileSystem.create(cluster.clientConf())) {
        try (FileOutStream out = fs.createFile("/through", CreateFileOptions.defaults().withBlockSize(65_536)
            .withWriteType(WriteType.CACHE_THROUGH))) {
          out.write(data);
        }
        assertThat(fs.getStatus("/through").persistenceState()).isEqualTo("PERSISTED");
        try (FileInStream in = fs.openFile("/through")) {
          assertThat(in.readAllBytes()).isEqualTo(data);
        }
      }
      assertThat(Files.readAllBytes(cluster.rootUfsDir().resolve("through"))).isEqualTo(data);
    }
  }
}
