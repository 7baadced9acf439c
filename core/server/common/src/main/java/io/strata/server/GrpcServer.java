package io.strata.server;

import io.grpc.Attributes;
import io.grpc.BindableService;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.strata.common.conf.StrataConf;
import io.strata.common.grpc.GrpcChannels;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A gRPC server bound to one host and port (port 0 picks a free one), with Strata's message limit and
 * bounded resources ({@link Limits}): a fixed pool of handler threads with a bounded queue, past which
 * calls are refused with RESOURCE_EXHAUSTED ({@link RpcAdmission}); a cap on concurrent calls per
 * connection; keepalive pings that close connections of vanished clients; idle connections closed.
 * Optionally it also listens on a Unix domain socket ({@link #serveOnDomainSocket}) with the same
 * services, limits and handler pool; each listener counts the calls it receives per method.
 * Start once, stop once. Thread-safe.
 */
public final class GrpcServer implements AutoCloseable {
  private final Server server;
  private final RpcAdmission executor;
  private final String name;
  private final long maxMessageBytes;
  private final Limits limits;
  private final List<ServerServiceDefinition> services;
  /** Full names of the methods run on the transport thread; empty: every call on the handler pool. */
  private final java.util.Set<String> inlineMethods;
  private final CallCounts tcpCalls = new CallCounts(false);
  private final CallCounts domainSocketCalls = new CallCounts(true);
  private final io.strata.server.metrics.RpcMetrics rpcMetrics = new io.strata.server.metrics.RpcMetrics();
  private Server domainSocketServer;
  private Path domainSocket;
  private List<EventLoopGroup> domainSocketGroups = List.of();

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
    this(name, bindHost, port, maxMessageBytes, limits, services, java.util.Set.of());
  }

  /**
   * As above; the methods named in {@code inlineMethods} (full names, {@code service/Method}) run on the
   * transport thread, every other call on the handler pool ({@link CallDispatch}). An inline method must
   * never wait: what may block it hands to {@link #handOff}.
   */
  public GrpcServer(String name, String bindHost, int port, long maxMessageBytes, Limits limits,
      List<ServerServiceDefinition> services, java.util.Set<String> inlineMethods) {
    this.inlineMethods = java.util.Set.copyOf(inlineMethods);
    this.name = name;
    this.executor = new RpcAdmission(name, limits.threads(), limits.queueMax());
    this.maxMessageBytes = maxMessageBytes;
    this.limits = limits;
    this.services = List.copyOf(services);
    this.server = configure(NettyServerBuilder.forAddress(new InetSocketAddress(bindHost, port)), tcpCalls).build();
  }

  /** The limits, handler pool and services every listener of this server shares. */
  private NettyServerBuilder configure(NettyServerBuilder builder, CallCounts counts) {
    builder.maxInboundMessageSize((int) maxMessageBytes)
        .maxConcurrentCallsPerConnection(limits.streamsPerConnection())
        .keepAliveTime(limits.keepAliveTime().toMillis(), TimeUnit.MILLISECONDS)
        .keepAliveTimeout(limits.keepAliveTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .permitKeepAliveTime(limits.permitKeepAliveMin().toMillis(), TimeUnit.MILLISECONDS)
        .permitKeepAliveWithoutCalls(true)
        .maxConnectionIdle(limits.connectionIdleMax().toMillis(), TimeUnit.MILLISECONDS)
        .intercept(executor.interceptor())
        .intercept(counts)
        .intercept(rpcMetrics);
    if (inlineMethods.isEmpty()) {
      builder.executor(executor);
    } else {
      // Added last, so it runs first: it decides the thread before the admission check runs on it.
      builder.directExecutor().intercept(new CallDispatch(inlineMethods, executor));
    }
    for (ServerServiceDefinition s : services) {
      builder.addService(s);
    }
    return builder;
  }

  /**
   * Also serves every service on a Unix domain socket (Netty epoll) at {@code socket}, with the same
   * limits and handler pool: for clients on this host, so no new address is advertised. Call after
   * {@link #start()} (a worker derives the path from its bound port, which also makes it the owner of
   * the path: a stale file there is replaced). The file gets mode 0660 and is removed by {@link #close()}.
   * Fails naming the path when epoll is missing or the socket cannot be bound.
   */
  public synchronized GrpcServer serveOnDomainSocket(Path socket) throws IOException {
    if (domainSocketServer != null) {
      throw new IllegalStateException(name + " already serves on domain socket " + domainSocket);
    }
    if (!Epoll.isAvailable()) {
      throw new IOException(name + " cannot serve on domain socket " + socket + ": Netty epoll is not available ("
          + Epoll.unavailabilityCause() + ")");
    }
    DomainSocketFile.prepare(socket);
    EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, namedDaemon(name + "-uds-boss"),
        EpollIoHandler.newFactory());
    EventLoopGroup workers = new MultiThreadIoEventLoopGroup(0, namedDaemon(name + "-uds-io"),
        EpollIoHandler.newFactory());
    Server s = configure(NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toFile()))
        .channelType(EpollServerDomainSocketChannel.class)
        .bossEventLoopGroup(boss)
        .workerEventLoopGroup(workers)
        // A Unix socket's default buffers (net.core.wmem_default, ~208 KiB) hold a fifth of a 1 MiB chunk,
        // so each chunk costs several sender and receiver wake-ups where TCP loopback autotunes to megabytes.
        .withChildOption(io.netty.channel.ChannelOption.SO_SNDBUF, GrpcChannels.DOMAIN_SOCKET_BUFFER_BYTES)
        .withChildOption(io.netty.channel.ChannelOption.SO_RCVBUF, GrpcChannels.DOMAIN_SOCKET_BUFFER_BYTES)
        // gRPC sets SO_KEEPALIVE on every accepted connection, which a Unix socket lacks (Netty warned at each);
        // an option given as null is removed.
        .withChildOption(io.netty.channel.ChannelOption.SO_KEEPALIVE, null)
        .addTransportFilter(new DomainSocketPeers(socket)), domainSocketCalls).build();
    try {
      s.start();
      DomainSocketFile.restrict(socket, name + " data");
    } catch (IOException e) {
      s.shutdownNow();
      boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      DomainSocketFile.remove(socket, name + " data");
      throw new IOException(name + " cannot serve on domain socket " + socket + ": " + e.getMessage(), e);
    }
    domainSocketServer = s;
    domainSocket = socket;
    domainSocketGroups = List.of(boss, workers);
    return this;
  }

  /** The domain socket this server also listens on, or null. */
  public synchronized Path domainSocket() {
    return domainSocket;
  }

  /** Calls of a method (its bare name, e.g. {@code ReadBlock}) received so far over the TCP port. */
  public long tcpCalls(String method) {
    return tcpCalls.count(method);
  }

  /** Calls of a method (its bare name) received so far over the domain socket. */
  public long domainSocketCalls(String method) {
    return domainSocketCalls.count(method);
  }

  /**
   * Names each domain-socket connection: the peer address a domain socket reports is the same for every
   * client (their sockets are unnamed), and per-connection limits are keyed by the peer address.
   */
  private static final class DomainSocketPeers extends ServerTransportFilter {
    private final Path socket;
    private final AtomicLong next = new AtomicLong();

    DomainSocketPeers(Path socket) {
      this.socket = socket;
    }

    @Override
    public Attributes transportReady(Attributes attrs) {
      return attrs.toBuilder().set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR,
          new DomainSocketPeer(socket, next.incrementAndGet())).build();
    }
  }

  /** One client connection on a domain socket (equal only to itself, by number). */
  public static final class DomainSocketPeer extends SocketAddress {
    private static final long serialVersionUID = 1L;
    private final String socket;
    private final long number;

    DomainSocketPeer(Path socket, long number) {
      this.socket = socket.toString();
      this.number = number;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof DomainSocketPeer p && p.number == number && p.socket.equals(socket);
    }

    @Override
    public int hashCode() {
      return Long.hashCode(number) * 31 + socket.hashCode();
    }

    @Override
    public String toString() {
      return "uds:" + socket + "#" + number;
    }
  }

  /** Set in the context of every call received over the domain socket. */
  private static final io.grpc.Context.Key<Boolean> ON_DOMAIN_SOCKET = io.grpc.Context.keyWithDefault(
      "strata-on-domain-socket", false);

  /**
   * Whether the current call (read from the gRPC context, so on the call's own threads) came over this
   * server's domain socket rather than its TCP port.
   */
  public static boolean onDomainSocket() {
    return ON_DOMAIN_SOCKET.get();
  }

  /**
   * Adds this server's RPC metrics to a process's registry: calls per transport and method
   * ({@code strata_rpc_calls_total}), their latency and failures ({@link io.strata.server.metrics.RpcMetrics}),
   * handler threads busy, tasks queued and calls refused.
   */
  public void registerMetrics(io.prometheus.metrics.model.registry.PrometheusRegistry registry) {
    rpcMetrics.register(registry);
    io.prometheus.metrics.core.metrics.CounterWithCallback.builder().name("strata_rpc_calls_total")
        .help("RPCs received, per transport (tcp, domain_socket) and method").labelNames("transport", "method")
        .callback(cb -> {
          tcpCalls.byMethod.forEach((m, n) -> cb.call(n.sum(), "tcp", m));
          domainSocketCalls.byMethod.forEach((m, n) -> cb.call(n.sum(), "domain_socket", m));
        }).register(registry);
    io.prometheus.metrics.core.metrics.CounterWithCallback.builder().name("strata_rpc_refused_total")
        .help("RPCs refused with RESOURCE_EXHAUSTED because every handler thread was busy and the queue full")
        .callback(cb -> cb.call(refusedCalls())).register(registry);
    io.prometheus.metrics.core.metrics.GaugeWithCallback.builder().name("strata_rpc_queued_tasks")
        .help("Tasks waiting in the RPC handler pool's queue").callback(cb -> cb.call(queuedTasks())).register(registry);
    io.prometheus.metrics.core.metrics.GaugeWithCallback.builder().name("strata_rpc_active_threads")
        .help("RPC handler threads running").callback(cb -> cb.call(activeThreads())).register(registry);
  }

  /** Calls received per method on one listener; tests and benchmarks tell the transports apart by it. */
  private static final class CallCounts implements ServerInterceptor {
    private final Map<String, LongAdder> byMethod = new ConcurrentHashMap<>();
    private final boolean domainSocket;

    CallCounts(boolean domainSocket) {
      this.domainSocket = domainSocket;
    }

    long count(String method) {
      LongAdder n = byMethod.get(method);
      return n == null ? 0 : n.sum();
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
        ServerCallHandler<Q, R> next) {
      byMethod.computeIfAbsent(call.getMethodDescriptor().getBareMethodName(), k -> new LongAdder()).increment();
      if (domainSocket) {
        return io.grpc.Contexts.interceptCall(io.grpc.Context.current().withValue(ON_DOMAIN_SOCKET, true), call,
            headers, next);
      }
      return next.startCall(call, headers);
    }
  }

  /**
   * The error of a server that could not listen on {@code bind:port}, saying why in the user's terms: its bind host
   * does not resolve, or the port is in use (by another {@code who}, or any program), naming the keys that set them.
   */
  public static IOException cannotListen(String who, String bind, int port, String hostKey, String portKey,
      IOException e) {
    if (new InetSocketAddress(bind, Math.max(0, port)).isUnresolved()) {
      return new IOException("The " + who + " cannot listen: its bind host '" + bind + "' (" + hostKey
          + ") does not resolve to an address of this machine", e);
    }
    if (!local(bind)) {
      return new IOException("The " + who + " cannot listen: its bind host '" + bind + "' (" + hostKey + ") is not an "
          + "address of this machine", e);
    }
    if (inUse(bind, port)) {
      return new IOException("The " + who + " cannot listen on " + bind + ":" + port + ": the port is in use (is "
          + "another " + who + " or bin/strata-start.sh local running? " + portKey + " sets the port, " + hostKey
          + " the host)", e);
    }
    return new IOException("The " + who + " cannot listen on " + bind + ":" + port + " (" + hostKey + ", " + portKey
        + "): " + e.getMessage(), e);
  }

  /** Whether a socket can be bound on {@code bind} at all (any port): the host is one of this machine's. */
  private static boolean local(String bind) {
    try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
      probe.bind(new InetSocketAddress(bind, 0));
      return true;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /**
   * Whether another socket listens on {@code bind:port} now: a plain bind there is refused (Netty's epoll
   * transport reports that as a native error, not a {@link java.net.BindException}).
   */
  private static boolean inUse(String bind, int port) {
    if (port <= 0) {
      return false;
    }
    try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
      probe.bind(new InetSocketAddress(bind, port));
      return false;
    } catch (java.net.BindException taken) {
      return true;
    } catch (IOException | RuntimeException other) {
      return false;
    }
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

  /**
   * Runs {@code work} on the handler pool: the blocking part of an inline method. When the pool and its
   * queue are full, {@code refused} gets the RESOURCE_EXHAUSTED status instead (on a refusing thread), as
   * a call dispatched to the pool would.
   */
  public void handOff(Runnable work, java.util.function.Consumer<io.grpc.StatusException> refused) {
    executor.execute(() -> {
      if (executor.saturatedHere()) {
        refused.accept(executor.refusal());
      } else {
        work.run();
      }
    });
  }

  /** Calls refused so far because every handler thread was busy and the queue full. */
  public long refusedCalls() {
    return executor.refused();
  }

  /** Tasks the handler pool has run so far (tests: how many hand-offs calls cost). */
  long tasksRun() {
    return executor.tasksRun();
  }

  /** Tasks waiting in the handler pool's queue now. */
  public int queuedTasks() {
    return executor.queued();
  }

  /** Handler threads running now (never more than {@link Limits#threads()}). */
  public int activeThreads() {
    return executor.activeThreads();
  }

  @Override
  public void close() {
    Server uds;
    Path udsPath;
    List<EventLoopGroup> groups;
    synchronized (this) {
      uds = domainSocketServer;
      udsPath = domainSocket;
      groups = domainSocketGroups;
    }
    if (uds != null) {
      uds.shutdown();
    }
    stop(server);
    if (uds != null) {
      stop(uds);
      for (EventLoopGroup g : groups) {
        g.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
      }
      DomainSocketFile.remove(udsPath, name + " data");
    }
    executor.shutdownNow();
  }

  private static void stop(Server s) {
    s.shutdown();
    try {
      if (!s.awaitTermination(3, TimeUnit.SECONDS)) {
        s.shutdownNow();
        s.awaitTermination(3, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      s.shutdownNow();
      Thread.currentThread().interrupt();
    }
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
