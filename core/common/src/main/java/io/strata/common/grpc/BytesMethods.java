package io.strata.common.grpc;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Unary gRPC methods whose messages are plain byte arrays (no protobuf on either side): for baselines and
 * tests that need a method with nothing of Strata's in it. Stateless; the descriptors are immutable.
 */
public final class BytesMethods {
  /** Bytes in, bytes out: no parsing. */
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
        throw new UncheckedIOException(e);
      }
    }
  };

  private BytesMethods() {}

  /** A unary method {@code service/method} of byte arrays. */
  public static MethodDescriptor<byte[], byte[]> unary(String service, String method) {
    return MethodDescriptor.<byte[], byte[]>newBuilder().setType(MethodDescriptor.MethodType.UNARY)
        .setFullMethodName(MethodDescriptor.generateFullMethodName(service, method))
        .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
  }
}
