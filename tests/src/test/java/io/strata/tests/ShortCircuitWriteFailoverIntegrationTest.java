package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A short-circuit write whose worker stops mid-block fails over by replaying the block so far from the
 * writer's own descriptor of the temp block file, not from heap chunks: the failover buffer is 1 MiB
 * here, far less than the block so far (a streamed write fails cleanly then, see {@code
 * FailoverIntegrationTest#write_failsCleanly_whenTheBlockSoFarOutgrewTheFailoverBuffer}), and the stopped
 * worker has dropped (deleted) its temp file, yet the file reads back byte-exact. Two workers on this
 * host, so both take blocks short-circuit; 4 MiB blocks. With 64 MiB grants the stop is noticed at the
 * block's commit; with 256 KiB grants at the next grant, mid-block, and the write that needed it is sent
 * again to the new worker.
 */
@Timeout(120)
class ShortCircuitWriteFailoverIntegrationTest {
  private static final int BLOCK = 4 << 20;
  private LocalStrataCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private FileSystem start(String grant) throws IOException {
    cluster = LocalStrataCluster.builder().workers(2)
        .set("strata.user.shortcircuit.mode", "fd")
        .set("strata.user.shortcircuit.write.grant.size", grant)
        .set("strata.user.block.write.failover.buffer.size", "1MB")
        .set("strata.user.block.write.location.policy", "ROUND_ROBIN")
        .set("strata.user.block.retry.backoff.base", "10ms")
        .set("strata.user.file.passive.cache.enabled", "false")
        // Each block commits before the next starts, so only the block being written has a temp file (the
        // background commit has a test of its own, which sets the key itself).
        .set("strata.user.shortcircuit.write.commit.background", "false")
        .build().start();
    return cluster.client();
  }

  private static long tempBlocks(Path workerDir) throws IOException {
    Path tmp = workerDir.resolve("tmp");
    if (!Files.isDirectory(tmp)) {
      return 0;
    }
    try (Stream<Path> s = Files.list(tmp)) {
      return s.filter(Files::isRegularFile).count();
    }
  }

  /** The worker with a temp block: the one receiving the block being written now. */
  private int writingWorker() {
    int[] found = {-1};
    await().atMost(Duration.ofSeconds(20)).until(() -> {
      for (int i = 0; i < cluster.workers().size(); i++) {
        if (!cluster.worker(i).isClosed() && tempBlocks(cluster.baseDir().resolve("worker-" + i)) > 0) {
          found[0] = i;
          return true;
        }
      }
      return false;
    });
    return found[0];
  }

  @ParameterizedTest(name = "{0}, grants of {1}")
  @CsvSource({"MUST_CACHE, 64MB", "MUST_CACHE, 256KB", "ASYNC_THROUGH, 256KB"})
  void write_failsOverMidBlock_replayingFromItsOwnDescriptor_pastTheHeapFailoverBuffer(WriteType type, String grant)
      throws Exception {
    FileSystem fs = start(grant);
    byte[] data = new byte[3 * BLOCK + 12345];
    new Random(7).nextBytes(data);
    int cut = BLOCK + BLOCK / 2 + 1000; // half-way through block 1: 2 MiB of it written, twice the heap buffer
    int stopped;
    long created;
    try (FileOutStream out = fs.createFile("/sc-failover", CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(type))) {
      for (int off = 0; off < cut; off += 300_001) {
        out.write(data, off, Math.min(300_001, cut - off));
      }
      stopped = writingWorker();
      cluster.stopWorker(stopped); // ends its short-circuit connections: it drops (deletes) the temp block
      for (int off = cut; off < data.length; off += 300_001) {
        out.write(data, off, Math.min(300_001, data.length - off));
      }
      created = out.shortCircuit().writesCreated();
    }
    assertThat(created).as("every block, and block 1 again at the other worker, written short-circuit")
        .isEqualTo(5);
    int stoppedPort = cluster.worker(stopped).rpcPort();
    assertThat(fs.getBlockLocations("/sc-failover").get(1).locations())
        .as("block 1 was committed by the worker it failed over to")
        .isNotEmpty()
        .allSatisfy(l -> assertThat(l.address().rpcPort()).isNotEqualTo(stoppedPort));
    cluster.restartWorker(stopped); // block 0 (written there before the stop) comes back with it
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
        assertThat(fs.getBlockLocations("/sc-failover")).allSatisfy(b -> assertThat(b.locations()).isNotEmpty()));
    try (FileInStream in = fs.openFile("/sc-failover")) {
      assertThat(in.readAllBytes()).isEqualTo(data);
    }
    int survivor = 1 - stopped;
    assertThat(tempBlocks(cluster.baseDir().resolve("worker-" + survivor))).as("temp blocks left").isZero();
  }

  /**
   * MUST_CACHE short-circuit blocks commit in the background while the next block is written. Block 0's worker
   * stops after all but its last byte is written: the last byte still goes into the temp file through the
   * writer's descriptor, and block 0's background COMMIT fails (the connection is gone, the worker dropped the
   * file). When block 1 is finished the stream finds that, writes block 0 again from its descriptor to the other
   * worker, and the file reads back byte-exact with no block on the stopped worker. With the key off the same
   * failure is met at block 0's own commit, with the same outcome.
   */
  @ParameterizedTest(name = "commit in the background: {0}")
  @CsvSource({"true", "false"})
  void blockWhoseCommitFails_isWrittenAgainElsewhere_fromItsDescriptor(boolean background) throws Exception {
    FileSystem fs = start("64MB");
    FileSystem client = FileSystem.create(cluster.clientConf().withAll(
        java.util.Map.of("strata.user.shortcircuit.write.commit.background", String.valueOf(background))));
    try {
      byte[] data = new byte[3 * BLOCK + 777];
      new Random(11).nextBytes(data);
      int stopped;
      FileOutStream out = client.createFile("/sc-commit-fails", CreateFileOptions.defaults()
          .withBlockSize(BLOCK).withWriteType(WriteType.MUST_CACHE));
      try (out) {
        out.write(data, 0, BLOCK - 1);
        stopped = writingWorker();
        cluster.stopWorker(stopped);
        for (int off = BLOCK - 1; off < data.length; off += 300_001) {
          out.write(data, off, Math.min(300_001, data.length - off));
        }
      }
      int[] counts = out.backgroundCommits();
      if (background) {
        assertThat(counts[0]).as("blocks committed in the background").isEqualTo(4);
        assertThat(counts[1]).as("block 0, written again after its commit failed").isEqualTo(1);
      } else {
        assertThat(counts).containsExactly(0, 0);
      }
      int stoppedPort = cluster.worker(stopped).rpcPort();
      assertThat(fs.getBlockLocations("/sc-commit-fails")).hasSize(4).allSatisfy(b -> assertThat(b.locations())
          .isNotEmpty().allSatisfy(l -> assertThat(l.address().rpcPort()).isNotEqualTo(stoppedPort)));
      try (FileInStream in = fs.openFile("/sc-commit-fails")) {
        assertThat(in.readAllBytes()).isEqualTo(data);
      }
      assertThat(tempBlocks(cluster.baseDir().resolve("worker-" + (1 - stopped)))).as("temp blocks left").isZero();
    } finally {
      client.close();
    }
  }
}
