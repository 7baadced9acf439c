package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.cli.StrataCli;
import io.strata.minicluster.LocalStrataCluster;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.apache.logging.log4j.LogManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code strata logLevel} against a real master and worker, the master's web port set apart from its RPC port + 1:
 * the command reaches each at the web port it reports (the master in its cluster info, a worker at registration);
 * both run in this JVM, so the level they set is visible here.
 */
class LogLevelIntegrationTest {
  @TempDir
  static Path tmp;
  private static LocalStrataCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    int masterPort = Scripts.freePort();
    int workerPort = Scripts.freePort();
    int masterWeb = Scripts.freePort();
    // Apart from every port the others bind or derive (free ports asked one after another can be neighbours).
    while (masterWeb == masterPort + 1 || masterWeb == workerPort || masterWeb == workerPort + 1) {
      masterWeb = Scripts.freePort();
    }
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .masterPort(masterPort).firstWorkerPort(workerPort)
        .set("strata.master.web.port", masterWeb)
        .set("strata.worker.tier.0.quota", "16MB").build().start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private record Run(int code, String out, String err) {}

  private static Run cli(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = StrataCli.run(cluster.clientConf(), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), args);
    return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void setsAndReadsALevelOnTheMasterAndEveryWorker() {
    String name = "io.strata.test.cli.loglevel";
    int masterWeb = cluster.master().web().port();
    int workerWeb = cluster.worker(0).web().port();
    assertThat(masterWeb).isNotEqualTo(cluster.masterPort() + 1);
    Run set = cli("logLevel", "--logName", name, "--level", "TRACE");
    assertThat(set.code()).as(set.err()).isZero();
    assertThat(set.out()).isEqualTo("localhost:" + masterWeb + " " + name + "=TRACE\n"
        + "localhost:" + workerWeb + " " + name + "=TRACE\n");
    assertThat(LogManager.getLogger(name).isTraceEnabled()).isTrue();

    Run read = cli("logLevel", "--logName", name, "--target", "127.0.0.1:" + workerWeb);
    assertThat(read.out()).isEqualTo("127.0.0.1:" + workerWeb + " " + name + "=TRACE\n");
    cli("logLevel", "--logName", name, "--level", "WARN", "--target", "master");
    assertThat(LogManager.getLogger(name).isInfoEnabled()).isFalse();
  }

  @Test
  void badLevelsAndTargetsAreNamed() {
    Run level = cli("logLevel", "--logName", "io.strata", "--level", "LOUD", "--target", "master");
    assertThat(level.code()).isEqualTo(1);
    assertThat(level.err()).contains("level must be one of").contains("got 'LOUD'");
    Run target = cli("logLevel", "--logName", "io.strata", "--target", "nowhere");
    assertThat(target.code()).isEqualTo(2);
    assertThat(target.err()).contains("target 'nowhere' is not master, workers or host:webPort");
  }
}
