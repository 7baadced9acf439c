package io.strata.common.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.WriteBlockHeader;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ChunkMarshaller} over a real grpc-netty server and channel on loopback: chunks of sizes around
 * HTTP/2's 16 KiB frame arrive byte-exact, sliced out of Netty's direct buffers (not copied to the heap),
 * other fields travel unchanged, lent direct buffers are released once written, and every received
 * message's buffers are released.
 */
class ChunkMarshallerTest {
  /** Empty, tiny, a frame less and more than one, several frames with an odd tail. */
  private static final int[] SIZES = {0, 1, 16_383, 16_385, (1 << 20) + 3};

  private final BlockDataMarshalling serverSide = new BlockDataMarshalling();
  private final BlockDataMarshalling clientSide = new BlockDataMarshalling();
  private final AtomicInteger lentReleased = new AtomicInteger();
  private final CompletableFuture<List<WriteBlockRequest>> received = new CompletableFuture<>();
  private final ByteArrayOutputStream receivedBytes = new ByteArrayOutputStream();
  /** Bytes of received chunks that were not in a direct (Netty) buffer. */
  private final AtomicInteger receivedHeapBytes = new AtomicInteger();
  private Server server;
  private ManagedChannel channel;

  private static byte[] data(int size, int seed) {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    return b;
  }

  @BeforeEach
  void start() throws Exception {
    ServerServiceDefinition service = ServerServiceDefinition.builder("strata.BlockWorkerService")
        .addMethod(serverSide.readBlock(), ServerCalls.asyncServerStreamingCall(this::serveRead))
        .addMethod(serverSide.writeBlock(), ServerCalls.asyncClientStreamingCall(this::serveWrite))
        .build();
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(service)
        .maxInboundMessageSize(8 << 20).build().start();
    channel = GrpcChannels.forAddress("127.0.0.1", server.getPort(), 8 << 20);
  }

