package io.strata.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.ReserveBlockRequest;
import io.strata.proto.WriteBlockHeader;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;
import java.io.IOException;

/**
 * Streams one block to one worker as a WriteBlock client stream of chunks, the first carrying the header.
 * {@link #close()} half-closes and waits for the worker's commit; {@link #cancel()} aborts, and the worker
 * drops its temp block. Flow control as in {@link OutboundStream}. Each message carries the CRC32C of the
 * checksum chunks its bytes complete ({@link ChunkChecksums}); {@link #close()} sends the last, partial
 * chunk's in a final message, so the worker checks every byte on receipt.
 *
 * <p>Not thread-safe: one writer thread.
 */
final class BlockOutStream implements BlockWriter {
  private final long blockId;
  private final WorkerAddress worker;
  private final long maxLength;
  private final boolean reserved;
  private final OutboundStream<WriteBlockRequest, WriteBlockResponse> stream;
  private final ChunkChecksums.Builder sums = new ChunkChecksums.Builder();
  private long written;
  private boolean headerSent;

  BlockOutStream(FileSystemContext context, WorkerAddress worker, long blockId, long maxLength) {
    this(context, worker, blockId, maxLength, false);
  }

  /** With {@code reserved}, the block's room was reserved whole by {@link #reserve}; the write uses it. */
  BlockOutStream(FileSystemContext context, WorkerAddress worker, long blockId, long maxLength, boolean reserved) {
    this.blockId = blockId;
    this.worker = worker;
    this.maxLength = maxLength;
    this.reserved = reserved;
    this.stream = new OutboundStream<>("writing block " + blockId + " to worker " + worker,
        context.rpcTimeoutMs(), o -> context.writeBlock(worker, o));
  }

  /**
   * Reserves room for the whole block at the worker before any byte is sent, waiting there up to
   * {@code waitMs} when it is full of blocks it may not evict; RESOURCE_EXHAUSTED when no room appeared.
   */
  static void reserve(FileSystemContext context, WorkerAddress worker, long blockId, long maxLength, long waitMs)
      throws IOException {
    try {
      context.workerBlocking(worker).withDeadlineAfter(waitMs + context.rpcTimeoutMs(),
          java.util.concurrent.TimeUnit.MILLISECONDS).reserveBlock(ReserveBlockRequest.newBuilder()
          .setBlockId(blockId).setMaxLength(maxLength).setWaitMs(waitMs).build());
    } catch (RuntimeException e) {
      throw io.strata.common.grpc.GrpcErrors.fromThrowable(e);
    }
  }

  @Override
  public long blockId() {
    return blockId;
  }

  @Override
  public WorkerAddress worker() {
    return worker;
  }

  long written() {
    return written;
  }

  private WriteBlockRequest.Builder request() {
    WriteBlockRequest.Builder req = WriteBlockRequest.newBuilder();
    if (!headerSent) {
      req.setHeader(WriteBlockHeader.newBuilder().setBlockId(blockId).setMaxLength(maxLength).setReserved(reserved)
          .setBytesPerChecksum(ChunkChecksums.CHUNK_BYTES));
      headerSent = true;
    }
    return req;
  }

  /**
   * Sends {@code chunk} (which the caller no longer changes) once the transport can take it. The chunk is
   * wrapped, not copied: the marshaller writes it from this array straight into the transport's buffer.
   */
  @Override
  public void write(byte[] chunk, int length) throws IOException {
    ByteString data = UnsafeByteOperations.unsafeWrap(chunk, 0, length);
    int before = sums.completed();
    sums.update(chunk, 0, length);
    WriteBlockRequest.Builder req = request().setChunk(data);
    for (int i = before; i < sums.completed(); i++) {
      req.addChunkCrc32C(sums.get(i));
    }
    stream.send(req.build());
    written += length;
  }

  /** Half-closes and waits for the worker to commit; returns the committed length. */
  @Override
  public long close() throws IOException {
    if (!headerSent) {
      // An empty block still needs its header so the worker knows which block to commit.
      stream.send(request().build());
    } else if (sums.hasPartial()) {
      int[] all = sums.finish();
      stream.send(request().addChunkCrc32C(all[all.length - 1]).build());
    }
    return stream.finish().getLength();
  }

  /** Aborts the write; the worker removes the temp block. */
  @Override
  public void cancel() {
    stream.cancel();
  }
}
