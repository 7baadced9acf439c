package io.strata.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.strata.common.grpc.ClientEventLoops;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.net.WorkerAddress;
import java.io.Closeable;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client's pool of gRPC channels to workers, at most one per worker. A worker on this host (its host
 * name is the client's {@code strata.user.hostname}: the same rule as short-circuit reads, since a socket
 * is only on this machine) is reached over its data domain socket (Netty epoll) when
 * {@code strata.user.data.domain.socket.enabled}; any other worker, or a local one whose socket is
 * missing, refuses connections or needs epoll this JVM lacks, over TCP. Each such fallback is logged once
 * per worker and kept for {@link #fallbackReasons()}.
 *
 * <p>Bounded: callers get a per-worker {@link Channel} handle ({@link #get}) whose every call takes the
 * worker's pooled channel (opening it if needed) and counts itself in flight until it closes. At most
 * {@code strata.user.worker.channels.max} channels stay open: opening one more first closes the least
 * recently used channels with no call in flight, and {@link #evictIdle} (run every half idle timeout by
 * the context's maintenance thread) closes those idle longer than
 * {@code strata.user.worker.channel.idle.timeout}. A channel with a call in flight is never closed, so
 * the count exceeds the bound only while more workers than that have calls in flight at once (a call is
 * never failed or made to wait for room); the call that ends such a stretch closes the idle extra ones. A
 * stream that pauses between calls keeps its handle: its next call reopens the worker's channel if it was
 * evicted meanwhile.
 *
 * <p>The transport is chosen when a worker's channel is made; the socket is probed with a plain connect
 * first, outside any lock. Retiring a channel is one compare-and-set of its in-flight count from 0 to -1,
 * so a call either got the channel before (and eviction skips it) or finds it retired and takes a new
 * one. A channel whose last connect failed ({@link GrpcChannels#connectFailed}: in gRPC's reconnect
 * backoff, failing calls at once) is replaced at its next call, so a worker restarted on its old address is
 * used again at once. Thread-safe; the monitor guards only map updates, never a connect or a wait.
 */
final class WorkerChannels implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerChannels.class);

  private final String localHost;
  private final boolean domainSocketEnabled;
  private final String socketPathTemplate;
  private final long maxMessageBytes;
  private final long flowWindowBytes;
  private final int maxChannels;
  private final long idleNanos;
  private final LongSupplier nanoClock;
  /** The event loops of the TCP channels: the context's, which outlive this pool (it closes them). */
  private final ClientEventLoops tcpLoops;
  private final Map<WorkerAddress, Pooled> channels = new ConcurrentHashMap<>();
  private final Set<WorkerAddress> overDomainSocket = ConcurrentHashMap.newKeySet();
  static final int FALLBACK_REASONS_KEPT = 100;
  private final List<String> fallbackReasons = new ArrayList<>();
  private final Set<WorkerAddress> loggedFallbacks = new HashSet<>();
  private final AtomicLong opened = new AtomicLong();
  private int peak;
  private EventLoopGroup group;
  private boolean closed;

  /** One worker's open channel and the calls in flight on it (-1 once retired). */
  private static final class Pooled {
    final ManagedChannel channel;
    final AtomicInteger inFlight = new AtomicInteger();
    volatile long lastUsedNanos;
    /** Set when its pool is retired: the last call to finish shuts the channel down. */
    volatile boolean draining;

    Pooled(ManagedChannel channel, long now) {
      this.channel = channel;
      this.lastUsedNanos = now;
    }

    boolean tryAcquire() {
      while (true) {
        int n = inFlight.get();
        if (n < 0) {
          return false;
        }
        if (inFlight.compareAndSet(n, n + 1)) {
          return true;
        }
      }
    }

    void release(long now) {
      lastUsedNanos = now;
      if (inFlight.decrementAndGet() == 0 && draining && tryRetire()) {
        channel.shutdown();
      }
    }

    /** Retires the channel if no call is in flight on it; true when this call retired it. */
    boolean tryRetire() {
      return inFlight.compareAndSet(0, -1);
    }
  }

  WorkerChannels(String localHost, boolean domainSocketEnabled, String socketPathTemplate, long maxMessageBytes,
      long flowWindowBytes, int maxChannels, Duration idleTimeout, LongSupplier nanoClock, ClientEventLoops tcpLoops) {
    this.localHost = localHost;
    this.tcpLoops = tcpLoops;
    this.domainSocketEnabled = domainSocketEnabled;
    this.socketPathTemplate = socketPathTemplate;
    this.maxMessageBytes = maxMessageBytes;
    this.flowWindowBytes = flowWindowBytes;
    this.maxChannels = maxChannels;
    this.idleNanos = idleTimeout.toNanos();
    this.nanoClock = nanoClock;
  }

  /** Whether the worker runs on this host (by host name), so its domain sockets are reachable. */
  boolean onThisHost(WorkerAddress worker) {
    return worker.host().equals(localHost);
  }

  /** The data domain socket of the worker with this data port. */
  Path socketPath(WorkerAddress worker) {
    return Path.of(socketPathTemplate.replace("${strata.worker.rpc.port}", Integer.toString(worker.rpcPort())));
  }


  /** Worker channels open now. */
  int open() {
    return channels.size();
  }

  /** The most worker channels open at once so far. */
  synchronized int peak() {
    return peak;
  }

  /** Worker channels opened so far (reopening an evicted one counts again). */
  long openedTotal() {
    return opened.get();
  }

  /**
   * Takes the worker's channel for one call, opening it if needed (the caller must {@link Pooled#release});
   * null once this pool is closed or retired.
   */
  private Pooled acquire(WorkerAddress worker) {
    while (true) {
      Pooled p = channels.get(worker);
      if (p != null && GrpcChannels.connectFailed(p.channel)) {
        retireFailed(worker, p); // a worker back on its old address is reached by a new channel now
        p = null;
      }
      if (p == null) {
        p = openPooled(worker);
        if (p == null) {
          return null;
        }
      }
      if (p.tryAcquire()) {
        p.lastUsedNanos = nanoClock.getAsLong();
        return p;
      }
      channels.remove(worker, p); // retired by eviction meanwhile: take a new one
    }
  }

  /**
   * Takes a channel whose last connect failed out of the pool: shut down now if no call is in flight on it,
   * else by the last one to finish.
   */
  private void retireFailed(WorkerAddress worker, Pooled p) {
    if (channels.remove(worker, p)) {
      p.draining = true;
      if (p.tryRetire()) {
        p.channel.shutdown();
      }
    }
  }

  private Pooled openPooled(WorkerAddress worker) {
    synchronized (this) {
      if (closed) {
        return null;
      }
    }
    ManagedChannel ch;
    try {
      ch = openChannel(worker);
    } catch (IllegalStateException e) {
      synchronized (this) {
        if (closed) {
          return null; // retired or closed while opening
        }
      }
      throw e;
    }
    Pooled made = new Pooled(ch, nanoClock.getAsLong());
    List<Pooled> retired = new ArrayList<>();
    Pooled won;
    synchronized (this) {
      won = closed ? null : channels.get(worker);
      if (!closed && won == null) {
        makeRoom(maxChannels - 1, retired);
        channels.put(worker, made);
        opened.incrementAndGet();
        peak = Math.max(peak, channels.size());
        won = made;
      }
    }
    for (Pooled r : retired) {
      r.channel.shutdown();
    }
    if (won != made) {
      made.channel.shutdown();
    }
    return won;
  }

  /** Retires least recently used idle channels until at most {@code keep} stay; caller holds the monitor. */
  private void makeRoom(int keep, List<Pooled> retired) {
    if (channels.size() <= keep) {
      return;
    }
    List<Map.Entry<WorkerAddress, Pooled>> byAge = new ArrayList<>(channels.entrySet());
    byAge.sort(Comparator.comparingLong(e -> e.getValue().lastUsedNanos));
    for (Map.Entry<WorkerAddress, Pooled> e : byAge) {
      if (channels.size() <= keep) {
        return;
      }
      if (e.getValue().tryRetire()) {
        channels.remove(e.getKey(), e.getValue());
        retired.add(e.getValue());
      }
    }
  }

  /** Closes least recently used idle channels until at most the bound stay open (none if all are busy). */
  private void trimToBound() {
    List<Pooled> retired = new ArrayList<>();
    synchronized (this) {
      if (!closed) {
        makeRoom(maxChannels, retired);
      }
    }
    for (Pooled r : retired) {
      r.channel.shutdown();
    }
  }

  /** Closes the channels with no call in flight that were last used an idle timeout ago or more. */
  void evictIdle() {
    long now = nanoClock.getAsLong();
    List<Pooled> retired = new ArrayList<>();
    synchronized (this) {
      for (Map.Entry<WorkerAddress, Pooled> e : channels.entrySet()) {
        Pooled p = e.getValue();
        if (now - p.lastUsedNanos >= idleNanos && p.tryRetire()) {
          channels.remove(e.getKey(), p);
          retired.add(p);
        }
      }
    }
    for (Pooled r : retired) {
      r.channel.shutdown();
    }
  }

  /**
   * A call on the worker's pooled channel, counted in flight until it closes; null once this pool is
   * closed or retired (the caller takes the context's current pool instead).
   */
  <Q, R> ClientCall<Q, R> newCall(WorkerAddress worker, MethodDescriptor<Q, R> method, CallOptions options) {
    Pooled p = acquire(worker);
    if (p == null) {
      return null;
    }
    ClientCall<Q, R> call;
    try {
      call = p.channel.newCall(method, options);
    } catch (RuntimeException e) {
      p.release(nanoClock.getAsLong());
      throw e;
    }
    AtomicBoolean released = new AtomicBoolean();
    Runnable release = () -> {
      if (released.compareAndSet(false, true)) {
        p.release(nanoClock.getAsLong());
        if (channels.size() > maxChannels) { // a hint only: trimToBound decides under the monitor
          trimToBound(); // the last of more calls in flight than the bound: the idle extra channels go now
        }
      }
    };
    return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        try {
          super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
            @Override
            public void onClose(Status status, Metadata trailers) {
              try {
                super.onClose(status, trailers);
              } finally {
                release.run();
              }
            }
          }, headers);
        } catch (RuntimeException e) {
          release.run();
          throw e;
        }
      }
    };
  }

  /**
   * Retires this pool (the configuration changed): no new call takes it; idle channels shut down now, busy
   * ones when their last call in flight finishes, so no stream is cut. {@link #closeIfDrained} frees the
   * rest once all are down.
   */
  void retire() {
    List<Pooled> all;
    synchronized (this) {
      closed = true;
      all = new ArrayList<>(channels.values());
    }
    for (Pooled p : all) {
      p.draining = true;
      if (p.tryRetire()) {
        p.channel.shutdown();
      }
    }
  }

  /** For a retired pool: true (and its event loops are let go) once no channel has a call in flight. */
  boolean closeIfDrained() {
    EventLoopGroup g;
    synchronized (this) {
      for (Pooled p : channels.values()) {
        if (p.inFlight.get() >= 0) {
          return false;
        }
      }
      g = group;
      group = null;
    }
    if (g != null) {
      g.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    }
    return true;
  }

  /**
   * A worker's stable channel for stubs: each call goes to that worker's channel in the context's current
   * pool (so a stub kept across evictions or a configuration change keeps working). Thread-safe.
   */
  static final class Handle extends Channel {
    private final WorkerAddress worker;
    private final java.util.function.Supplier<WorkerChannels> current;

    Handle(WorkerAddress worker, java.util.function.Supplier<WorkerChannels> current) {
      this.worker = worker;
      this.current = current;
    }

    @Override
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
      while (true) {
        WorkerChannels pool = current.get();
        ClientCall<Q, R> call = pool.newCall(worker, method, options);
        if (call != null) {
          return call;
        }
        if (pool == current.get()) {
          throw new IllegalStateException("FileSystemContext is closed");
        }
      }
    }

    @Override
    public String authority() {
      return worker.host() + ":" + worker.rpcPort();
    }
  }

  /** Whether the channel to this worker (once made) streams over its domain socket rather than TCP. */
  boolean overDomainSocket(WorkerAddress worker) {
    return overDomainSocket.contains(worker);
  }

  private ManagedChannel openChannel(WorkerAddress worker) {
    if (domainSocketEnabled && onThisHost(worker)) {
      Path socket = socketPath(worker);
      String why = unusable(socket);
      if (why == null) {
        ManagedChannel ch = GrpcChannels.forDomainSocket(socket, maxMessageBytes, flowWindowBytes, group());
        overDomainSocket.add(worker);
        return ch;
      }
      fallback(worker, "Streaming with worker " + worker + " over its domain socket is not possible: " + why
          + "; streaming through its TCP data port");
    }
    overDomainSocket.remove(worker);
    return GrpcChannels.forAddress(worker.host(), worker.rpcPort(), maxMessageBytes, flowWindowBytes, tcpLoops);
  }

  /** Why the socket cannot be used, or null when a connect to it succeeds. */
  private static String unusable(Path socket) {
    if (!Epoll.isAvailable()) {
      return "Netty epoll is not available (" + Epoll.unavailabilityCause() + ")";
    }
    if (!Files.exists(socket)) {
      return "no socket at " + socket;
    }
    try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      probe.connect(UnixDomainSocketAddress.of(socket));
      return null;
    } catch (IOException | RuntimeException e) {
      return "cannot connect to " + socket + " (" + e.getMessage() + ")";
    }
  }

  private synchronized EventLoopGroup group() {
    if (closed) {
      throw new IllegalStateException("FileSystemContext is closed");
    }
    if (group == null) {
      AtomicInteger n = new AtomicInteger();
      group = new MultiThreadIoEventLoopGroup(0, r -> {
        Thread t = new Thread(r, "strata-client-uds-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      }, EpollIoHandler.newFactory());
    }
    return group;
  }

  private void fallback(WorkerAddress worker, String reason) {
    synchronized (this) {
      if (fallbackReasons.size() == FALLBACK_REASONS_KEPT) {
        fallbackReasons.remove(0); // a long-lived client keeps the recent ones only
      }
      fallbackReasons.add(reason);
      if (!loggedFallbacks.add(worker)) {
        return;
      }
    }
    LOG.warn(reason);
  }

  /**
   * The last {@value #FALLBACK_REASONS_KEPT} reasons local workers are reached over TCP rather than their
   * domain sockets, oldest first.
   */
  synchronized List<String> fallbackReasons() {
    return List.copyOf(fallbackReasons);
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    for (Pooled p : channels.values()) {
      GrpcChannels.close(p.channel);
    }
    channels.clear();
    ClientEventLoops.end(takeGroup());
  }

  /** The domain-socket event loops, now no longer this pool's (null when none were made). */
  private synchronized EventLoopGroup takeGroup() {
    EventLoopGroup g = group;
    group = null;
    return g;
  }
}
