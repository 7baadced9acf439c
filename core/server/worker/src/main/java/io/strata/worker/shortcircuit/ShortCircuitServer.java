package io.strata.worker.shortcircuit;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.DomainSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.EventExecutorGroup;
import io.strata.worker.store.BlockStore;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's short-circuit server: a Unix domain socket (Netty epoll) on which local clients open
 * blocks, receive their file descriptors (SCM_RIGHTS) or paths, and close them, and write blocks
 * themselves into temp blocks the worker grants space for and commits (protocol in
 * strata_shortcircuit.proto). Every block opened on a connection holds the store's read lock until the
 * client closes it or the connection ends, so an open block is never evicted, moved or removed under a
 * reader, and a client that dies leaks nothing.
 *
 * <p>The socket file is created fresh (a stale one from a dead worker is replaced) with mode 0660: the
 * worker's user and group only. Requests run on a small executor group, serially per connection, never
 * on the socket's event loop (opening may promote a block, which copies it). Thread-safe; start once,
 * close once.
 */
public final class ShortCircuitServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ShortCircuitServer.class);

  /** Longest request accepted; anything longer is refused and the connection closed. */
  static final int MAX_FRAME_BYTES = 64 * 1024;

  private final BlockStore store;
  private final Path socketPath;
  private final io.strata.worker.rpc.Committer committer;
  private final int maxConnections;
  private final Counters counters = new Counters();
  private final MemoryFileSystems memory = new MemoryFileSystems();
  private EventLoopGroup group;
  private EventExecutorGroup handlers;
  private java.util.concurrent.ExecutorService commits;
  private Channel serverChannel;
  private io.netty.channel.group.ChannelGroup connections;

  /** What the server has done so far; tests and benchmarks read it. */
  static final class Counters {
    final AtomicLong opens = new AtomicLong();
    /** Opens answered with the block's bytes (small blocks), counted in {@link #opens} too. */
    final AtomicLong inlined = new AtomicLong();
    final AtomicLong fdsSent = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final AtomicInteger openNow = new AtomicInteger();
    final AtomicLong tempsCreated = new AtomicLong();
    final AtomicLong bytesCommitted = new AtomicLong();
    /** Bytes of the blocks opened for short-circuit reads (clients read them directly). */
    final AtomicLong bytesOpened = new AtomicLong();
    final AtomicLong abortedByDisconnect = new AtomicLong();
    final AtomicInteger writesNow = new AtomicInteger();
    /** Connections closed at once because {@code maxConnections} were open. */
    final AtomicLong refusedConnections = new AtomicLong();
  }

  /** A server whose short-circuit writes commit their blocks at the master through {@code committer}. */
  public ShortCircuitServer(BlockStore store, Path socketPath, io.strata.worker.rpc.Committer committer) {
    this(store, socketPath, committer, 1024);
  }

  /** As above, serving at most {@code maxConnections} connections at once (one more is closed at once). */
  public ShortCircuitServer(BlockStore store, Path socketPath, io.strata.worker.rpc.Committer committer,
      int maxConnections) {
    this.store = store;
    this.socketPath = socketPath;
    this.committer = committer;
    this.maxConnections = maxConnections;
  }

  /** Binds the socket; fails with a message naming the path when it cannot. */
  public ShortCircuitServer start() throws IOException {
    if (!Epoll.isAvailable()) {
      throw new IOException("Cannot serve short-circuit reads on " + socketPath + ": Netty epoll is not available ("
          + Epoll.unavailabilityCause() + ")");
    }
    // A socket file left by a worker that died: the data port is already ours, so no live worker uses it.
    io.strata.server.DomainSocketFile.prepare(socketPath);
    group = new MultiThreadIoEventLoopGroup(1, io.strata.server.GrpcServer.namedDaemon("worker-sc-io"),
        EpollIoHandler.newFactory());
    connections = new io.netty.channel.group.DefaultChannelGroup(group.next());
    // A connection is served by one of these threads; a commit waits for the master and a grant may evict,
    // so more threads than cores keep one writer's commit from holding up the others' requests.
    handlers = new DefaultEventExecutorGroup(4, io.strata.server.GrpcServer.namedDaemon("worker-sc-handler"));
    // Commits wait for the master: on threads of their own, so a slow master stalls no handler thread. An
    // honest client has one commit in flight per connection (the protocol is lockstep), so the queue holds
    // one per connection; past it (a client that does not wait) the commit is refused (UNAVAILABLE) and its
    // temp block dropped, never run on the handler thread.
    commits = new java.util.concurrent.ThreadPoolExecutor(4, 4, 0, TimeUnit.MILLISECONDS,
        new java.util.concurrent.ArrayBlockingQueue<>(maxConnections),
        io.strata.server.GrpcServer.namedDaemon("worker-sc-commit"));
    try {
      serverChannel = new ServerBootstrap().group(group).channel(EpollServerDomainSocketChannel.class)
          .childHandler(new ChannelInitializer<DomainSocketChannel>() {
            @Override
            protected void initChannel(DomainSocketChannel ch) {
              if (connections.size() >= maxConnections) {
                // Every connection holds a descriptor: past the bound the client streams instead.
                long refused = counters.refusedConnections.incrementAndGet();
                if (refused == 1 || refused % 1000 == 0) {
                  LOG.warn("Refused a short-circuit connection on {}: {} are open, the most served at once "
                      + "(strata.worker.shortcircuit.connections.max; {} refused so far)", socketPath,
                      connections.size(), refused);
                }
                ch.close();
                return;
              }
              connections.add(ch);
              ch.pipeline()
                  .addLast(new LengthFieldBasedFrameDecoder(MAX_FRAME_BYTES, 0, 4, 0, 4))
                  .addLast(new LengthFieldPrepender(4))
                  .addLast(handlers, new ShortCircuitHandler(store, committer, counters, commits, memory));
            }
          })
          .bind(new DomainSocketAddress(socketPath.toFile())).sync().channel();
    } catch (Exception e) {
      close();
      throw new IOException("Cannot bind the short-circuit domain socket " + socketPath + ": " + e.getMessage(), e);
    }
    try {
      io.strata.server.DomainSocketFile.restrict(socketPath, "short-circuit");
    } catch (IOException e) {
      close();
      throw e;
    }
    LOG.info("Short-circuit reads and writes served on domain socket {}", socketPath);
    return this;
  }

  public Path socketPath() {
    return socketPath;
  }

  /** Connections closed at once because the most the server serves were open. */
  public long refusedConnections() {
    return counters.refusedConnections.get();
  }

  /** Blocks opened so far (each a read lock handed to a client, or an answer with the block's bytes). */
  public long opens() {
    return counters.opens.get();
  }

  /** Opens answered with the block's bytes inline (counted in {@link #opens()} too). */
  public long inlined() {
    return counters.inlined.get();
  }

  /** File descriptors passed so far. */
  public long descriptorsSent() {
    return counters.fdsSent.get();
  }

  /** Requests refused so far (unknown blocks, bad input). */
  public long errors() {
    return counters.errors.get();
  }

  /** Blocks clients hold open now. */
  public int openNow() {
    return counters.openNow.get();
  }

  /** Temp blocks created for short-circuit writers so far. */
  public long tempBlocksCreated() {
    return counters.tempsCreated.get();
  }

  /** Bytes of the blocks opened for short-circuit reads so far (what clients then read is not seen here). */
  public long bytesOpened() {
    return counters.bytesOpened.get();
  }

  /** Bytes of the blocks committed by short-circuit writers so far. */
  public long bytesCommitted() {
    return counters.bytesCommitted.get();
  }

  /** Temp blocks dropped because their connection ended before the commit. */
  public long abortedByDisconnect() {
    return counters.abortedByDisconnect.get();
  }

  /** Blocks being written short-circuit now. */
  public int writesNow() {
    return counters.writesNow.get();
  }

  @Override
  public void close() {
    // Order: stop accepting, end every connection, let the event loop deliver the ends to the handlers
    // (which release their blocks and write nothing more), then stop the handlers.
    if (serverChannel != null) {
      serverChannel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
    if (connections != null) {
      connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
    if (group != null) {
      group.shutdownGracefully(100, 2000, TimeUnit.MILLISECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
    if (handlers != null) {
      handlers.shutdownGracefully(100, 2000, TimeUnit.MILLISECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
    if (commits != null) {
      commits.shutdown();
      try {
        commits.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    io.strata.server.DomainSocketFile.remove(socketPath, "short-circuit");
  }
}
