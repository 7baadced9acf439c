package io.strata.client;

import io.strata.client.transfer.TransferClient;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.CorruptBlockException;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.StrataException;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.ReadBlockRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Reads a range of one block from one worker over the block transfer protocol ({@link TransferClient}): the
 * worker sends the bytes from its block file with sendfile, this reader pulls them from the socket on the
 * caller's thread into its connection's direct buffer ({@link TransferClient#BUFFER_BYTES}), checks each
 * whole checksum chunk in it against the stored CRC32C the worker sent ahead of the bytes (unless
 * {@link ClientKeys#READ_CHECKSUM_VERIFY} is off), and only then copies the part inside the requested range
 * into the caller's array. A mismatch, or a worker saying its copy is lost (DATA_LOSS), is a
 * {@link CorruptBlockException} naming the block, the worker and the offset, as for the gRPC stream.
 *
 * <p>Not thread-safe: one reader thread.
 */
final class TransferBlockReader implements BlockRangeReader {
  private final WorkerAddress worker;
  private final long blockId;
  private final long offset;
  private final long end;
  private final TransferClient.Read read;
  private final List<Integer> sums;
  private final ByteBuffer buf;
  /** Block offset of {@code buf}'s first byte (position 0) once filled. */
  private long bufStart;
  private long received;
  private boolean closed;

  /**
   * Sends the request and reads the worker's answer; its refusal is thrown (NOT_FOUND for a block it does not
   * hold), and {@link TransferClient.NotReached} when its transfer service cannot be reached at all.
   */
  TransferBlockReader(FileSystemContext context, TransferClient client, WorkerAddress worker, long blockId,
      long offset, long length, boolean promote) throws IOException {
    this.worker = worker;
    this.blockId = blockId;
    this.offset = offset;
    this.end = offset + length;
    boolean verify = context.conf().get(ClientKeys.READ_CHECKSUM_VERIFY);
    ReadBlockRequest req = ReadBlockRequest.newBuilder().setBlockId(blockId).setOffset(offset).setLength(length)
        .setPromote(promote).setChecksums(verify).build();
    TransferClient.Read r;
    try {
      r = client.read(worker, req);
    } catch (StrataException e) {
      if (e.code() == ErrorCode.DATA_LOSS) {
        throw new CorruptBlockException(blockId, worker.toString(), offset, e.getMessage());
      }
      throw e.code().toException("Reading block " + blockId + " from worker " + worker + " failed: "
          + e.getMessage(), e);
    }
    this.read = r;
    this.sums = verify ? r.checksums() : List.of();
    long sent = r.length();
    if (r.offset() > offset || r.offset() + sent < end
        || (verify && sent > 0 && sums.size() != ChunkChecksums.chunkCount(sent))) {
      r.close();
      throw new CorruptBlockException(blockId, worker.toString(), offset, "the worker answered a read of "
          + length + " bytes at offset " + offset + " with " + sent + " bytes at offset " + r.offset() + " and "
          + sums.size() + " checksums");
    }
    this.bufStart = r.offset();
    this.buf = r.buffer();
    buf.clear().limit(0);
  }

  @Override
  public WorkerAddress worker() {
    return worker;
  }

  @Override
  public String source() {
    return "worker " + worker + " (block transfer " + read.where() + ")";
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (closed) {
      // The buffer went back with the connection: only the end may be asked for again.
      if (received == end - offset) {
        return -1;
      }
      throw new java.io.IOException("The read of block " + blockId + " from worker " + worker + " was closed");
    }
    if (len == 0) {
      return 0;
    }
    while (!buf.hasRemaining()) {
      if (bufStart + buf.limit() >= end || read.remaining() == 0) {
        if (received != end - offset) {
          throw new DataLossException("Worker " + worker + " sent " + received + " of " + (end - offset)
              + " bytes of block " + blockId);
        }
        close();
        return -1;
      }
      refill();
    }
    int n = Math.min(len, buf.remaining());
    buf.get(b, off, n);
    received += n;
    return n;
  }

  /** Reads the next buffer's worth, checks its chunks, and positions it on the bytes inside the range. */
  private void refill() throws IOException {
    long start = bufStart + buf.limit();
    buf.clear();
    try {
      read.readFully(buf);
    } catch (IOException e) {
      close();
      throw e;
    }
    buf.flip();
    bufStart = start;
    if (!sums.isEmpty()) {
      // Whole chunks: the buffer is a multiple of the chunk size, and the sent range starts on a chunk.
      int first = ChunkChecksums.chunkOf(start - read.offset());
      int count = ChunkChecksums.chunkCount(buf.limit());
      int bad = ChunkChecksums.firstMismatch(buf, sums.subList(first, first + count));
      if (bad >= 0) {
        long at = start + (long) bad * ChunkChecksums.CHUNK_BYTES;
        close();
        throw new CorruptBlockException(blockId, worker.toString(), at, String.format("CRC32C of the chunk at "
            + "offset %d does not match its stored checksum %08x", at, sums.get(first + bad)));
      }
    }
    // Trim the widening to whole chunks off both ends.
    int from = (int) Math.max(0, offset - start);
    int to = (int) Math.min(buf.limit(), end - start);
    buf.limit(Math.max(from, to)).position(from);
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      read.close();
    }
  }
}
