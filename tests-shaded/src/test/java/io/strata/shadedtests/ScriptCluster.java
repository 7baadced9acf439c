package io.strata.shadedtests;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A local Strata cluster (master and one worker in one process) started and stopped by the project's own
 * scripts, {@code bin/strata-start.sh local} and {@code bin/strata-stop.sh local}, on free loopback ports with
 * its logs, data, block and under-file-system dirs under one directory of the test's, so it never meets
 * another cluster on this host. Also runs any other program (a Hadoop or Spark JVM) for the tests.
 *
 * <p>Not thread-safe: one test class's setup and teardown.
 */
final class ScriptCluster implements AutoCloseable {
  /** The project root (failsafe passes it; this module's parent otherwise). */
  static final Path ROOT = Path.of(System.getProperty("strata.project.root", "..")).toAbsolutePath().normalize();

  /** What a program did: exit code, stdout, stderr. */
  record Result(int exit, String out, String err) {}

  private final Path dir;
  private final Map<String, String> env = new HashMap<>();
  private final int masterPort;
  private final int workerPort;

  private ScriptCluster(Path dir) throws IOException {
    this.dir = dir;
    this.masterPort = freePort();
    int w = freePort();
    while (Math.abs(w - masterPort) <= 2) { // the master's web port is its RPC port + 1
      w = freePort();
    }
    this.workerPort = w;
    env.put("STRATA_MASTER_RPC_PORT", Integer.toString(masterPort));
    env.put("STRATA_WORKER_RPC_PORT", Integer.toString(workerPort));
    env.put("STRATA_LOGS_DIR", dir.resolve("logs").toString());
    env.put("STRATA_DATA_DIR", dir.resolve("data").toString());
    env.put("STRATA_MASTER_MOUNT_TABLE_ROOT_UFS", dir.resolve("underFSStorage").toString());
    env.put("STRATA_WORKER_TIER_0_QUOTA", "256MB");
    env.put("STRATA_WORKER_TIER_0_DIRS", dir.resolve("worker-${strata.worker.rpc.port}").toString());
    env.put("STRATA_HEAP", "512m");
  }

  /** Starts a cluster under {@code dir}; fails with the script's output when it does not start. */
  static ScriptCluster start(Path dir) throws IOException, InterruptedException {
    return start(dir, Map.of());
  }

  /** As above, with {@code env} (STRATA_* settings) on top of the cluster's own. */
  static ScriptCluster start(Path dir, Map<String, String> env) throws IOException, InterruptedException {
    ScriptCluster c = new ScriptCluster(dir);
    c.env.putAll(env);
    Result r = c.run(List.of(ROOT.resolve("bin/strata-start.sh").toString(), "local"));
    if (r.exit() != 0) {
      throw new IllegalStateException("bin/strata-start.sh local failed (" + r.exit() + "): " + r.out() + r.err());
    }
    return c;
  }

  int masterPort() {
    return masterPort;
  }

  int workerPort() {
    return workerPort;
  }

  /** strata://localhost:&lt;master port&gt; */
  String uri() {
    return "strata://localhost:" + masterPort;
  }

  /** The dir the worker keeps its blocks in. */
  Path workerDir() {
    return dir.resolve("worker-" + workerPort);
  }

  /** The root of the under file system. */
  Path ufsRoot() {
    return dir.resolve("underFSStorage");
  }

  /**
   * Runs {@code argv} in the cluster's dir with the cluster's environment (plus {@code extraEnv}); fails if it
   * runs longer than 300 s.
   */
  Result run(List<String> argv, Map<String, String> extraEnv) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(new ArrayList<>(argv)).directory(dir.toFile());
    pb.environment().putAll(env);
    pb.environment().putAll(extraEnv);
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    Process p = pb.start();
    if (!p.waitFor(300, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(String.join(" ", argv) + " did not finish in 300 s");
    }
    return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  Result run(List<String> argv) throws IOException, InterruptedException {
    return run(argv, Map.of());
  }

  /** bin/strata with these arguments. */
  Result strata(String... args) throws IOException, InterruptedException {
    List<String> argv = new ArrayList<>();
    argv.add(ROOT.resolve("bin/strata").toString());
    argv.addAll(List.of(args));
    return run(argv);
  }

  @Override
  public void close() throws IOException, InterruptedException {
    Result r = run(List.of(ROOT.resolve("bin/strata-stop.sh").toString(), "local"));
    if (r.exit() != 0) {
      throw new IllegalStateException("bin/strata-stop.sh local failed: " + r.out() + r.err());
    }
  }

  /**
   * A free loopback port below the kernel's ephemeral range. The cluster binds it a second or two later, in another
   * process, and a port of that range may meanwhile become the source port of some connection (the cluster's own
   * clients included): a worker once failed to start on one so ("Failed to bind to address /127.0.0.1:32863").
   * The same as {@code io.strata.minicluster.FreePorts} of the tests module, which this module must not depend on
   * (it sees only the shaded client).
   */
  static int freePort() throws IOException {
    int below = ephemeralLow();
    java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
    for (int attempt = 0; attempt < 100 && below > 10_000; attempt++) {
      int port = random.nextInt(10_000, below);
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
        return port;
      } catch (IOException inUse) {
        // another one
      }
    }
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  /** The first port of the kernel's ephemeral range (Linux's default when it cannot be read). */
  private static int ephemeralLow() {
    try {
      return Integer.parseInt(Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim()
          .split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return 32_768;
    }
  }
}
