package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /metrics} on a real master and worker: both scrape and parse as the Prometheus text format after
 * real traffic (a file of known size written, read back N times, a getStatus loop), and the counters moved
 * by exactly what was done; every Strata metric is named {@code strata_...}; conf/grafana-strata.json is a
 * dashboard whose every PromQL expression names only metrics a running cluster exports.
 */
class MetricsIntegrationTest {
  private static final int SIZE = 3 * (1 << 20) + 12345;
  private static final int READS = 3;
  private static final int STATUS_CALLS = 25;
  private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})? (\\S+)$");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** One sample line: its name, labels and value. */
  record Sample(String name, Map<String, String> labels, double value) {}

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

  static java.util.List<Sample> scrape(int port) throws IOException, InterruptedException {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
    java.util.List<Sample> out = new java.util.ArrayList<>();
    for (String line : r.body().split("\n")) {
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      Matcher m = SAMPLE.matcher(line);
      assertThat(m.matches()).as("a sample line: %s", line).isTrue();
      Map<String, String> labels = new HashMap<>();
      if (m.group(3) != null) {
        Matcher l = LABEL.matcher(m.group(3));
        while (l.find()) {
          labels.put(l.group(1), l.group(2));
        }
      }
      out.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4))));
    }
    return out;
  }

  /** The sum of the samples named {@code name} whose labels include {@code labels}. */
  static double value(java.util.List<Sample> samples, String name, Map<String, String> labels) {
    double sum = 0;
    for (Sample s : samples) {
      if (s.name().equals(name) && s.labels().entrySet().containsAll(labels.entrySet())) {
        sum += s.value();
      }
    }
    return sum;
  }

  static double value(java.util.List<Sample> samples, String name) {
    return value(samples, name, Map.of());
  }

  private static int masterWeb() {
    return cluster.master().web().port();
  }

  private static int workerWeb() {
    return cluster.worker(0).web().port();
  }

  private static FileSystem grpcClient() {
    // Reads and writes stream over gRPC (TCP or the data domain socket): no short-circuit, no block transfer.
    return FileSystem.create(cluster.clientConf().withAll(Map.of("strata.user.shortcircuit.mode", "off",
        "strata.user.network.transfer.enabled", "false")));
  }

  @Test
  void countersMoveByTheTrafficDone() throws Exception {
    java.util.List<Sample> m0 = scrape(masterWeb());
    java.util.List<Sample> w0 = scrape(workerWeb());
    byte[] data = new byte[SIZE];
    new Random(7).nextBytes(data);
    String path = "/metrics/file";
    try (FileSystem fs = grpcClient()) {
      try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(1 << 20)
          .withWriteType(WriteType.MUST_CACHE).withRecursive(true))) {
        out.write(data);
      }
      for (int i = 0; i < READS; i++) {
        byte[] back = new byte[SIZE];
        try (FileInStream in = fs.openFile(path)) {
          int off = 0;
          while (off < SIZE) {
            int n = in.read(back, off, SIZE - off);
            assertThat(n).isPositive();
            off += n;
          }
        }
        assertThat(back).isEqualTo(data);
      }
      for (int i = 0; i < STATUS_CALLS; i++) {
        assertThat(fs.getStatus(path).length()).isEqualTo(SIZE);
      }
      missingStatus(fs);
    }
    // A call's duration is observed when the server completes it, which may come just after the client has
    // its last byte or answer: wait for the known calls to be observed, then take the figures.
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).untilAsserted(() -> {
      java.util.List<Sample> w = scrape(workerWeb());
      java.util.List<Sample> m = scrape(masterWeb());
      assertThat(delta(w0, w, "strata_rpc_duration_seconds_count", Map.of("method", "ReadBlock")))
          .as("ReadBlock calls observed").isGreaterThanOrEqualTo(4.0 * READS);
      assertThat(delta(m0, m, "strata_rpc_duration_seconds_count", Map.of("method", "GetStatus")))
          .as("GetStatus calls observed").isGreaterThanOrEqualTo(STATUS_CALLS);
      assertThat(delta(m0, m, "strata_rpc_failures_total", Map.of("method", "GetStatus", "code", "NOT_FOUND")))
          .as("NOT_FOUND failures observed").isGreaterThanOrEqualTo(1);
    });
    java.util.List<Sample> m1 = scrape(masterWeb());
    java.util.List<Sample> w1 = scrape(workerWeb());

    // Worker: bytes by path (gRPC over TCP or the domain socket) and by tier, exactly what was moved.
    double written = delta(w0, w1, "strata_worker_bytes_written_total", Map.of("path", "grpc"))
        + delta(w0, w1, "strata_worker_bytes_written_total", Map.of("path", "domain_socket"));
    assertThat(written).isEqualTo(SIZE);
    double read = delta(w0, w1, "strata_worker_bytes_read_total", Map.of("path", "grpc"))
        + delta(w0, w1, "strata_worker_bytes_read_total", Map.of("path", "domain_socket"));
    assertThat(read).isEqualTo((double) SIZE * READS);
    assertThat(delta(w0, w1, "strata_worker_bytes_read_total", Map.of("path", "short_circuit"))).isZero();
    assertThat(delta(w0, w1, "strata_worker_bytes_read_total", Map.of("path", "ufs"))).isZero();
    assertThat(delta(w0, w1, "strata_worker_tier_bytes_written_total", Map.of("tier", "MEM"))).isEqualTo(SIZE);
    assertThat(delta(w0, w1, "strata_worker_tier_bytes_read_total", Map.of("tier", "MEM")))
        .isEqualTo((double) SIZE * READS);
    // 4 blocks per read, each opened from the store: hits, no misses.
    assertThat(delta(w0, w1, "strata_worker_cache_hits_total", Map.of())).isGreaterThanOrEqualTo(4.0 * READS);
    assertThat(delta(w0, w1, "strata_worker_cache_misses_total", Map.of())).isZero();
    assertThat(value(w1, "strata_worker_dir_blocks", Map.of("tier", "MEM"))).isGreaterThanOrEqualTo(4);
    assertThat(value(w1, "strata_worker_dir_used_bytes", Map.of("tier", "MEM"))).isGreaterThanOrEqualTo(SIZE);
    assertThat(value(w1, "strata_worker_dir_capacity_bytes", Map.of("tier", "MEM"))).isEqualTo(64 << 20);
    assertThat(value(w1, "strata_worker_dir_good")).isEqualTo(1);
    assertThat(value(w1, "strata_worker_bad_dirs")).isZero();
    assertThat(value(w1, "strata_worker_registered")).isEqualTo(1);
    assertThat(delta(w0, w1, "strata_rpc_calls_total", Map.of("method", "WriteBlock"))).isEqualTo(4);
    assertThat(delta(w0, w1, "strata_rpc_duration_seconds_count", Map.of("method", "ReadBlock")))
        .isGreaterThanOrEqualTo(4.0 * READS);

    // Master: the getStatus loop, the journal's writes, the cluster's capacity per tier.
    assertThat(delta(m0, m1, "strata_rpc_calls_total", Map.of("transport", "tcp", "method", "GetStatus")))
        .isGreaterThanOrEqualTo(STATUS_CALLS);
    assertThat(delta(m0, m1, "strata_rpc_duration_seconds_count", Map.of("method", "GetStatus")))
        .isGreaterThanOrEqualTo(STATUS_CALLS);
    assertThat(delta(m0, m1, "strata_rpc_calls_total", Map.of("method", "CreateFile"))).isEqualTo(1);
    assertThat(delta(m0, m1, "strata_rpc_failures_total", Map.of("method", "GetStatus", "code", "NOT_FOUND")))
        .isEqualTo(1);
    assertThat(delta(m0, m1, "strata_master_journal_sync_seconds_count", Map.of())).isPositive();
    assertThat(delta(m0, m1, "strata_master_journal_flush_wait_seconds_count", Map.of())).isPositive();
    assertThat(value(m1, "strata_master_leader")).isEqualTo(1);
    assertThat(value(m1, "strata_master_workers", Map.of("state", "live"))).isEqualTo(1);
    assertThat(value(m1, "strata_master_capacity_bytes", Map.of("tier", "MEM"))).isEqualTo(64 << 20);
    assertThat(value(m1, "strata_master_blocks")).isGreaterThanOrEqualTo(4);

    // Names: Strata's own start with strata_; JVM metrics keep their standard names.
    for (java.util.List<Sample> s : java.util.List.of(m1, w1)) {
      assertThat(value(s, "jvm_memory_used_bytes", Map.of("area", "heap"))).isPositive();
      for (Sample x : s) {
        assertThat(x.name()).matches("(strata|jvm|process)_.*");
      }
    }
  }

  /** One getStatus of a path that does not exist: a failed RPC (NOT_FOUND) on the master. */
  private static void missingStatus(FileSystem fs) {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> fs.getStatus("/metrics/no-such-file"))
        .isInstanceOf(IOException.class);
  }

  private static double delta(java.util.List<Sample> before, java.util.List<Sample> after, String name,
      Map<String, String> labels) {
    return value(after, name, labels) - value(before, name, labels);
  }

  @Test
  void dashboardNamesOnlyExportedMetrics() throws Exception {
    try (FileSystem fs = grpcClient()) {
      missingStatus(fs); // a failure, so the failure counter has a series
    }
    Set<String> exported = new TreeSet<>();
    for (Sample s : scrape(masterWeb())) {
      exported.add(s.name());
    }
    for (Sample s : scrape(workerWeb())) {
      exported.add(s.name());
    }
    Path file = Path.of(System.getProperty("strata.project.root", "..")).resolve("conf/grafana-strata.json");
    String json = Files.readString(file);
    assertThat(json).contains("\"schemaVersion\"").contains("\"type\": \"datasource\"").contains("\"panels\"");
    Matcher e = Pattern.compile("\"expr\": \"((?:[^\"\\\\]|\\\\.)*)\"").matcher(json);
    Pattern metric = Pattern.compile("\\b(?:strata|jvm|process)_[a-zA-Z0-9_]*");
    int exprs = 0;
    Set<String> named = new TreeSet<>();
    while (e.find()) {
      exprs++;
      String expr = e.group(1).replace("\\\"", "\"").replace("\\\\", "\\");
      // Label matchers ({area="heap"}) name labels and values, not metrics.
      Matcher m = metric.matcher(expr.replaceAll("\\{[^}]*}", "{}"));
      boolean any = false;
      while (m.find()) {
        named.add(m.group());
        any = true;
      }
      assertThat(any).as("expression names a metric: %s", expr).isTrue();
    }
    assertThat(exprs).isGreaterThanOrEqualTo(15);
    assertThat(exported).containsAll(named);
  }

  @Test
  void fsadminMetricsPrintsTheMastersMetrics() {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    int code = io.strata.cli.StrataCli.run(cluster.clientConf(), new java.io.PrintStream(out, true),
        new java.io.PrintStream(err, true), "fsadmin", "metrics", "--web-port", Integer.toString(masterWeb()),
        "--strata-only");
    assertThat(code).as(err.toString()).isZero();
    String text = out.toString(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(text).contains("# TYPE strata_master_leader gauge").contains("strata_master_leader 1.0")
        .doesNotContain("jvm_");
  }

  @Test
  void underFileSystemTrafficIsCountedAsUfsBytesAndCacheMisses() throws Exception {
    int size = 1_500_000;
    byte[] data = new byte[size];
    new Random(11).nextBytes(data);
    String path = "/metrics/through";
    java.util.List<Sample> w0 = scrape(workerWeb());
    try (FileSystem fs = grpcClient()) {
      try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(1 << 20)
          .withWriteType(WriteType.CACHE_THROUGH).withRecursive(true))) {
        out.write(data);
      }
      java.util.List<Sample> w1 = scrape(workerWeb());
      assertThat(delta(w0, w1, "strata_worker_bytes_written_total", Map.of("path", "ufs"))).isEqualTo(size);
      int cached = cluster.worker(0).store().committedBlocks().size();
      fs.free(path, false, true); // the cached copy goes: the next read loads from the under file system
      // The worker drops the blocks when its next heartbeat tells it to.
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
          .until(() -> cluster.worker(0).store().committedBlocks().size() == cached - 2);
      byte[] back;
      try (FileInStream in = fs.openFile(path)) {
        back = in.readAllBytes();
      }
      assertThat(back).isEqualTo(data);
      java.util.List<Sample> w2 = scrape(workerWeb());
      // Two blocks, each read through once from the root UFS.
      assertThat(delta(w1, w2, "strata_worker_bytes_read_total", Map.of("path", "ufs"))).isEqualTo(size);
      assertThat(delta(w1, w2, "strata_worker_cache_misses_total", Map.of())).isEqualTo(2);
    }
  }
}
