package io.strata.common.grpc;

import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Netty event loops of one client's TCP channels (a file system client's master connection and worker
 * channels), used instead of gRPC's process-wide shared group so that closing the client ends their threads.
 *
 * <p>Why: gRPC lets its shared group go on a timer a second after the last channel closes, so its threads
 * are still parked in {@code epoll_wait} when a one-shot command calls {@code System.exit}, and HotSpot's exit
 * waits for every thread in native code to block, up to 30 polls of 10 ms: each {@code strata fs} command
 * paid 0.3 s there (measured, see docs/PERFORMANCE.md). {@link #close} shuts this group down with no quiet
 * period and waits for its threads to end.
 *
 * <p>Epoll when Netty's native transport is available, NIO otherwise. The group is made on the first
 * channel; its threads (daemons named {@code <prefix>-N}, at most two per core) start as channels register on
 * them. Thread-safe.
 */
public final class ClientEventLoops implements AutoCloseable {
  private final String threadPrefix;
  /** Guarded by this. */
  private EventLoopGroup group;
  private boolean epoll;
  private boolean closed;

  public ClientEventLoops(String threadPrefix) {
    this.threadPrefix = threadPrefix;
  }

  /** {@code b} set to run on this group (made now if it is the first channel); fails once closed. */
  synchronized NettyChannelBuilder apply(NettyChannelBuilder b) {
    if (closed) {
      throw new IllegalStateException("This client is closed");
    }
    if (group == null) {
      AtomicInteger n = new AtomicInteger();
      epoll = Epoll.isAvailable();
      group = new MultiThreadIoEventLoopGroup(0, r -> {
        Thread t = new Thread(r, threadPrefix + "-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      }, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }
    return b.eventLoopGroup(group).channelType(epoll ? EpollSocketChannel.class : NioSocketChannel.class);
  }

  /**
   * Ends the group's threads (no quiet period; waits up to 3 s). Close the channels on it first: a channel
   * still open when its group ends fails its calls.
   */
  @Override
  public void close() {
    EventLoopGroup g;
    synchronized (this) {
      closed = true;
      g = group;
      group = null;
    }
    end(g);
  }

  /** Shuts {@code group} down with no quiet period and waits up to 3 s for its threads to end (null: nothing). */
  public static void end(EventLoopGroup group) {
    if (group != null) {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
    }
  }
}
