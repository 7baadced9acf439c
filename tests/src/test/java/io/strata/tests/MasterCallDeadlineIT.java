package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.client.FileSystem;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.DeadlineExceededException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real master process (bin/strata-start.sh master) frozen with SIGSTOP: it keeps its connections open and answers
 * nothing. A client's metadata call then fails with DEADLINE_EXCEEDED once strata.network.rpc.timeout has passed
 * (the client's deadlines tick, {@code CallDeadlines}, cancels it), instead of waiting for ever; once the master
 * runs again the same client's calls succeed.
 */
class MasterCallDeadlineIT {
  @TempDir
  static Path tmp;
  private static final Map<String, String> env = new HashMap<>();

  @AfterAll
  static void stopAll() throws Exception {
    Scripts.run(tmp, env, "bin/strata-stop.sh", "all");
  }

  @Test
  void callToAFrozenMaster_failsWithDeadlineExceeded_afterTheRpcTimeout() throws Exception {
    long pid = Scripts.startMaster(tmp, env, "256m");
    String port = env.get("STRATA_MASTER_RPC_PORT");

    try (FileSystem fs = FileSystem.create(StrataConf.of(Map.of(
        "strata.master.hostname", "localhost",
        "strata.master.rpc.port", port,
        "strata.network.rpc.timeout", "1500ms",
        "strata.user.master.retry.window", "0s")))) {
      fs.createDirectory("/d");
      assertThat(fs.getStatus("/d").directory()).isTrue();

      assertThat(new ProcessBuilder("kill", "-STOP", Long.toString(pid)).start().waitFor()).isZero();
      try {
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> fs.exists("/not-asked-before")).isInstanceOf(DeadlineExceededException.class)
            .hasMessageContaining("1500 ms");
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(tookMs).as("the call's wait").isGreaterThanOrEqualTo(1500).isLessThan(10_000);
      } finally {
        assertThat(new ProcessBuilder("kill", "-CONT", Long.toString(pid)).start().waitFor()).isZero();
      }
      assertThat(fs.exists("/d")).isTrue();
      fs.createDirectory("/d/e");
      assertThat(fs.getStatus("/d/e").directory()).isTrue();
    }
  }
}
