package io.strata.tests;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.HandlerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.ReadBlockResponse;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * A gRPC proxy in front of a real worker's data port, for a worker that advertises another address than it binds
 * ({@code strata.worker.hostname} on one loopback address, {@code strata.worker.bind.host} on another, the same
 * port): everyone who reaches the worker by its registered address (clients, other workers) goes through here.
 * Every call of every method is passed on unchanged as bytes, both ways, except that while {@link #tamper} is set,
 * each ReadBlock answer is rewritten by it first: a worker that sends something no worker of this version sends
 * (chunks without their checksums, at a wrong offset, with other bytes).
 *
 * <p>Thread-safe; each proxied call's two halves are serialised on their own call objects.
 */
final class WorkerProxy implements AutoCloseable {
  private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw Status.INTERNAL.withDescription("proxy: cannot read a message").withCause(e).asRuntimeException();
      }
    }
  };

  private final ManagedChannel backend;
  private final io.grpc.Server server;
  private volatile UnaryOperator<ReadBlockResponse> tamper;
  private final AtomicInteger tampered = new AtomicInteger();

  /** Listens on {@code host:port} and passes every call on to {@code backendHost:port}. */
  WorkerProxy(String host, int port, String backendHost) throws IOException {
    backend = NettyChannelBuilder.forAddress(backendHost, port).usePlaintext()
        .maxInboundMessageSize(64 << 20).flowControlWindow(16 << 20).build();
    server = NettyServerBuilder.forAddress(new InetSocketAddress(host, port)).maxInboundMessageSize(64 << 20)
        .flowControlWindow(16 << 20).fallbackHandlerRegistry(new HandlerRegistry() {
          @Override
          public ServerMethodDefinition<?, ?> lookupMethod(String method, String authority) {
            MethodDescriptor<byte[], byte[]> m = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setFullMethodName(method).setType(MethodDescriptor.MethodType.UNKNOWN)
                .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
            return ServerMethodDefinition.create(m, handler(m));
          }
        }).build().start();
  }

  /** From now on ReadBlock answers pass through {@code t} (null: unchanged again). */
  void tamper(UnaryOperator<ReadBlockResponse> t) {
    this.tamper = t;
  }

  /** ReadBlock messages rewritten so far. */
  int tampered() {
    return tampered.get();
  }

  private byte[] answer(String method, byte[] message) {
    UnaryOperator<ReadBlockResponse> t = tamper;
    if (t == null || !method.equals(BlockWorkerServiceGrpc.getReadBlockMethod().getFullMethodName())) {
      return message;
    }
    try {
      byte[] out = t.apply(ReadBlockResponse.parseFrom(message)).toByteArray();
      tampered.incrementAndGet();
      return out;
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new IllegalStateException("proxy: not a ReadBlockResponse", e);
    }
  }

  private ServerCallHandler<byte[], byte[]> handler(MethodDescriptor<byte[], byte[]> m) {
    return (serverCall, headers) -> {
      CallOptions options = CallOptions.DEFAULT;
      io.grpc.Deadline deadline = Context.current().getDeadline();
      if (deadline != null) {
        options = options.withDeadline(deadline);
      }
      ClientCall<byte[], byte[]> clientCall = backend.newCall(m, options);
      clientCall.start(new ClientCall.Listener<>() {
        @Override
        public void onHeaders(Metadata h) {
          synchronized (serverCall) {
            serverCall.sendHeaders(h);
          }
        }

        @Override
        public void onMessage(byte[] message) {
          synchronized (serverCall) {
            serverCall.sendMessage(answer(m.getFullMethodName(), message));
          }
          synchronized (clientCall) {
            clientCall.request(1);
          }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
          synchronized (serverCall) {
            serverCall.close(status, trailers);
          }
        }
      }, headers);
      synchronized (clientCall) {
        clientCall.request(1);
      }
      synchronized (serverCall) {
        serverCall.request(1);
      }
      return new ServerCall.Listener<>() {
        @Override
        public void onMessage(byte[] message) {
          synchronized (clientCall) {
            clientCall.sendMessage(message);
          }
          synchronized (serverCall) {
            serverCall.request(1);
          }
        }

        @Override
        public void onHalfClose() {
          synchronized (clientCall) {
            clientCall.halfClose();
          }
        }

        @Override
        public void onCancel() {
          synchronized (clientCall) {
            clientCall.cancel("the proxy's caller cancelled", null);
          }
        }
      };
    };
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow();
    backend.shutdownNow();
    server.awaitTermination(10, TimeUnit.SECONDS);
    backend.awaitTermination(10, TimeUnit.SECONDS);
  }
}
