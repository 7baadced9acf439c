package io.strata.cli;

import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * The wire's limit for {@code strata bench meta}: a bare grpc-java server with one trivial unary method
 * (empty request, empty reply, no protobuf) run on the transport thread ({@code directExecutor}), bound to
 * a free loopback port. {@link MetaBaselines} starts it with {@code java -cp <the bench's classpath>} in a
 * JVM of its own, so the bench's client threads and the server do not share a heap or a GC; it prints
 * {@code port=<n>} once serving and exits when its stdin closes (the bench ended or died).
 *
 * <p>{@link #METHOD} is shared with the bench's client. The server is thread-safe (gRPC's own).
 */
public final class BareUnaryServer {
  static final String READY = "port=";

  /** Bytes in, bytes out: no parsing on either side. */
  static final MethodDescriptor<byte[], byte[]> METHOD = io.strata.common.grpc.BytesMethods.unary("strata.bench.Bare",
      "Call");

  private BareUnaryServer() {}

  public static void main(String[] args) throws Exception {
    byte[] empty = new byte[0];
    Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .directExecutor()
        .addService(ServerServiceDefinition.builder("strata.bench.Bare")
            .addMethod(METHOD, ServerCalls.asyncUnaryCall((req, reply) -> {
              reply.onNext(empty);
              reply.onCompleted();
            })).build())
        .build().start();
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    out.println(READY + server.getPort());
    // The bench holds our stdin open while it runs; EOF means it is done (or gone).
    while (System.in.read() >= 0) {
      // nothing to read but the end
    }
    server.shutdownNow();
  }
}
