package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.tests.Scripts.Result;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real scripts, as a newcomer runs them: bin/strata-start.sh local starts a cluster in the
 * background, bin/strata fs moves a file in and out byte-exact, bin/strata-stop.sh stops it. Runs on
 * free ports with its own logs and data dirs so it never meets another cluster on this host.
 */
class LocalScriptsIT {
  @TempDir
  static Path tmp;
  private static Map<String, String> env;

  static Result run(String... cmd) throws Exception {
    return Scripts.run(tmp, env, cmd);
  }


  @BeforeAll
  static void start() throws Exception {
    env = Scripts.localClusterEnv(tmp, "256MB", "512m");
    Result r = run("bin/strata-start.sh", "local");
    assertThat(r.exit()).as("start: %s %s", r.out(), r.err()).isZero();
    assertThat(r.out()).contains("Started local");
  }

  @AfterAll
  static void stop() throws Exception {
    Result r = run("bin/strata-stop.sh", "local");
    assertThat(r.exit()).isZero();
    assertThat(r.out()).contains("Stopped local");
    assertThat(tmp.resolve("data/pids/local.pid")).doesNotExist();
    assertThat(tmp.resolve("data/local.ready")).doesNotExist();
    assertThat(tmp.resolve("worker-" + env.get("STRATA_WORKER_RPC_PORT") + "/blocks")).isDirectory();
  }

  @Test
  void aStalePidFile_namingAnotherProgramsProcess_isNeverSignalled() throws Exception {
    // A worker that crashed left its pid file; the system gave that pid to another program since.
    Process other = new ProcessBuilder("sleep", "60").start();
    try {
      Path stale = tmp.resolve("data/pids/worker-1.pid");
      Files.writeString(stale, other.pid() + "\n");
      Result r = run("bin/strata-stop.sh", "worker");
      assertThat(r.exit()).isZero();
      assertThat(r.out()).contains("Nothing to stop");
      assertThat(other.isAlive()).as("the other program's process").isTrue();
      assertThat(stale).doesNotExist();
    } finally {
      other.destroyForcibly();
    }
  }

  @Test
  void putThenCat_roundTripsByteExact_andStartRefusesASecondCluster() throws Exception {
    Path local = tmp.resolve("input.bin");
    byte[] data = new byte[5 * 1024 * 1024 + 321];
    new Random(9).nextBytes(data);
    Files.write(local, data);

    // Like hdfs dfs -put, put does not create missing parents.
    Result noParent = run("bin/strata", "fs", "put", local.toString(), "/in/input.bin");
    assertThat(noParent.exit()).isEqualTo(1);
    assertThat(noParent.err()).contains("/in/input.bin").contains("No such file or directory");
    assertThat(run("bin/strata", "fs", "mkdir", "-p", "/in").exit()).isZero();
    Result put = run("bin/strata", "fs", "put", "--block-size=1MB", local.toString(), "/in/input.bin");
    assertThat(put.exit()).as(put.err()).isZero();
    Result cat = run("bin/strata", "fs", "cat", "/in/input.bin");
    assertThat(cat.exit()).as(cat.err()).isZero();
    byte[] back = cat.out().getBytes(StandardCharsets.ISO_8859_1);
    assertThat(sha256(back)).isEqualTo(sha256(data));

    Result ls = run("bin/strata", "fs", "ls", "/in");
    assertThat(ls.exit()).isZero();
    assertThat(ls.out()).contains("/in/input.bin").contains(Integer.toString(data.length));

    // hdfs dfs's forms through the real script: a dash command, a glob the CLI expands, a strata:// URI.
    Result count = run("bin/strata", "fs", "-count", "strata://localhost:" + env.get("STRATA_MASTER_RPC_PORT")
        + "/in/*.bin");
    assertThat(count.exit()).as(count.err()).isZero();
    assertThat(count.out()).isEqualTo(String.format("%12s %12s %18s /in/input.bin%n", 0, 1, data.length));

    Result missing = run("bin/strata", "fs", "cat", "/nope");
    assertThat(missing.exit()).isEqualTo(1);
    assertThat(missing.err()).contains("/nope").contains("No such file or directory");

    Result report = run("bin/strata", "fsadmin", "report");
    assertThat(report.exit()).as(report.err()).isZero();
    assertThat(report.out()).contains("localhost:" + env.get("STRATA_WORKER_RPC_PORT"));

    Result again = run("bin/strata-start.sh", "local");
    assertThat(again.exit()).isEqualTo(1);
    assertThat(again.err()).contains("already running");
  }

