package io.strata.common.grpc;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.TimeUnit;

/** Builds client channels with Strata's limits. Stateless. */
public final class GrpcChannels {
  private GrpcChannels() {}

  /** A plaintext channel to host:port that accepts messages up to maxMessageBytes. */
  public static ManagedChannel forAddress(String host, int port, long maxMessageBytes) {
    return forAddress(host, port, maxMessageBytes, (ClientEventLoops) null);
  }

  /** As {@link #forAddress(String, int, long)}, on {@code loops} (null: gRPC's shared event loops). */
  public static ManagedChannel forAddress(String host, int port, long maxMessageBytes, ClientEventLoops loops) {
    return on(NettyChannelBuilder.forAddress(host, port), loops)
        .usePlaintext()
        .maxInboundMessageSize((int) maxMessageBytes)
        .keepAliveTime(30, TimeUnit.SECONDS)
        .keepAliveWithoutCalls(false)
        .build();
  }

  /**
   * A plaintext channel to host:port for bulk data: as {@link #forAddress(String, int, long)}, with an
   * HTTP/2 flow-control window of {@code flowWindowBytes} (fixed; gRPC's window tuning off), and call
   * callbacks run on the transport's event loop (no hand-off to an executor thread per message): every
   * listener on such a channel must only record, enqueue or signal, never block.
   */
  public static ManagedChannel forAddress(String host, int port, long maxMessageBytes, long flowWindowBytes) {
    return forAddress(host, port, maxMessageBytes, flowWindowBytes, null);
  }

  /** As {@link #forAddress(String, int, long, long)}, on {@code loops} (null: gRPC's shared event loops). */
  public static ManagedChannel forAddress(String host, int port, long maxMessageBytes, long flowWindowBytes,
      ClientEventLoops loops) {
    return bulkData(on(NettyChannelBuilder.forAddress(host, port), loops), maxMessageBytes, flowWindowBytes);
  }

  private static NettyChannelBuilder on(NettyChannelBuilder b, ClientEventLoops loops) {
    return loops == null ? b : loops.apply(b);
  }

  /** The settings every bulk-data channel shares, whatever its transport. */
  private static ManagedChannel bulkData(NettyChannelBuilder b, long maxMessageBytes, long flowWindowBytes) {
    return b.usePlaintext()
        .maxInboundMessageSize((int) maxMessageBytes)
        .flowControlWindow((int) flowWindowBytes)
        .directExecutor()
        .keepAliveTime(30, TimeUnit.SECONDS)
        .keepAliveWithoutCalls(false)
        .build();
  }

  /**
   * Socket buffers of a domain-socket connection, both ends (the kernel caps them at net.core.wmem_max
   * and rmem_max): measured with bench io, streaming over a domain socket with the default ~208 KiB
   * buffers was slower than TCP loopback (which autotunes to megabytes); with 4 MiB it is faster.
   */
  public static final int DOMAIN_SOCKET_BUFFER_BYTES = 4 << 20;

  /**
   * A plaintext channel over the Unix domain socket at {@code socket} (Netty epoll; the caller owns
   * {@code group}, an epoll event loop group, and shuts it down after the channel), with the same limits
   * as {@link #forAddress(String, int, long, long)}: the flow-control window {@code flowWindowBytes} and
   * callbacks on the event loop (listeners must never block).
   */
  public static ManagedChannel forDomainSocket(java.nio.file.Path socket, long maxMessageBytes,
      long flowWindowBytes, io.netty.channel.EventLoopGroup group) {
    NettyChannelBuilder b = NettyChannelBuilder.forAddress(
        new io.netty.channel.unix.DomainSocketAddress(socket.toFile()))
        .eventLoopGroup(group)
        .channelType(io.netty.channel.epoll.EpollDomainSocketChannel.class)
        // A Unix socket's default buffers hold a fifth of a 1 MiB chunk (see the worker's GrpcServer).
        .withOption(io.netty.channel.ChannelOption.SO_SNDBUF, DOMAIN_SOCKET_BUFFER_BYTES)
        .withOption(io.netty.channel.ChannelOption.SO_RCVBUF, DOMAIN_SOCKET_BUFFER_BYTES)
        // gRPC sets SO_KEEPALIVE on every connection, which a Unix socket lacks (Netty warned at each connect);
        // an option given as null is removed (gRPC's keepalive pings still run over HTTP/2).
        .withOption(io.netty.channel.ChannelOption.SO_KEEPALIVE, null)
        .overrideAuthority("localhost");
    return bulkData(b, maxMessageBytes, flowWindowBytes);
  }

  /**
   * Whether the channel's last connect failed, so it is in TRANSIENT_FAILURE: there it fails every new call
   * at once with that old error until a connect succeeds, and it tries again only when gRPC's reconnect
   * backoff runs out (1 s, growing to 2 minutes; {@code resetConnectBackoff} starts a connect but the state
   * stays failed until it succeeds). A peer restarted on the same address meanwhile would be shunned that
   * long. Pools that keep channels to peers replace such a channel before a call, so the call waits for a
   * connect of its own and how often a dead peer is tried is left to the callers' retry settings (keys),
   * not to a backoff hidden in the channel. One read of the channel's state; thread-safe.
   */
  public static boolean connectFailed(ManagedChannel channel) {
    return channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE;
  }

  /**
   * The channel kept under {@code key} in {@code pool}, made by {@code make} (and kept) when there is none or
   * the kept one's last connect failed ({@link #connectFailed}): that one is shut down, which returns at once
   * and lets its calls in flight finish. For pools of channels to peers; the caller guards {@code pool}.
   */
  public static <K> ManagedChannel keptOrNew(java.util.Map<K, ManagedChannel> pool, K key,
      java.util.function.Supplier<ManagedChannel> make) {
    ManagedChannel ch = pool.get(key);
    if (ch == null || connectFailed(ch)) {
      if (ch != null) {
        ch.shutdown();
      }
      ch = make.get();
      pool.put(key, ch);
    }
    return ch;
  }

  /** Closes each channel as {@link #close(ManagedChannel)} does (a pool's, taken out of it under its lock). */
  public static void closeAll(java.util.Collection<ManagedChannel> channels) {
    for (ManagedChannel c : channels) {
      close(c);
    }
  }

  /** Closes a channel, waiting briefly for calls in flight. */
  public static void close(ManagedChannel channel) {
    channel.shutdown();
    try {
      if (!channel.awaitTermination(2, TimeUnit.SECONDS)) {
        channel.shutdownNow();
      }
    } catch (InterruptedException e) {
      channel.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
