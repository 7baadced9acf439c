package io.strata.cli;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCalls;
import io.strata.common.grpc.GrpcChannels;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The baselines of {@code strata bench meta}, measured in the same run: the bare unary server
 * ({@link BareUnaryServer}, in a JVM this class starts on the bench's own classpath and kills on
 * {@link #close()}) and the cost of one fsync (write and force a small file) in a dir, normally the
 * master's journal dir.
 *
 * <p>One per bench run; {@link #bareCall()} may be called from many threads (the channel is shared).
 */
final class MetaBaselines implements AutoCloseable {
  private static final long START_TIMEOUT_MS = 30_000;

  private final Process server;
  private final ManagedChannel channel;
  private final int port;

  private MetaBaselines(Process server, ManagedChannel channel, int port) {
    this.server = server;
    this.channel = channel;
    this.port = port;
  }

  /** Starts the bare server in its own JVM and connects to it; fails naming what went wrong. */
  static MetaBaselines start() throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
        BareUnaryServer.class.getName()).redirectError(ProcessBuilder.Redirect.DISCARD);
    Process p = pb.start();
    try {
      CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
        try {
          return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
        } catch (IOException e) {
          return null;
        }
      });
      String line = first.get(START_TIMEOUT_MS, TimeUnit.MILLISECONDS);
      if (line == null || !line.startsWith(BareUnaryServer.READY)) {
        throw new IOException("The bare unary baseline server did not start (it said '" + line + "', exit "
            + (p.isAlive() ? "none yet" : p.exitValue()) + ")");
      }
      int port = Integer.parseInt(line.substring(BareUnaryServer.READY.length()).trim());
      return new MetaBaselines(p, GrpcChannels.forAddress("127.0.0.1", port, 4 << 20), port);
    } catch (IOException e) {
      kill(p);
      throw e;
    } catch (Exception e) {
      kill(p);
      throw new IOException("The bare unary baseline server did not start within " + START_TIMEOUT_MS + " ms: " + e,
          e);
    }
  }

  int port() {
    return port;
  }

  long pid() {
    return server.pid();
  }

  /** One trivial unary call to the bare server. */
  void bareCall() {
    ClientCalls.blockingUnaryCall(channel, BareUnaryServer.METHOD, CallOptions.DEFAULT, new byte[0]);
  }

  /**
   * Median milliseconds of writing 4 KiB to a new file in {@code dir} and forcing it (data and metadata,
   * as the journal's writer does), over {@code times} files; the files are removed.
   */
  static double fsyncMs(Path dir, int times) throws IOException {
    ByteBuffer data = ByteBuffer.allocate(4096);
    List<Double> ms = new ArrayList<>();
    Path f = dir.resolve(".strata-bench-fsync-" + ProcessHandle.current().pid());
    try {
      for (int i = 0; i < times; i++) {
        long t0 = System.nanoTime();
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.APPEND)) {
          data.clear();
          while (data.hasRemaining()) {
            ch.write(data);
          }
          ch.force(true);
        }
        ms.add((System.nanoTime() - t0) / 1e6);
      }
    } finally {
      Files.deleteIfExists(f);
    }
    return BenchCommand.Io.median(ms);
  }

  @Override
  public void close() {
    GrpcChannels.close(channel);
    kill(server);
  }

  private static void kill(Process p) {
    try {
      p.getOutputStream().close(); // the polite way: it exits on EOF
    } catch (IOException ignored) {
      // it is killed below anyway
    }
    p.destroyForcibly();
    try {
      p.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
