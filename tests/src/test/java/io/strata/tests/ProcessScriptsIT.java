package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.tests.Scripts.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master and two workers as separate processes through bin/strata-start.sh master|worker, with
 * different ports and dirs on one host; a file spans both; bin/strata-stop.sh stops them all.
 */
class ProcessScriptsIT {
  @TempDir
  static Path tmp;
  private static final Map<String, String> env = new HashMap<>();

  static Result run(String... cmd) throws Exception {
    return Scripts.run(tmp, env, cmd);
  }

  @AfterAll
  static void stopAll() throws Exception {
    run("bin/strata-stop.sh", "all");
  }

  @Test
  void masterAndTwoWorkerProcesses_serveAFileSpanningBoth_andStopAll() throws Exception {
    int masterPort = Scripts.freePort();
    int w1 = Scripts.freePort();
    int w2 = Scripts.freePort();
    env.put("STRATA_MASTER_RPC_PORT", Integer.toString(masterPort));
    env.put("STRATA_LOGS_DIR", tmp.resolve("logs").toString());
    env.put("STRATA_DATA_DIR", tmp.resolve("data").toString());
    env.put("STRATA_MASTER_MOUNT_TABLE_ROOT_UFS", tmp.resolve("underFSStorage").toString());
    env.put("STRATA_HEAP", "256m");
    env.put("STRATA_USER_BLOCK_WRITE_LOCATION_POLICY", "ROUND_ROBIN");

    Result master = run("bin/strata-start.sh", "master");
    assertThat(master.exit()).as(master.err()).isZero();
    Result a = run("bin/strata-start.sh", "worker", "--port", Integer.toString(w1), "--dir",
        tmp.resolve("w1").toString(), "--quota", "64MB");
    assertThat(a.exit()).as(a.err()).isZero();
    Result b = run("bin/strata-start.sh", "worker", "--port", Integer.toString(w2), "--dir",
        tmp.resolve("w2").toString(), "--quota", "64MB");
    assertThat(b.exit()).as(b.err()).isZero();
    assertThat(tmp.resolve("data/pids/worker-" + w1 + ".pid")).exists();

    Result report = run("bin/strata", "fsadmin", "report");
    assertThat(report.out()).contains("Live workers: 2").contains("localhost:" + w1).contains("localhost:" + w2)
        .contains("Capacity: " + (128L << 20));

    Path local = tmp.resolve("in.bin");
    byte[] data = new byte[3 * 1024 * 1024 + 17];
    new Random(3).nextBytes(data);
    Files.write(local, data);
    Result put = run("bin/strata", "fs", "put", "--block-size=1MB", local.toString(), "/spread.bin");
    assertThat(put.exit()).as(put.err()).isZero();
    Path back = tmp.resolve("back.bin");
    Result get = run("bin/strata", "fs", "get", "/spread.bin", back.toString());
    assertThat(get.exit()).as(get.err()).isZero();
    assertThat(Files.readAllBytes(back)).isEqualTo(data);
    // Four blocks, round robin: both worker dirs hold some.
    assertThat(blockFiles(tmp.resolve("w1"))).isPositive();
    assertThat(blockFiles(tmp.resolve("w2"))).isPositive();
    assertThat(blockFiles(tmp.resolve("w1")) + blockFiles(tmp.resolve("w2"))).isEqualTo(4);

    Result stop = run("bin/strata-stop.sh", "all");
    assertThat(stop.exit()).isZero();
    assertThat(stop.out()).contains("Stopped worker-" + w1).contains("Stopped worker-" + w2).contains("Stopped master");
    Result down = run("bin/strata", "fs", "ls", "/");
    assertThat(down.exit()).isEqualTo(1);
    assertThat(down.err()).contains("cannot reach the master at localhost:" + masterPort);
    // The one clear line only: no warning of the failed cluster-configuration fetch before it.
    assertThat(down.err().lines().filter(l -> !l.isBlank())).singleElement().asString()
        .contains("cannot reach the master");
  }

  private static long blockFiles(Path dir) throws Exception {
    try (var s = Files.list(dir.resolve("blocks"))) {
      // Each block file has its checksum sidecar <id>.crc beside it: only the block files count.
      return s.filter(p -> !p.getFileName().toString().endsWith(".crc")).count();
    }
  }
}
