package io.strata.common.grpc;

import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;

/**
 * The block data calls (ReadBlock, WriteBlock) with {@link ChunkMarshaller}s for their chunk-carrying
 * messages, for one side of the connection (a client's context, a worker's service). Both sides use the
 * same method names and wire bytes as the generated descriptors, so either side may use plain protobuf
 * marshalling while the other uses this.
 *
 * <p>A client that wants the plain path end to end (the benchmark's {@code tcp-plain}) sends
 * {@link #PLAIN_HEADER}{@code =plain} with its calls; the worker then reads block files into heap arrays
 * as before zero-copy, instead of its pooled direct buffers.
 *
 * <p>Thread-safe; one instance per client context or worker service.
 */
public final class BlockDataMarshalling {
  /** Request metadata asking the worker for the plain (heap, copying) read path. */
  public static final Metadata.Key<String> PLAIN_HEADER =
      Metadata.Key.of("strata-marshalling", Metadata.ASCII_STRING_MARSHALLER);
  public static final String PLAIN = "plain";

  private final ChunkMarshaller<ReadBlockResponse> readResponse = new ChunkMarshaller<>(
      ReadBlockResponse.getDefaultInstance(), ReadBlockResponse.CHUNK_FIELD_NUMBER, ReadBlockResponse::getChunk,
      m -> m.toBuilder().clearChunk().build(), (m, c) -> m.toBuilder().setChunk(c).build());
  private final ChunkMarshaller<WriteBlockRequest> writeRequest = new ChunkMarshaller<>(
      WriteBlockRequest.getDefaultInstance(), WriteBlockRequest.CHUNK_FIELD_NUMBER, WriteBlockRequest::getChunk,
      m -> m.toBuilder().clearChunk().build(), (m, c) -> m.toBuilder().setChunk(c).build());
  private final MethodDescriptor<ReadBlockRequest, ReadBlockResponse> readBlock =
      BlockWorkerServiceGrpc.getReadBlockMethod().toBuilder(BlockWorkerServiceGrpc.getReadBlockMethod()
          .getRequestMarshaller(), readResponse).build();
  private final MethodDescriptor<WriteBlockRequest, WriteBlockResponse> writeBlock =
      BlockWorkerServiceGrpc.getWriteBlockMethod().toBuilder(writeRequest, BlockWorkerServiceGrpc
          .getWriteBlockMethod().getResponseMarshaller()).build();

  public ChunkMarshaller<ReadBlockResponse> readResponses() {
    return readResponse;
  }

  public ChunkMarshaller<WriteBlockRequest> writeRequests() {
    return writeRequest;
  }

  /** ReadBlock with the zero-copy response marshaller. */
  public MethodDescriptor<ReadBlockRequest, ReadBlockResponse> readBlock() {
    return readBlock;
  }

  /** WriteBlock with the zero-copy request marshaller. */
  public MethodDescriptor<WriteBlockRequest, WriteBlockResponse> writeBlock() {
    return writeBlock;
  }

  /** Transport memory still held by messages in flight through this side (0 when nothing leaked). */
  public int outstanding() {
    return readResponse.outstanding() + writeRequest.outstanding();
  }
}