  @Test
  void classpath_printsTheShadedClientJar_andTheServersClasspathOnRequest() throws Exception {
    Result r = run("bin/strata", "classpath");
    assertThat(r.exit()).isZero();
    assertThat(r.out().trim()).isEqualTo(Scripts.ROOT.resolve("lib/client/strata-client.jar").toString());
    assertThat(Path.of(r.out().trim())).isRegularFile();
    Result servers = run("bin/strata", "classpath", "--servers");
    assertThat(servers.exit()).isZero();
    assertThat(servers.out().trim()).isEqualTo(Scripts.ROOT.resolve("lib") + "/*");
    Result bad = run("bin/strata", "classpath", "--bogus");
    assertThat(bad.exit()).isEqualTo(2);
    assertThat(bad.err()).contains("--bogus");
  }

  static String sha256(byte[] b) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
  }

  /** {@code bin/strata ARGS} under a pty made by script(1): stdout and stderr both land in the result's out. */
  private static Result underPty(String... args) throws Exception {
    StringBuilder line = new StringBuilder(Scripts.ROOT.resolve("bin/strata").toString());
    for (String a : args) {
      line.append(' ').append(a);
    }
    return run("/usr/bin/script", "-qec", line.toString(), "/dev/null");
  }

  @Test
  void manyFileCopiesLoadsAndPersists_drawOneBarWithFileAndByteTotals_underAPty_andNoneIntoAPipe() throws Exception {
    // A tree of three files, 1 + 2 + 3 MiB, one of them a level down.
    Path tree = Files.createDirectories(tmp.resolve("tree/sub"));
    Files.write(tmp.resolve("tree/a.bin"), new byte[1 << 20]);
    Files.write(tmp.resolve("tree/b.bin"), new byte[2 << 20]);
    Files.write(tree.resolve("c.bin"), new byte[3 << 20]);
    String bar = "[########################] 100% 6.0 MiB/6.0 MiB  3/3 files";

    // Written MUST_CACHE, so that persist has something to do.
    Result put = underPty("fs", "put", "--block-size=1MB", "--write-type=MUST_CACHE", tmp.resolve("tree").toString(),
        "/tree");
    assertThat(put.exit()).as(put.out() + put.err()).isZero();
    assertThat(put.out()).contains("/tree " + bar).contains("MiB/s").contains("0/3 files");
    Result count = run("bin/strata", "fs", "count", "/tree");
    assertThat(count.out()).as(count.err()).isEqualTo(String.format("%12s %12s %18s /tree%n", 2, 3, 6 << 20));

    Result get = underPty("fs", "get", "/tree", tmp.resolve("back").toString());
    assertThat(get.exit()).as(get.out()).isZero();
    assertThat(get.out()).contains(tmp.resolve("back") + " " + bar);
    assertThat(Files.size(tmp.resolve("back/sub/c.bin"))).isEqualTo(3 << 20);

    Result persist = underPty("fs", "persist", "/tree");
    assertThat(persist.exit()).as(persist.out()).isZero();
    assertThat(persist.out()).contains("Persisted /tree/a.bin").contains("Persisted /tree/b.bin")
        .contains("Persisted /tree/sub/c.bin").contains("/tree " + bar);
    assertThat(Files.size(tmp.resolve("underFSStorage/tree/sub/c.bin"))).isEqualTo(3 << 20);

    assertThat(run("bin/strata", "fs", "free", "-R", "/tree").exit()).isZero();
    Result load = underPty("fs", "load", "/tree");
    assertThat(load.exit()).as(load.out()).isZero();
    assertThat(load.out()).contains("Loaded /tree/sub/c.bin").contains("/tree " + bar);
    // each line goes above the bar, which is drawn again below it with that file counted
    assertThat(load.out()).containsPattern("Loaded /tree/a\\.bin\\r\\n\\r/tree \\[[# ]{24}\\] +\\d+% \\S+ MiB/6\\.0 MiB  1/3 files");

    // Into pipes: the same commands print their lines and no bar.
    Result piped = run("bin/strata", "fs", "load", "/tree");
    assertThat(piped.exit()).as(piped.err()).isZero();
    assertThat(piped.out()).isEqualTo("Loaded /tree/a.bin\nLoaded /tree/b.bin\nLoaded /tree/sub/c.bin\n");
    assertThat(piped.err()).isEmpty();
    Result pipedPut = run("bin/strata", "fs", "put", tmp.resolve("tree").toString(), "/tree2");
    assertThat(pipedPut.exit()).as(pipedPut.err()).isZero();
    assertThat(pipedPut.out() + pipedPut.err()).isEmpty();
  }
}
