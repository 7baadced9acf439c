package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.tests.Scripts.Result;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an operator may start by mistake next to a running cluster, through the real scripts and real
 * processes: a second master (same port, or same journal on another port), a format, workers with a bad
 * or a misspelt setting. Each mistake fails with one clear line and a non-zero exit, or a warning, and the
 * running local cluster keeps accepting changes and its namespace.
 */
@TestMethodOrder(MethodOrderer.MethodName.class)
class OperatorMistakesIT {
  @TempDir
  static Path tmp;
  private static Map<String, String> env;

  private static Result run(Map<String, String> extra, String... cmd) throws Exception {
    Map<String, String> e = new HashMap<>(env);
    e.putAll(extra);
    return Scripts.run(tmp, e, cmd);
  }

  private static Result run(String... cmd) throws Exception {
    return run(Map.of(), cmd);
  }

  @BeforeAll
  static void start() throws Exception {
    env = Scripts.localClusterEnv(tmp, "64MB", "384m");
    Result r = run("bin/strata-start.sh", "local");
    assertThat(r.exit()).as("start: %s %s", r.out(), r.err()).isZero();
    assertThat(run("bin/strata", "fs", "mkdir", "/kept").exit()).isZero();
  }

  @AfterAll
  static void stop() throws Exception {
    run("bin/strata-stop.sh", "worker");
    Result r = run("bin/strata-stop.sh", "local");
    assertThat(r.exit()).isZero();
  }

  /** The running cluster still takes a change and still has what it had. */
  private static void assertClusterStillWorks(String newDir) throws Exception {
    Result mkdir = run("bin/strata", "fs", "mkdir", newDir);
    assertThat(mkdir.exit()).as(mkdir.err()).isZero();
    Result ls = run("bin/strata", "fs", "ls", "/");
    assertThat(ls.exit()).as(ls.err()).isZero();
    assertThat(ls.out()).contains("/kept").contains(newDir);
  }

  @Test
  void a_secondMasterOnTheSamePort_failsWithOneLine_beforeItTouchesTheJournal() throws Exception {
    Result r = run("bin/strata-start.sh", "master");
    assertThat(r.exit()).as(r.out()).isEqualTo(1);
    assertThat(r.out()).doesNotContain("Started master");
    assertThat(r.err()).startsWith("Cannot start the master: The master cannot listen on 127.0.0.1:"
        + env.get("STRATA_MASTER_RPC_PORT") + ": the port is in use (is another master or bin/strata-start.sh "
        + "local running? strata.master.rpc.port sets the port, strata.master.bind.host the host)");
    assertThat(r.err().lines()).hasSize(1);
    assertClusterStillWorks("/after-same-port");
  }

  @Test
  void b_secondMasterOnTheSameJournal_onAnotherPort_isRefusedByTheJournalLock() throws Exception {
    Result r = run(Map.of("STRATA_MASTER_RPC_PORT", Integer.toString(Scripts.freePort())),
        "bin/strata-start.sh", "master");
    assertThat(r.exit()).as(r.out()).isEqualTo(1);
    assertThat(r.err()).matches("Cannot start the master: a master is running on the journal at \\S+/journal "
        + "\\(it holds \\S+/journal/LOCK\\); stop it first\\n");
    assertClusterStillWorks("/after-same-journal");
  }

  @Test
  void c_formatForce_whileAMasterRuns_refuses_andTheNamespaceSurvives() throws Exception {
    Result r = run("bin/strata", "format", "--force");
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).startsWith("format: refusing to format: a master is running on the journal at ");
    assertClusterStillWorks("/after-format");
  }

  @Test
  void d_aWorkerWithABadQuota_exitsPrintingExactlyOneLine() throws Exception {
    Result r = run(Map.of("STRATA_WORKER_TIER_0_QUOTA", "lots"), "bin/strata-start.sh", "worker", "--port",
        Integer.toString(Scripts.freePort()));
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).isEqualTo("Cannot start the worker: Invalid value 'lots' for strata.worker.tier.0.quota: "
        + "must be a size such as 64MB or 10GB, or a comma list of sizes (one per dir)\n");
  }

  @Test
  void e_aMasterWithABadDuration_exitsPrintingExactlyOneLine() throws Exception {
    Result r = run(Map.of("STRATA_MASTER_TTL_CHECK_INTERVAL", "soon"), "bin/strata-start.sh", "master");
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).isEqualTo("Cannot start the master: Invalid value 'soon' for "
        + "strata.master.ttl.check.interval: 'soon' is not a duration such as 500ms, 10s or 5min\n");
  }

  @Test
  void f_aMisspeltKey_isWarnedAboutWithTheNearestKey_andTheWorkerStillStarts() throws Exception {
    int port = Scripts.freePort();
    Result r = run(Map.of("STRATA_WORKER_TIER_0_QOUTA", "32MB"), "bin/strata-start.sh", "worker", "--port",
        Integer.toString(port));
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).contains("Started worker-" + port);
    assertThat(r.err()).isEqualTo("Warning: Unknown configuration key strata.worker.tier.0.qouta (ignored); "
        + "did you mean strata.worker.tier.0.quota?\n");
    assertThat(run("bin/strata-stop.sh", "worker").exit()).isZero();
  }
}
