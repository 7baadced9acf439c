package io.strata.tests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the project's bin/ scripts as a user would, for the tests that go through real processes. */
final class Scripts {
  /** The project root (failsafe passes it; the tests module's parent otherwise). */
  static final Path ROOT = Path.of(System.getProperty("strata.project.root", "..")).toAbsolutePath().normalize();

  private Scripts() {}

  /** What a script did: exit code, stdout (bytes as ISO-8859-1, so binary output survives), stderr. */
  record Result(int exit, String out, String err) {}

  /**
   * Runs {@code cmd} (its first element a path relative to the project root) in {@code workDir} with
   * {@code env} added to the environment; fails the test if it runs longer than 180 s.
   */
  static Result run(Path workDir, Map<String, String> env, String... cmd) throws IOException, InterruptedException {
    List<String> argv = new ArrayList<>(List.of(cmd));
    argv.set(0, ROOT.resolve(cmd[0]).toString());
    ProcessBuilder pb = new ProcessBuilder(argv).directory(workDir.toFile());
    pb.environment().putAll(env);
    Path out = Files.createTempFile(workDir, "out", ".txt");
    Path err = Files.createTempFile(workDir, "err", ".txt");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    Process p = pb.start();
    if (!p.waitFor(180, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(String.join(" ", cmd) + " did not finish in 180 s");
    }
    return new Result(p.exitValue(), Files.readString(out, StandardCharsets.ISO_8859_1),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  /**
   * The environment of a local cluster (bin/strata-start.sh local) of its own under {@code tmp}: free
   * ports, its own logs, data, UFS and block dirs, so it never meets another cluster on this host.
   */
  static Map<String, String> localClusterEnv(Path tmp, String quota, String heap) throws IOException {
    Map<String, String> env = new java.util.HashMap<>();
    env.put("STRATA_MASTER_RPC_PORT", Integer.toString(freePort()));
    env.put("STRATA_WORKER_RPC_PORT", Integer.toString(freePort()));
    env.put("STRATA_LOGS_DIR", tmp.resolve("logs").toString());
    env.put("STRATA_DATA_DIR", tmp.resolve("data").toString());
    env.put("STRATA_MASTER_MOUNT_TABLE_ROOT_UFS", tmp.resolve("underFSStorage").toString());
    env.put("STRATA_WORKER_TIER_0_QUOTA", quota);
    // Blocks in the test's own dir (the default is /dev/shm/strata-worker-<port>, kept after a stop).
    env.put("STRATA_WORKER_TIER_0_DIRS", tmp.resolve("worker-${strata.worker.rpc.port}").toString());
    env.put("STRATA_HEAP", heap);
    return env;
  }

  /**
   * Starts a master process of its own under {@code tmp} (bin/strata-start.sh master: a free port, its own logs,
   * data and UFS dirs, the given heap), recording its settings in {@code env} for later commands; returns its
   * pid. The caller stops it (bin/strata-stop.sh all with the same env).
   */
  static long startMaster(Path tmp, Map<String, String> env, String heap) throws IOException, InterruptedException {
    env.put("STRATA_MASTER_RPC_PORT", Integer.toString(freePort()));
    env.put("STRATA_LOGS_DIR", tmp.resolve("logs").toString());
    env.put("STRATA_DATA_DIR", tmp.resolve("data").toString());
    env.put("STRATA_MASTER_MOUNT_TABLE_ROOT_UFS", tmp.resolve("underFSStorage").toString());
    env.put("STRATA_HEAP", heap);
    Result start = run(tmp, env, "bin/strata-start.sh", "master");
    if (start.exit() != 0) {
      throw new IllegalStateException("bin/strata-start.sh master failed (" + start.exit() + "): " + start.err());
    }
    return Long.parseLong(Files.readString(tmp.resolve("data/pids/master.pid")).trim());
  }

  /** A free port on loopback, below the ephemeral range ({@link io.strata.minicluster.FreePorts}). */
  static int freePort() throws IOException {
    return io.strata.minicluster.FreePorts.loopback();
  }
}
