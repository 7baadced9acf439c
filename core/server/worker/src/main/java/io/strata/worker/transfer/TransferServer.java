package io.strata.worker.transfer;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.EventExecutorGroup;
import io.strata.common.grpc.GrpcChannels;
import io.strata.server.DomainSocketFile;
import io.strata.server.GrpcServer;
import io.strata.worker.store.BlockStore;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's block transfer server (strata_transfer.proto): block reads outside gRPC, on a TCP port and
 * optionally a Unix domain socket. A read is one request frame, one header frame and the block's bytes, by default
 * sent by the kernel from the block file (sendfile on epoll; {@code FileChannel.transferTo} on NIO), so a
 * block crosses no JVM buffer and no thread hand-off per chunk ({@link Send} has the other way,
 * strata.worker.transfer.send). The data service (gRPC) stays the path for writes,
 * reads from the under file system and clients that turn this off.
 *
 * <p>Bounds: at most {@code maxConnections} connections (TCP and domain socket together; one more is
 * closed at once and its client reads through the data port, saying why), {@link TransferHandler#MAX_PENDING}
 * transfers per connection, requests of at most {@link #MAX_REQUEST_BYTES}. A transfer whose reader takes
 * nothing for the stall timeout is cut and its block released; a connection idle for the idle timeout is
 * closed.
 *
 * <p>Threading: one event loop group sends; requests are decoded and blocks opened on a small executor group,
 * serially per connection. Thread-safe; start once, close once.
 */
public final class TransferServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TransferServer.class);

  /** Longest request accepted; anything longer is refused and the connection closed. */
  static final int MAX_REQUEST_BYTES = 64 * 1024;

  private final BlockStore store;
  private final String bindHost;
  private final int wantPort;
  private final Path socketPath;
  private final int maxConnections;
  private final long stallMs;
  private final long idleMs;
  private final Send send;
  /** Most bytes of a block file an mmap send maps at once: the worker's read chunk size. */
  private final long mapWindow;
  private final Counters counters = new Counters();
  private EventLoopGroup group;
  private EventExecutorGroup handlers;
  private ChannelGroup connections;
  private Channel tcp;
  private Channel uds;

  /** How a block's bytes go onto a connection (strata.worker.transfer.send). */
  public enum Send {
    /** The kernel sends from the file (sendfile on epoll, transferTo on NIO). */
    SENDFILE,
    /** Written from read-only mappings of the file's range, a window at a time, each unmapped once written. */
    MMAP;

    /** The mode a key value names (sendfile, mmap). */
    public static Send of(String name) {
      return valueOf(name.toUpperCase(java.util.Locale.ROOT));
    }
  }

  /** What the server has done so far; tests and benchmarks read it. */
  static final class Counters {
    final AtomicLong requests = new AtomicLong();
    final AtomicLong bytesSent = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final AtomicLong stalled = new AtomicLong();
    final AtomicLong refusedConnections = new AtomicLong();
    final AtomicInteger transfersNow = new AtomicInteger();
    /** Bytes of block files mapped now by mmap sends, and the most there were at once. */
    final AtomicLong mappedNow = new AtomicLong();
    final AtomicLong mostMapped = new AtomicLong();

    void mapped(long bytes) {
      long now = mappedNow.addAndGet(bytes);
      mostMapped.accumulateAndGet(now, Math::max);
    }

    void unmapped(long bytes) {
      mappedNow.addAndGet(-bytes);
    }
  }

  /**
   * A server for {@code store} on {@code bindHost:port} (0: a free port) and, when {@code socketPath} is not
   * null, on that domain socket too. An mmap send maps at most {@code mapWindow} bytes of a block file at a time
   * (at least {@link BlockSends#WINDOW_MIN}).
   */
  public TransferServer(BlockStore store, String bindHost, int port, Path socketPath, int maxConnections,
      long stallMs, long idleMs, Send send, long mapWindow) {
    this.store = store;
    this.bindHost = bindHost;
    this.wantPort = port;
    this.socketPath = socketPath;
    this.maxConnections = maxConnections;
    this.stallMs = stallMs;
    this.idleMs = idleMs;
    this.send = send;
    this.mapWindow = mapWindow;
  }

  /** Binds the port (and the socket); fails with a message naming the address when it cannot. */
  public TransferServer start() throws IOException {
    boolean epoll = Epoll.isAvailable();
    if (socketPath != null && !epoll) {
      throw new IOException("Cannot serve block transfers on domain socket " + socketPath + ": Netty epoll is not "
          + "available (" + Epoll.unavailabilityCause() + ")");
    }
    int threads = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
    group = new MultiThreadIoEventLoopGroup(threads, GrpcServer.namedDaemon("worker-transfer-io"),
        epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    connections = new DefaultChannelGroup(group.next());
    // Opening a block may promote it (a copy between tiers) or wait for a slow disk: not on the event loop.
    handlers = new DefaultEventExecutorGroup(4, GrpcServer.namedDaemon("worker-transfer-handler"));
    try {
      tcp = bootstrap(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
          .bind(new InetSocketAddress(bindHost, wantPort)).sync().channel();
    } catch (Exception e) {
      close();
      throw new IOException("Cannot bind the block transfer port " + bindHost + ":" + wantPort + ": " + e.getMessage()
          + " (strata.worker.transfer.port)", e);
    }
    if (socketPath != null) {
      try {
        DomainSocketFile.prepare(socketPath);
        uds = bootstrap(EpollServerDomainSocketChannel.class)
            // A Unix socket's default buffers hold a fraction of a transfer: as for the data socket.
            .childOption(ChannelOption.SO_SNDBUF, GrpcChannels.DOMAIN_SOCKET_BUFFER_BYTES)
            .bind(new DomainSocketAddress(socketPath.toFile())).sync().channel();
        DomainSocketFile.restrict(socketPath, "block transfer");
      } catch (Exception e) {
        close();
        throw new IOException("Cannot bind the block transfer domain socket " + socketPath + ": " + e.getMessage()
            + " (strata.worker.transfer.domain.socket.path)", e);
      }
    }
    LOG.info("Block transfers served on {}:{}{}", bindHost, port(),
        socketPath == null ? "" : " and domain socket " + socketPath);
    return this;
  }

  private ServerBootstrap bootstrap(Class<? extends ServerChannel> type) {
    return new ServerBootstrap().group(group).channel(type).childHandler(new ChannelInitializer<Channel>() {
      @Override
      protected void initChannel(Channel ch) {
        if (connections.size() >= maxConnections) {
          long refused = counters.refusedConnections.incrementAndGet();
          if (refused == 1 || refused % 1000 == 0) {
            LOG.warn("Refused a block transfer connection: {} are open, the most served at once "
                + "(strata.worker.transfer.connections.max; {} refused so far)", connections.size(), refused);
          }
          ch.close();
          return;
        }
        connections.add(ch);
        ch.pipeline()
            // Writer idle observes a region's progress: only a transfer that moves nothing is cut.
            .addLast(new IdleStateHandler(true, 0, stallMs, idleMs, TimeUnit.MILLISECONDS))
            .addLast(new LengthFieldBasedFrameDecoder(MAX_REQUEST_BYTES, 0, 4, 0, 4))
            .addLast(handlers, new TransferHandler(store, counters, send, mapWindow));
      }
    });
  }

  /** The bound TCP port. */
  public int port() {
    return ((InetSocketAddress) tcp.localAddress()).getPort();
  }

  /** The domain socket served, or null. */
  public Path socketPath() {
    return uds == null ? null : socketPath;
  }

  /** Read requests answered with bytes so far. */
  public long requests() {
    return counters.requests.get();
  }

  /** Block bytes completely sent so far. */
  public long bytesSent() {
    return counters.bytesSent.get();
  }

  /** Requests refused or failed so far. */
  public long errors() {
    return counters.errors.get();
  }

  /** Transfers cut because their reader took nothing for the stall timeout. */
  public long stalled() {
    return counters.stalled.get();
  }

  /** The most bytes of block files mmap sends had mapped at once so far. */
  public long mostMappedBytes() {
    return counters.mostMapped.get();
  }

  /** Bytes of block files mmap sends have mapped now. */
  public long mappedBytesNow() {
    return counters.mappedNow.get();
  }

  /** Connections closed at once because the most served were open. */
  public long refusedConnections() {
    return counters.refusedConnections.get();
  }

  /** Transfers queued or in progress now (each holds its block's read lock). */
  public int transfersNow() {
    return counters.transfersNow.get();
  }

  @Override
  public void close() {
    // Order: stop accepting, end every connection (Netty releases unwritten regions: their blocks are
    // released), then stop the threads.
    if (tcp != null) {
      tcp.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
    if (uds != null) {
      uds.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
      DomainSocketFile.remove(socketPath, "block transfer");
    }
    if (connections != null) {
      connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
    // Both at once, each with a short quiet period: a closed connection's pipeline teardown hops between
    // the event loop and its handler thread, and neither may be gone while the other still hands it work.
    io.netty.util.concurrent.Future<?> loops = group == null ? null
        : group.shutdownGracefully(100, 5000, TimeUnit.MILLISECONDS);
    io.netty.util.concurrent.Future<?> handling = handlers == null ? null
        : handlers.shutdownGracefully(100, 5000, TimeUnit.MILLISECONDS);
    if (loops != null) {
      loops.awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
    if (handling != null) {
      handling.awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
  }
}
