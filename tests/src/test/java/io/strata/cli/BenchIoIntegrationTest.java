package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.minicluster.LocalStrataCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code strata bench io} on a small file against one real worker on this host: the output is exactly the
 * issue's line format, one line per path, op and thread count, each against the baseline its path and op
 * call for, with numbers consistent with each other, the hadoop path (Hadoop's FileSystem over
 * strata://) among them. Speed is not asserted (the machine is shared).
 */
class BenchIoIntegrationTest {
  private static final Pattern LINE = Pattern.compile("bench path=(short-circuit|uds|tcp|tcp-plain|hadoop) "
      + "op=(read|write|pread) threads=(\\d+) GBps=(\\d+\\.\\d+) baseline=([a-z_]+) "
      + "baseline_GBps=(\\d+\\.\\d+) ratio=(\\d+\\.\\d+)");

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.worker.tier.0.quota", "64MB").build().start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private record Line(String path, String op, int threads, double gbps, String baseline, double baseGbps,
      double ratio) {}

  @Test
  void benchIo_printsOneConsistentLinePerPathOpAndThreadCount() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc = StrataCli.run(cluster.clientConf(), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8),
        "bench", "io", "--size", "3MB", "--block-size", "1MB", "--threads", "2", "--iterations", "1");
    String stderr = err.toString(StandardCharsets.UTF_8);
    assertThat(rc).as(stderr).isZero();

    List<Line> lines = new ArrayList<>();
    for (String s : out.toString(StandardCharsets.UTF_8).split("\n")) {
      Matcher m = LINE.matcher(s);
      assertThat(m.matches()).as("line in the issue's format: " + s).isTrue();
      lines.add(new Line(m.group(1), m.group(2), Integer.parseInt(m.group(3)), Double.parseDouble(m.group(4)),
          m.group(5), Double.parseDouble(m.group(6)), Double.parseDouble(m.group(7))));
    }
    Set<String> measured = new TreeSet<>();
    for (Line l : lines) {
      measured.add(l.path() + "/" + l.op() + "/" + l.threads());
    }
    Set<String> expected = new TreeSet<>();
    for (int t = 1; t <= 2; t++) {
      for (String p : List.of("short-circuit", "uds", "tcp", "tcp-plain", "hadoop")) {
        for (String op : List.of("write", "read", "pread")) {
          expected.add(p + "/" + op + "/" + t);
        }
      }
    }
    assertThat(measured).isEqualTo(expected);
    assertThat(lines).hasSize(expected.size()); // one line each

    Map<String, Double> baselineByThreads = new HashMap<>();
    for (Line l : lines) {
      String want = switch (l.path()) {
        // hadoop: the short-circuit path through Hadoop's FileSystem API over strata://.
        case "short-circuit", "hadoop" -> l.op().equals("write") ? "raw_file_write" : "raw_file_read";
        case "uds" -> "raw_uds_stream";
        default -> "raw_tcp_stream";
      };
      assertThat(l.baseline()).as(l.toString()).isEqualTo(want);
      assertThat(l.gbps()).as(l.toString()).isPositive();
      assertThat(l.baseGbps()).as(l.toString()).isPositive();
      // The figures are printed rounded to 4 decimals, the ratio to 3.
      double ratio = l.gbps() / l.baseGbps();
      double slack = 0.0005 + 0.00005 * (1 + ratio) / l.baseGbps();
      assertThat(Math.abs(l.ratio() - ratio)).as(l.toString()).isLessThanOrEqualTo(slack + 1e-9);
      // A baseline is measured once per thread count: every line citing it prints the same figure.
      Double before = baselineByThreads.putIfAbsent(l.baseline() + "/" + l.threads(), l.baseGbps());
      assertThat(before == null ? l.baseGbps() : before).as(l.toString()).isEqualTo(l.baseGbps());
    }
    // Every path ran: none was left out (the hadoop path needs Hadoop and the adapter on the classpath).
    assertThat(stderr).doesNotContain("left out");
    assertThat(cluster.client().exists("/.strata-bench")).isFalse();
  }
}
