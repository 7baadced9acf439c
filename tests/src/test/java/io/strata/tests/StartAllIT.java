package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.tests.Scripts.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/strata-start.sh all and bin/strata-stop.sh all over a conf dir of the test's own: a master and the
 * workers its {@code workers} file lists (two localhost entries with their own ports; a comment and a blank
 * line that must be skipped), as real processes; a copy's progress bar under a pty and not in a pipe.
 */
class StartAllIT {
  @TempDir
  Path tmp;
  private final Map<String, String> env = new HashMap<>();

  private Result run(String... cmd) throws Exception {
    return Scripts.run(tmp, env, cmd);
  }

  @AfterEach
  void stop() throws Exception {
    run("bin/strata-stop.sh", "all");
  }

  @Test
  void startsTheMasterAndEveryListedWorker_andStopAllStopsThem() throws Exception {
    Path conf = Files.createDirectories(tmp.resolve("conf"));
    Path root = Scripts.ROOT;
    for (String f : new String[] {"log4j2.properties", "log4j2-cli.properties"}) {
      Files.copy(root.resolve("conf").resolve(f), conf.resolve(f));
    }
    int w1 = Scripts.freePort();
    int w2 = Scripts.freePort();
    Files.writeString(conf.resolve("workers"), "# two workers on this host\nlocalhost:" + w1 + "\n\n127.0.0.1:" + w2 + "\n");
    env.put("STRATA_CONF_DIR", conf.toString());
    env.put("STRATA_MASTER_RPC_PORT", Integer.toString(Scripts.freePort()));
    env.put("STRATA_LOGS_DIR", tmp.resolve("logs").toString());
    env.put("STRATA_DATA_DIR", tmp.resolve("data").toString());
    env.put("STRATA_MASTER_MOUNT_TABLE_ROOT_UFS", tmp.resolve("underFSStorage").toString());
    env.put("STRATA_WORKER_TIER_0_DIRS", tmp.resolve("worker-${strata.worker.rpc.port}").toString());
    env.put("STRATA_WORKER_TIER_0_QUOTA", "32MB");
    env.put("STRATA_HEAP", "256m");

    Result start = run("bin/strata-start.sh", "all");
    assertThat(start.exit()).as(start.err()).isZero();
    assertThat(start.out()).contains("Started master").contains("Started worker-" + w1)
        .contains("Started worker-" + w2);
    Result report = run("bin/strata", "fsadmin", "report");
    assertThat(report.out()).as(report.err()).contains("Live workers: 2").contains(":" + w1).contains(":" + w2);

    // A long copy draws a progress bar when stderr is a terminal (here a pty made by script(1)), and
    // prints nothing of it into a pipe or file.
    Path big = tmp.resolve("big.bin");
    Files.write(big, new byte[6 << 20]);
    Result tty = underPty("fs put --block-size=1MB " + big + " /big.bin");
    assertThat(tty.exit()).as(tty.out() + tty.err()).isZero();
    assertThat(tty.out()).contains("/big.bin [########################] 100% 6.0 MiB/6.0 MiB").contains("MiB/s");
    Result piped = run("bin/strata", "fs", "get", "/big.bin", tmp.resolve("back.bin").toString());
    assertThat(piped.exit()).as(piped.err()).isZero();
    assertThat(piped.err()).isEmpty();
    assertThat(Files.size(tmp.resolve("back.bin"))).isEqualTo(6L << 20);
    // load and persist of a large file draw one too (bytes loaded as blocks arrive; persisted once done).
    Result put = run("bin/strata", "fs", "put", "--write-type=MUST_CACHE", "--block-size=1MB", big.toString(),
        "/cached.bin");
    assertThat(put.exit()).as(put.err()).isZero();
    Result persist = underPty("fs persist /cached.bin");
    assertThat(persist.exit()).as(persist.out() + persist.err()).isZero();
    assertThat(persist.out()).contains("Persisted /cached.bin")
        .contains("/cached.bin [########################] 100% 6.0 MiB/6.0 MiB");
    Result free = run("bin/strata", "fs", "free", "/cached.bin");
    assertThat(free.exit()).as(free.err()).isZero();
    Result load = underPty("fs load /cached.bin");
    assertThat(load.exit()).as(load.out() + load.err()).isZero();
    assertThat(load.out()).contains("Loaded /cached.bin")
        .contains("/cached.bin [########################] 100% 6.0 MiB/6.0 MiB");
    Result quietLoad = run("bin/strata", "fs", "load", "/cached.bin");
    assertThat(quietLoad.exit()).as(quietLoad.err()).isZero();
    assertThat(quietLoad.err()).as("no bar into a pipe").isEmpty();

    Result stop = run("bin/strata-stop.sh", "all");
    assertThat(stop.out()).contains("Stopped worker-" + w1).contains("Stopped worker-" + w2).contains("Stopped master");
    Result again = run("bin/strata-stop.sh", "all");
    assertThat(again.out()).startsWith("Nothing to stop: no Strata process is running");
  }

  /** {@code bin/strata <args>} with a pty (made by script(1)) as its terminal; what it drew is in the output. */
  private Result underPty(String args) throws Exception {
    return run("/usr/bin/script", "-qec", Scripts.ROOT.resolve("bin/strata") + " " + args, "/dev/null");
  }

  @Test
  void noWorkersFile_isAClearError() throws Exception {
    Path conf = Files.createDirectories(tmp.resolve("conf"));
    env.put("STRATA_CONF_DIR", conf.toString());
    env.put("STRATA_DATA_DIR", tmp.resolve("data").toString());
    env.put("STRATA_LOGS_DIR", tmp.resolve("logs").toString());
    Result none = run("bin/strata-start.sh", "all");
    assertThat(none.exit()).isEqualTo(2);
    assertThat(none.err()).contains("no " + conf.resolve("workers"));
  }
}
