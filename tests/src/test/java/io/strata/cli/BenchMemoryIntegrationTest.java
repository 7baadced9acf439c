package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.minicluster.LocalStrataCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code strata bench memory} small, against one real worker: one line in its format, every file read in
 * full (the bench fails otherwise), the bound computed from the client's configuration for the way the
 * path reads (block transfers, gRPC streams), and within_bound
 * saying what the printed figures say. Whether the client stays within the bound is the benchmark's
 * finding, measured in a client JVM of its own (docs/PERFORMANCE.md): here the master and the worker
 * share the JVM, so its heap and direct memory are theirs too.
 */
class BenchMemoryIntegrationTest {
  private static final Pattern LINE = Pattern.compile("bench op=concurrent_read path=(tcp|uds|tcp-grpc|uds-grpc|short-circuit) "
      + "files=(\\d+) GBps=(\\d+\\.\\d+) heap_live_peak_MB=(\\d+\\.\\d) direct_peak_MB=(\\d+\\.\\d) "
      + "bound_MB=(\\d+\\.\\d) within_bound=(true|false)");

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    // Each run writes 8 x 5 MB MUST_CACHE and deletes them at the end; the worker drops a deleted file's
    // blocks when its next heartbeat brings the removal (strata.worker.heartbeat.interval), so a run
    // started at once still finds the previous run's 40 MB there: room for both runs, whatever their order.
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.worker.tier.0.quota", "128MB").build().start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Runs the bench over {@code path} with small gRPC settings; its one line, checked against the format. */
  private static Matcher run(String path) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc = StrataCli.run(cluster.clientConf().withAll(java.util.Map.of("strata.user.read.prefetch.chunks", "2",
        "strata.user.stream.chunk.size", "256KB", "strata.network.flow.control.window", "1MB")),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
        "bench", "memory", "--files", "8", "--size", "5MB", "--path", path);
    String stderr = err.toString(StandardCharsets.UTF_8);
    assertThat(rc).as(stderr).isZero();
    String[] lines = out.toString(StandardCharsets.UTF_8).strip().split("\n");
    assertThat(lines).hasSize(1);
    Matcher m = LINE.matcher(lines[0]);
    assertThat(m.matches()).as("line in the bench's format: " + lines[0]).isTrue();
    assertThat(m.group(1)).isEqualTo(path);
    assertThat(Integer.parseInt(m.group(2))).isEqualTo(8);
    assertThat(Double.parseDouble(m.group(3))).isPositive();
    double heap = Double.parseDouble(m.group(4));
    double direct = Double.parseDouble(m.group(5));
    assertThat(heap).isPositive(); // one collection at least was seen
    // The verdict agrees with the printed figures, which are rounded to 0.1 MB: within 0.15 MB of the bound
    // either verdict fits them.
    double margin = heap + direct - Double.parseDouble(m.group(6));
    if (Math.abs(margin) > 0.15) {
      assertThat(m.group(7)).as(lines[0]).isEqualTo(margin <= 0 ? "true" : "false");
    }
    // The bench cleans up after itself.
    assertThat(cluster.client().listStatus("/")).noneMatch(s -> s.path().startsWith("/.strata-bench-memory"));
    return m;
  }

  @Test
  void blockTransfers_boundCountsEachConnectionsDirectBuffer_andTheIdleOnes() throws IOException {
    Matcher m = run("tcp");
    // 8 streams, one connection and its 1 MiB direct buffer each, plus 8 idle connections of the one worker
    // (strata.user.transfer.connections.idle.max), plus 64 MiB: the gRPC window and prefetch do not count.
    double bound = ((8 + 8) * 1024 * 1024 + 64 * 1024 * 1024) / 1e6;
    assertThat(Double.parseDouble(m.group(6))).isCloseTo(bound, org.assertj.core.data.Offset.offset(0.05));
  }

  @Test
  void grpcStreams_boundCountsTheWindowAndThePrefetchedChunks() throws IOException {
    Matcher m = run("tcp-grpc");
    // prefetch 2 chunks of 256 KiB, a 1 MiB window: the bound is 8 * (1 MiB + 3 * 256 KiB) + 64 MiB
    double bound = (8 * (1024 * 1024 + 3 * 256 * 1024) + 64 * 1024 * 1024) / 1e6;
    assertThat(Double.parseDouble(m.group(6))).isCloseTo(bound, org.assertj.core.data.Offset.offset(0.05));
  }
}
