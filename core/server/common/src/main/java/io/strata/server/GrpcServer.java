package io.strata.server;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A gRPC server bound to one host and port (port 0 picks a free one), with Strata's message limit and a
 * named executor. Start once, stop once. Thread-safe.
 */
public final class GrpcServer implements AutoCloseable {
  private final Server server;
  private final ExecutorService executor;
  private final String name;

  public GrpcServer(String name, String bindHost, int port, long maxMessageBytes,
      List<BindableService> services) {
    this.name = name;
    this.executor = Executors.newCachedThreadPool(namedDaemon(name + "-rpc"));
    NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(bindHost, port))
        .maxInboundMessageSize((int) maxMessageBytes)
        .permitKeepAliveTime(10, TimeUnit.SECONDS)
        .permitKeepAliveWithoutCalls(true)
        .executor(executor);
    for (BindableService s : services) {
      builder.addService(s);
    }
    this.server = builder.build();
  }

  /** Starts serving; throws with the address when the port is taken. */
  public GrpcServer start() throws IOException {
    try {
      server.start();
    } catch (IOException e) {
      executor.shutdownNow();
      throw new IOException(name + " cannot listen: " + e.getMessage(), e);
    }
    return this;
  }

  /** The port actually bound (useful after asking for port 0). */
  public int port() {
    return server.getPort();
  }

  @Override
  public void close() {
    server.shutdown();
    try {
      if (!server.awaitTermination(3, TimeUnit.SECONDS)) {
        server.shutdownNow();
        server.awaitTermination(3, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    }
    executor.shutdownNow();
  }

  /** A thread factory of daemon threads named {@code prefix-N}. */
  public static ThreadFactory namedDaemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
