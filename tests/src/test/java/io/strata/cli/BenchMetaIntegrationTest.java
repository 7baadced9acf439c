package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.minicluster.LocalStrataCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code strata bench meta}, run small against a mini cluster: every line is in the format, the
 * ratios are the quotients of the printed figures, create lines carry the fsync baseline measured in the
 * master's journal dir, create, getStatus and listStatus lines carry the master's share of one op
 * (master_ms), and the bare unary server's JVM is gone afterwards. Speed is not asserted (the
 * machine is shared).
 */
class BenchMetaIntegrationTest {
  private static final Pattern LINE = Pattern.compile("bench op=(ping|create|getStatus|rename|delete|listStatus) "
      + "threads=(\\d+) entries=(\\d+) ops_per_s=(\\d+\\.\\d+) p99_ms=(\\d+\\.\\d{3}) "
      + "bare_unary_ops_per_s=(\\d+\\.\\d) ratio_to_bare=(\\d+\\.\\d{5})( fsync_ms=(\\d+\\.\\d{3}))?"
      + "( master_ms=(\\d+\\.\\d{3}))?( floor_ms=(\\d+\\.\\d{3}) ratio_to_floor=(\\d+\\.\\d{3}))?");

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.worker.tier.0.quota", "16MB").build().start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void benchMeta_printsOneLinePerOpAndThreadCount_withRatiosToTheBareUnaryServer() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Path journal = cluster.master().journal().dir();
    int rc = StrataCli.run(cluster.clientConf(), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), "bench", "meta", "--threads", "1,2", "--files", "20",
        "--list-sizes", "10", "--warmup", "40", "--journal-dir", journal.toString());
    String stderr = err.toString(StandardCharsets.UTF_8);
    assertThat(rc).as(stderr).isZero();
    assertThat(stderr).contains("bench: fsync baseline in " + journal + " (the master's journal dir)");

    Set<String> measured = new TreeSet<>();
    List<String> lines = List.of(out.toString(StandardCharsets.UTF_8).split("\n"));
    for (String s : lines) {
      Matcher m = LINE.matcher(s);
      assertThat(m.matches()).as("line in the issue's format: " + s).isTrue();
      String op = m.group(1);
      measured.add(op + "/" + m.group(2) + "/" + m.group(3));
      double ops = Double.parseDouble(m.group(4));
      double bare = Double.parseDouble(m.group(6));
      double ratio = Double.parseDouble(m.group(7));
      assertThat(ops).as(s).isPositive();
      assertThat(bare).as(s).isPositive();
      // The ratio is the quotient of the printed figures, to the 5 decimals printed.
      assertThat(Math.abs(ratio - ops / bare)).as(s).isLessThanOrEqualTo(0.000005 + 1e-12);
      assertThat(m.group(8) != null).as("fsync_ms on create lines only: " + s).isEqualTo(op.equals("create"));
      if (op.equals("create")) {
        assertThat(Double.parseDouble(m.group(9))).as(s).isPositive();
      }
      boolean timed = List.of("create", "getStatus", "listStatus").contains(op);
      assertThat(m.group(10) != null).as("master_ms on create, getStatus and listStatus lines: " + s)
          .isEqualTo(timed);
      if (timed) {
        // The master's share of one op, from the trailers: positive, and below the op's whole time
        // (client, wire and master) at the rate measured, with room for the second pass's own noise.
        double masterMs = Double.parseDouble(m.group(11));
        assertThat(masterMs).as(s).isPositive();
        assertThat(masterMs).as(s).isLessThan(10 * 1000.0 * Integer.parseInt(m.group(2)) / ops);
      }
      assertThat(m.group(12) != null).as("floor_ms on create lines only: " + s).isEqualTo(op.equals("create"));
      if (op.equals("create")) {
        // The floor is two bare round trips at this thread count plus two fsyncs; the ratio is one
        // create's time (threads / rate) over it, to the 3 decimals printed (the floor's own rounding
        // of up to 0.002 ms carries into the ratio).
        int threads = Integer.parseInt(m.group(2));
        double fsync = Double.parseDouble(m.group(9));
        double floor = Double.parseDouble(m.group(13));
        assertThat(floor).as(s).isCloseTo(2 * threads * 1000.0 / bare + 2 * fsync, org.assertj.core.data.Offset.offset(0.0025));
        double opMs = threads * 1000.0 / ops;
        assertThat(Double.parseDouble(m.group(14))).as(s)
            .isCloseTo(opMs / floor, org.assertj.core.data.Offset.offset(0.0005 + opMs / floor * 0.002 / floor));
      }
    }
    Set<String> expected = new TreeSet<>();
    for (int t = 1; t <= 2; t++) {
      for (String op : List.of("ping", "create", "getStatus", "rename", "delete")) {
        expected.add(op + "/" + t + "/0");
      }
      expected.add("listStatus/" + t + "/10");
    }
    assertThat(measured).isEqualTo(expected);
    assertThat(lines).hasSize(expected.size());
    // The bare server ran in a JVM of its own, and the bench ended it.
    Matcher server = Pattern.compile("bench: bare unary server \\(pid (\\d+)\\) on 127\\.0\\.0\\.1:(\\d+)")
        .matcher(stderr);
    assertThat(server.find()).as(stderr).isTrue();
    long pid = Long.parseLong(server.group(1));
    assertThat(pid).isNotEqualTo(ProcessHandle.current().pid());
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
    List<String> left = new ArrayList<>();
    ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
        .forEach(p -> p.info().commandLine().filter(c -> c.contains(BareUnaryServer.class.getName()))
            .ifPresent(left::add));
    assertThat(left).isEmpty();
    assertThat(cluster.client().exists("/.strata-bench-meta-" + ProcessHandle.current().pid())).isFalse();
  }
}
