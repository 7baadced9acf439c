package io.strata.client;

import io.grpc.ManagedChannel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.net.WorkerAddress;
import java.io.Closeable;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client's gRPC channels to workers, one per worker, opened on first use and kept until close. A
 * worker on this host (its host name is the client's {@code strata.user.hostname}: the same rule as
 * short-circuit reads, since a socket is only on this machine) is reached over its data domain socket
 * (Netty epoll) when {@code strata.user.data.domain.socket.enabled}; any other worker, or a local one
 * whose socket is missing, refuses connections or needs epoll this JVM lacks, over TCP. Each such
 * fallback is logged once per worker and kept for {@link #fallbackReasons()}.
 *
 * <p>The transport is chosen once per worker, when its channel is made; the socket is probed with a
 * plain connect first, outside any lock. Thread-safe.
 */
final class WorkerChannels implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerChannels.class);

  private final String localHost;
  private final boolean domainSocketEnabled;
  private final String socketPathTemplate;
  private final long maxMessageBytes;
  private final long flowWindowBytes;
  private final Map<WorkerAddress, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final Set<WorkerAddress> overDomainSocket = ConcurrentHashMap.newKeySet();
  private final List<String> fallbackReasons = new ArrayList<>();
  private final Set<WorkerAddress> loggedFallbacks = new HashSet<>();
  private EventLoopGroup group;
  private boolean closed;

  WorkerChannels(String localHost, boolean domainSocketEnabled, String socketPathTemplate, long maxMessageBytes,
      long flowWindowBytes) {
    this.localHost = localHost;
    this.domainSocketEnabled = domainSocketEnabled;
    this.socketPathTemplate = socketPathTemplate;
    this.maxMessageBytes = maxMessageBytes;
    this.flowWindowBytes = flowWindowBytes;
  }

  /** Whether the worker runs on this host (by host name), so its domain sockets are reachable. */
  boolean onThisHost(WorkerAddress worker) {
    return worker.host().equals(localHost);
  }

  /** The data domain socket of the worker with this data port. */
  Path socketPath(WorkerAddress worker) {
    return Path.of(socketPathTemplate.replace("${strata.worker.rpc.port}", Integer.toString(worker.rpcPort())));
  }

  /** The channel to a worker, made on first use. */
  ManagedChannel get(WorkerAddress worker) {
    ManagedChannel ch = channels.get(worker);
    if (ch != null) {
      return ch;
    }
    ManagedChannel made = open(worker);
    ch = channels.putIfAbsent(worker, made);
    if (ch != null) {
      GrpcChannels.close(made); // another thread made one meanwhile
      return ch;
    }
    synchronized (this) {
      if (!closed) {
        return made;
      }
    }
    channels.remove(worker, made);
    GrpcChannels.close(made);
    throw new IllegalStateException("FileSystemContext is closed");
  }

  /** Whether the channel to this worker (once made) streams over its domain socket rather than TCP. */
  boolean overDomainSocket(WorkerAddress worker) {
    return overDomainSocket.contains(worker);
  }

  private ManagedChannel open(WorkerAddress worker) {
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
    return GrpcChannels.forAddress(worker.host(), worker.rpcPort(), maxMessageBytes, flowWindowBytes);
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
      fallbackReasons.add(reason);
      if (!loggedFallbacks.add(worker)) {
        return;
      }
    }
    LOG.warn(reason);
  }

  /** Why local workers are reached over TCP rather than their domain sockets, oldest first. */
  synchronized List<String> fallbackReasons() {
    return List.copyOf(fallbackReasons);
  }

  @Override
  public void close() {
    EventLoopGroup g;
    synchronized (this) {
      closed = true;
      g = group;
    }
    for (ManagedChannel ch : channels.values()) {
      GrpcChannels.close(ch);
    }
    channels.clear();
    if (g != null) {
      g.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
    }
  }
}
