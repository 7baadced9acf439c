package io.strata.common.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.CallOptions;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link GrpcChannels#connectFailed} and {@link GrpcChannels#keptOrNew} over a real loopback server that stops and starts again on the same
 * port: it tells a channel whose connect failed (which fails calls with that old error until gRPC's
 * reconnect backoff, a second at least, runs out) from a healthy or idle one, and a new channel made in its
 * place reaches the restarted server at once.
 */
class GrpcChannelsReconnectTest {
  private static final MethodDescriptor<byte[], byte[]> ECHO = BytesMethods.unary("strata.test.Echo", "Call");

  private Server server;
  private ManagedChannel channel;

  private static Server start(int port) throws IOException {
    ServerServiceDefinition service = ServerServiceDefinition.builder("strata.test.Echo")
        .addMethod(ECHO, ServerCalls.asyncUnaryCall((req, reply) -> {
          reply.onNext(req);
          reply.onCompleted();
        })).build();
    return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port)).addService(service).build().start();
  }

  private static byte[] call(ManagedChannel ch, byte[] req) {
    return ClientCalls.blockingUnaryCall(ch, ECHO, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), req);
  }

  @AfterEach
  void stop() {
    if (channel != null) {
      GrpcChannels.close(channel);
    }
    if (server != null) {
      server.shutdownNow();
    }
  }

  @Test
  void aChannelInBackoffReachesAServerRestartedOnItsPort() throws Exception {
    server = start(0);
    int port = server.getPort();
    channel = GrpcChannels.forAddress("127.0.0.1", port, 1 << 20);
    assertThat(call(channel, new byte[] {1})).containsExactly(1);
    assertThat(GrpcChannels.connectFailed(channel)).isFalse();

    server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    // The next call finds the port closed: the channel fails it and enters its reconnect backoff.
    assertThatThrownBy(() -> call(channel, new byte[] {2})).isInstanceOf(StatusRuntimeException.class)
        .satisfies(e -> assertThat(((StatusRuntimeException) e).getStatus().getCode())
            .isEqualTo(Status.Code.UNAVAILABLE));
    // A channel that lost its connection may be IDLE rather than failed: asking for its state with a connect
    // (true) makes it try the closed port, which fails.
    await().atMost(Duration.ofSeconds(20)).until(() -> channel.getState(true) == ConnectivityState.TRANSIENT_FAILURE);

    // Replaced while in the backoff (a new channel connects only at its first call)...
    assertThat(GrpcChannels.connectFailed(channel)).isTrue();
    java.util.Map<String, ManagedChannel> pool = new java.util.HashMap<>(java.util.Map.of("peer", channel));
    ManagedChannel fresh = GrpcChannels.keptOrNew(pool, "peer", () -> GrpcChannels.forAddress("127.0.0.1", port,
        1 << 20));
    server = start(port); // ...and the server is back on the same port
    try {
      assertThat(fresh).isNotSameAs(channel);
      assertThat(channel.isShutdown()).as("the failed channel is let go").isTrue();
      assertThat(pool).containsEntry("peer", fresh);
      assertThat(call(fresh, new byte[] {3})).containsExactly(3);
      assertThat(GrpcChannels.connectFailed(fresh)).isFalse();
      assertThat(GrpcChannels.keptOrNew(pool, "peer", () -> {
        throw new AssertionError("a working channel is kept");
      })).isSameAs(fresh);
    } finally {
      GrpcChannels.close(fresh);
    }
  }

  @Test
  void aHealthyChannelIsLeftAsItIs() throws Exception {
    server = start(0);
    channel = GrpcChannels.forAddress("127.0.0.1", server.getPort(), 1 << 20);
    assertThat(channel.getState(false)).isEqualTo(ConnectivityState.IDLE);
    assertThat(GrpcChannels.connectFailed(channel)).isFalse();
    assertThat(channel.getState(false)).isEqualTo(ConnectivityState.IDLE); // asking started no connect
    assertThat(call(channel, new byte[] {4})).containsExactly(4);
  }
}
