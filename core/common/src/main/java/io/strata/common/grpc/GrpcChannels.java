package io.strata.common.grpc;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.TimeUnit;

/** Builds client channels with Strata's limits. Stateless. */
public final class GrpcChannels {
  private GrpcChannels() {}

  /** A plaintext channel to host:port that accepts messages up to maxMessageBytes. */
  public static ManagedChannel forAddress(String host, int port, long maxMessageBytes) {
    return NettyChannelBuilder.forAddress(host, port)
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
    return NettyChannelBuilder.forAddress(host, port)
        .usePlaintext()
        .maxInboundMessageSize((int) maxMessageBytes)
        .flowControlWindow((int) flowWindowBytes)
        .directExecutor()
        .keepAliveTime(30, TimeUnit.SECONDS)
        .keepAliveWithoutCalls(false)
        .build();
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
