package io.strata.minicluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@link LocalStrataCluster} in a JVM of its own, for benchmarks whose measured JVM should not share its JIT
 * compiler, heap and collector with the cluster (a deployed cluster runs in processes of its own too).
 * {@link #start} launches this class's {@link #main} with the caller's java, JVM flags and classpath; the child
 * starts the cluster (its keys from the child's {@code strata.*} system properties, as the caller's were), prints
 * {@value #READY} and the master's port on standard output, and stops the cluster and exits when its standard
 * input ends: when {@link #close} closes it, or when the caller's JVM dies (so no cluster outlives its caller).
 *
 * <p>Thread-safe for {@link #masterPort}; {@link #close} from one thread.
 */
public final class ClusterProcess implements AutoCloseable {
  static final String READY = "strata-cluster-process ready master_port=";
  private static final long START_TIMEOUT_S = 120;

  private final Process process;
  private final int masterPort;

  private ClusterProcess(Process process, int masterPort) {
    this.process = process;
    this.masterPort = masterPort;
  }

  /** Starts a cluster of {@code workers} workers in a child JVM and returns once its workers registered. */
  public static ClusterProcess start(int workers) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(ProcessHandle.current().info().command().orElse(
        System.getProperty("java.home") + "/bin/java"));
    cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(ClusterProcess.class.getName());
    cmd.add(Integer.toString(workers));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<Integer> port = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      try {
        for (String line; (line = out.readLine()) != null; ) {
          if (line.startsWith(READY)) {
            port.complete(Integer.parseInt(line.substring(READY.length()).strip()));
          } else {
            System.err.println("[cluster] " + line);
          }
        }
        port.completeExceptionally(new IOException("The cluster process ended before it was ready (exit "
            + p.waitFor() + ")"));
      } catch (IOException | RuntimeException | InterruptedException e) {
        port.completeExceptionally(e);
      }
    }, "cluster-process-stdout");
    reader.setDaemon(true);
    reader.start();
    try {
      return new ClusterProcess(p, port.get(START_TIMEOUT_S, TimeUnit.SECONDS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
      throw new java.io.InterruptedIOException("Interrupted starting the cluster process");
    } catch (ExecutionException | TimeoutException e) {
      p.destroyForcibly();
      Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
      throw new IOException("Starting a cluster of " + workers + " workers in a process of its own failed: "
          + cause.getMessage(), cause);
    }
  }

  public int masterPort() {
    return masterPort;
  }

  /** Ends the child's standard input, so it stops its cluster, and waits for it (killed after 60 s). */
  @Override
  public void close() throws IOException {
    try (OutputStream in = process.getOutputStream()) {
      // closed: the child's read ends
    }
    try {
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IOException("The cluster process did not stop within 60 s of its input's end; killed it");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }

  /** The child: {@code args[0]} workers; see the class comment. */
  public static void main(String[] args) throws Exception {
    try (LocalStrataCluster cluster = LocalStrataCluster.builder().workers(Integer.parseInt(args[0]))
        .setStrataSystemProperties().build().start()) {
      System.out.println(READY + cluster.masterPort());
      System.out.flush();
      while (System.in.read() >= 0) {
        // until the parent closes our input or dies
      }
    }
    System.exit(0);
  }
}
