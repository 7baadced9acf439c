package io.strata.server;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.strata.common.conf.StrataConf;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A gRPC server bound to one host and port (port 0 picks a free one), with Strata's message limit and
 * bounded resources ({@link Limits}): a fixed pool of handler threads with a bounded queue, past which
 * calls are refused with RESOURCE_EXHAUSTED ({@link RpcAdmission}); a cap on concurrent calls per
 * connection; keepalive pings that close connections of vanished clients; idle connections closed.
 * Start once, stop once. Thread-safe.
 */
public final class GrpcServer implements AutoCloseable {
  private final Server server;
  private final RpcAdmission executor;
  private final String name;

  /** The server's resource bounds (see {@link ServerKeys}). */
  public record Limits(int threads, int queueMax, int streamsPerConnection, Duration keepAliveTime,
      Duration keepAliveTimeout, Duration permitKeepAliveMin, Duration connectionIdleMax) {
    /** The defaults of every key. */
    public static final Limits DEFAULTS = from(StrataConf.defaults());

    public static Limits from(StrataConf conf) {
      return new Limits(conf.get(ServerKeys.RPC_THREADS), conf.get(ServerKeys.RPC_QUEUE_MAX),
          conf.get(ServerKeys.RPC_STREAMS_PER_CONNECTION_MAX), conf.get(ServerKeys.RPC_KEEPALIVE_TIME),
          conf.get(ServerKeys.RPC_KEEPALIVE_TIMEOUT), conf.get(ServerKeys.RPC_KEEPALIVE_PERMIT_MIN),
          conf.get(ServerKeys.RPC_CONNECTION_IDLE_MAX));
    }
  }

  /** A server with the default {@link Limits}. */
  public GrpcServer(String name, String bindHost, int port, long maxMessageBytes,
      List<BindableService> services) {
    this(name, bindHost, port, maxMessageBytes, Limits.DEFAULTS,
        services.stream().map(BindableService::bindService).toList());
  }

  public GrpcServer(String name, String bindHost, int port, long maxMessageBytes, Limits limits,
      List<ServerServiceDefinition> services) {
    this.name = name;
    this.executor = new RpcAdmission(name, limits.threads(), limits.queueMax());
    NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(bindHost, port))
        .maxInboundMessageSize((int) maxMessageBytes)
        .maxConcurrentCallsPerConnection(limits.streamsPerConnection())
        .keepAliveTime(limits.keepAliveTime().toMillis(), TimeUnit.MILLISECONDS)
        .keepAliveTimeout(limits.keepAliveTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .permitKeepAliveTime(limits.permitKeepAliveMin().toMillis(), TimeUnit.MILLISECONDS)
        .permitKeepAliveWithoutCalls(true)
        .maxConnectionIdle(limits.connectionIdleMax().toMillis(), TimeUnit.MILLISECONDS)
        .executor(executor)
        .intercept(executor.interceptor());
    for (ServerServiceDefinition s : services) {
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

  /** Calls refused so far because every handler thread was busy and the queue full. */
  public long refusedCalls() {
    return executor.refused();
  }

  /** Handler threads running now (never more than {@link Limits#threads()}). */
  public int activeThreads() {
    return executor.activeThreads();
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
