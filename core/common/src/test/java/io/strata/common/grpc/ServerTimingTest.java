package io.strata.common.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ServerTiming} over a real loopback server: only calls whose client asked for it get the trailer,
 * and the time it reports covers the handler's own work and is within what the client waited.
 */
class ServerTimingTest {
  private static final MethodDescriptor<byte[], byte[]> METHOD = BytesMethods.unary("strata.test.Timed", "Call");
  /** What the handler does: spin on the clock this long, so the server's time has a known floor. */
  private static final long WORK_NANOS = 3_000_000;

  private Server server;
  private ManagedChannel channel;
  /** The trailers of every call made through {@link #recording}, in order. */
  private final List<Metadata> trailers = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws IOException {
    ServerServiceDefinition service = ServerServiceDefinition.builder("strata.test.Timed")
        .addMethod(METHOD, ServerCalls.asyncUnaryCall((req, reply) -> {
          long until = System.nanoTime() + WORK_NANOS;
          while (System.nanoTime() < until) {
            Thread.onSpinWait();
          }
          reply.onNext(req);
          reply.onCompleted();
        })).build();
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(ServerInterceptors.intercept(service, ServerTiming.serverInterceptor())).build().start();
    channel = GrpcChannels.forAddress("127.0.0.1", server.getPort(), 1 << 20);
  }

  @AfterEach
  void stop() {
    GrpcChannels.close(channel);
    server.shutdownNow();
  }

  @Test
  void plainCalls_getNoTimingTrailer_callsThatAsk_getTheServersTime() {
    Channel plain = ClientInterceptors.intercept(channel, recording());
    for (int i = 0; i < 3; i++) {
      assertThat(ClientCalls.blockingUnaryCall(plain, METHOD, CallOptions.DEFAULT, new byte[] {(byte) i}))
          .containsExactly((byte) i);
    }
    assertThat(trailers).hasSize(3).allSatisfy(t -> assertThat(t.containsKey(ServerTiming.TRAILER)).isFalse());

    List<Long> reported = new ArrayList<>();
    // Outermost last: the recorder sees the trailers the timing interceptor read.
    Channel timed = ClientInterceptors.intercept(channel, ServerTiming.clientInterceptor(reported::add), recording());
    long t0 = System.nanoTime();
    ClientCalls.blockingUnaryCall(timed, METHOD, CallOptions.DEFAULT, new byte[] {7});
    long waited = System.nanoTime() - t0;
    assertThat(reported).hasSize(1);
    assertThat(reported.get(0)).isGreaterThanOrEqualTo(WORK_NANOS).isLessThanOrEqualTo(waited);
    assertThat(trailers.get(3).get(ServerTiming.TRAILER)).isEqualTo(Long.toString(reported.get(0)));
  }

  /** Records every call's trailers in {@link #trailers}. */
  private ClientInterceptor recording() {
    return ServerTiming.trailers(false, trailers::add);
  }
}