  @AfterEach
  void stop() throws Exception {
    GrpcChannels.close(channel);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  /** Sends one chunk per size, each from a direct buffer lent until written. */
  private void serveRead(ReadBlockRequest req, StreamObserver<ReadBlockResponse> out) {
    for (int size : SIZES) {
      ByteBuffer direct = ByteBuffer.allocateDirect(size + 7);
      direct.position(7); // an unaligned start inside the buffer
      direct.put(data(size, size)).position(7);
      ReadBlockResponse msg = ReadBlockResponse.newBuilder().setChunk(UnsafeByteOperations.unsafeWrap(direct.slice()))
          .build();
      serverSide.readResponses().onWritten(msg, lentReleased::incrementAndGet);
      out.onNext(msg);
      serverSide.readResponses().forgetWritten(msg);
    }
    out.onCompleted();
  }

  private StreamObserver<WriteBlockRequest> serveWrite(StreamObserver<WriteBlockResponse> response) {
    List<WriteBlockRequest> got = new ArrayList<>();
    return new StreamObserver<>() {
      @Override
      public void onNext(WriteBlockRequest req) {
        // keep only what survives the release: the header and a copy of the chunk
        got.add(req.toBuilder().clearChunk().build());
        for (ByteBuffer piece : req.getChunk().asReadOnlyByteBufferList()) {
          if (!piece.isDirect()) {
            receivedHeapBytes.addAndGet(piece.remaining());
          }
          byte[] b = new byte[piece.remaining()];
          piece.get(b);
          receivedBytes.write(b, 0, b.length);
        }
        serverSide.writeRequests().release(req);
      }

      @Override
      public void onError(Throwable t) {
        received.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {
        received.complete(got);
        response.onNext(WriteBlockResponse.newBuilder().setLength(receivedBytes.size()).build());
        response.onCompleted();
      }
    };
  }

  @Test
  void readChunks_arriveByteExact_slicedFromNettysDirectBuffers_andLentBuffersComeBack() {
    Iterator<ReadBlockResponse> it = ClientCalls.blockingServerStreamingCall(channel, clientSide.readBlock(),
        CallOptions.DEFAULT, ReadBlockRequest.newBuilder().setBlockId(1).build());
    int i = 0;
    int copied = 0;
    while (it.hasNext()) {
      ReadBlockResponse r = it.next();
      assertThat(r.getChunk()).as("chunk of %d bytes", SIZES[i]).isEqualTo(ByteString.copyFrom(data(SIZES[i], SIZES[i])));
      List<ByteBuffer> pieces = r.getChunk().asReadOnlyByteBufferList();
      if (SIZES[i] >= 128 && pieces.stream().allMatch(ByteBuffer::isDirect)) {
        if (SIZES[i] > 32 * 1024) {
          assertThat(pieces).as("a chunk past one frame is a rope over the frames' buffers").hasSizeGreaterThan(1);
        }
      } else if (SIZES[i] >= 128) {
        // Netty put a frame in a composite buffer: the one-copy fallback, a single heap array.
        assertThat(pieces).hasSize(1);
        copied++;
      }
      clientSide.readResponses().release(r);
      i++;
    }
    assertThat(i).isEqualTo(SIZES.length);
    assertThat(lentReleased.get()).as("lent buffers released once gRPC wrote them").isEqualTo(SIZES.length);
    assertThat(clientSide.outstanding()).isZero();
    assertThat(serverSide.outstanding()).isZero();
    assertThat(clientSide.readResponses().aliasedParses() + clientSide.readResponses().oneCopyParses())
        .as("every message parsed by the chunk marshaller").isEqualTo(SIZES.length);
    assertThat(copied).as("heap chunks are only those of the one-copy fallback")
        .isLessThanOrEqualTo((int) clientSide.readResponses().oneCopyParses());
  }

  @Test
  void writeChunks_fromOffsetsInTheCallersArray_arriveByteExact_withTheHeaderUnchanged() throws Exception {
    byte[] all = data(3 * (1 << 20), 5);
    CompletableFuture<WriteBlockResponse> reply = new CompletableFuture<>();
    StreamObserver<WriteBlockRequest> out = ClientCalls.asyncClientStreamingCall(
        channel.newCall(clientSide.writeBlock(), CallOptions.DEFAULT), new StreamObserver<>() {
          @Override
          public void onNext(WriteBlockResponse value) {
            reply.complete(value);
          }

          @Override
          public void onError(Throwable t) {
            reply.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {
          }
        });
    WriteBlockHeader header = WriteBlockHeader.newBuilder().setBlockId(42).setMaxLength(1L << 40).setReserved(true)
        .build();
    ByteArrayOutputStream sent = new ByteArrayOutputStream();
    int pos = 3;
    boolean first = true;
    for (int size : SIZES) {
      WriteBlockRequest.Builder req = WriteBlockRequest.newBuilder().setChunk(UnsafeByteOperations.unsafeWrap(all, pos, size));
      if (first) {
        req.setHeader(header);
        first = false;
      }
      out.onNext(req.build());
      sent.write(all, pos, size);
      pos += size + 1;
    }
    out.onCompleted();
    assertThat(reply.get(10, TimeUnit.SECONDS).getLength()).isEqualTo(sent.size());
    List<WriteBlockRequest> got = received.get(10, TimeUnit.SECONDS);
    assertThat(got).hasSize(SIZES.length);
    assertThat(got.get(0).getHeader()).isEqualTo(header);
    assertThat(got.subList(1, got.size())).allMatch(r -> !r.hasHeader());
    assertThat(receivedBytes.toByteArray()).isEqualTo(sent.toByteArray());
    // Protobuf joins pieces under 128 bytes by copying (a tiny chunk, say); nothing larger is copied.
    assertThat(receivedHeapBytes.get()).as("heap bytes beyond the one-copy fallback's messages")
        .isLessThan(128 * SIZES.length + (serverSide.writeRequests().oneCopyParses() > 0 ? sent.size() : 0));
    assertThat(serverSide.outstanding()).isZero();
  }
}
