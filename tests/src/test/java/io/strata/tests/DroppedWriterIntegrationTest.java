package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.FileSystemContext;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A writer dropped without close or cancel, on a real master and worker: once the collector finds it unreachable,
 * its client stops renewing its lease (the master recovers the file after its 3 s lease timeout) and stops keeping its
 * under file system stream alive; the worker's block and UFS streams of it end. Before, the client renewed the lease
 * and sent keep-alives for as long as it lived, and the file stayed, incomplete, forever.
 */
class DroppedWriterIntegrationTest {
  private static final int PIECE = 100 << 10;

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        // 3 s against renewals and keep-alives every 200-250 ms: a held writer keeps its file and streams even when
        // a loaded machine holds its client back for a second or two
        .set("strata.worker.ufs.write.idle.timeout", "3s")
        .set("strata.master.lease.timeout", "3s")
        .set("strata.master.lease.check.interval", "100ms")
        .build().start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static FileSystemContext context() {
    Map<String, String> c = new HashMap<>(cluster.clientConf().explicitValues());
    c.put("strata.user.stream.chunk.size", "64KB");
    c.put("strata.user.shortcircuit.mode", "off"); // the block goes as a stream the worker counts
    c.put("strata.user.ufs.write.keepalive.interval", "250ms");
    c.put("strata.user.lease.renew.interval", "200ms");
    return new FileSystemContext(StrataConf.of(c));
  }

  /**
   * The writer under test, held until the test has seen what it opens: a collection may come at any moment, and had
   * it abandoned the writer before that look, its streams would already be gone. Cleared, nothing refers to it.
   */
  private Object held;

  /** Opens a CACHE_THROUGH writer of {@code path} and writes a piece (the test holds it until it drops it). */
  private static FileOutStream write(FileSystem fs, String path) throws IOException {
    FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(1 << 20)
        .withWriteType(WriteType.CACHE_THROUGH).withRecursive(true));
    out.write(new byte[PIECE]);
    return out;
  }

  @Test
  void aDroppedFileOutStream_isAbandoned_itsLeaseLapses_andItsStreamsEnd() throws IOException {
    try (FileSystemContext ctx = context(); FileSystem fs = FileSystem.create(ctx)) {
      held = write(fs, "/dropped/f");
      await().atMost(Duration.ofSeconds(10)).until(() -> cluster.worker(0).dataService().openUfsWrites() == 1
          && cluster.worker(0).openStreams() == 2);
      held = null; // dropped
      // Collected, the writer is abandoned: its lease is dropped (the master deletes the file) and its streams end.
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
        System.gc();
        return !fs.exists("/dropped/f") && cluster.worker(0).dataService().openUfsWrites() == 0
            && cluster.worker(0).openStreams() == 0;
      });
      long sent = ctx.ufsKeepAlivesSent();
      assertThat(sent).as("kept alive while it was open").isPositive();
      // Four keep-alive intervals: a stream still held would have had one.
      await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
          .until(() -> ctx.ufsKeepAlivesSent() == sent);
    }
  }

  @Test
  void aDroppedWorkerWrittenFile_hasItsLeaseLapse_andTheMasterRecoversIt() throws IOException {
    try (FileSystemContext ctx = context(); FileSystem fs = FileSystem.create(ctx)) {
      held = fs.createWorkerWrittenFile("/dropped/ww", CreateFileOptions.defaults().withWriteType(WriteType.MUST_CACHE)
          .withRecursive(true));
      assertThat(fs.exists("/dropped/ww")).isTrue();
      held = null; // dropped
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
        System.gc();
        return !fs.exists("/dropped/ww");
      });
    }
  }
}
