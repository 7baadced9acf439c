package io.strata.client;

import com.google.protobuf.ByteString;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.CorruptBlockException;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.DeadlineExceededException;
import io.strata.common.grpc.GrpcErrors;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Reads a range of one block from one worker as a server stream of chunks. Flow control is explicit: the
 * reader asks for {@code prefetch} chunks and one more each time it consumes one, so at most
 * {@code prefetch} chunks are buffered whatever the block size, and a slow consumer slows the worker.
 *
 * <p>Checksums ({@link ClientKeys#READ_CHECKSUM_VERIFY}): the worker widens the range to whole checksum
 * chunks and sends each chunk's stored CRC32C with it; this reader checks every chunk before handing out
 * any of its bytes and trims the widening off. A mismatch, or a worker saying its copy is lost
 * (DATA_LOSS), is a {@link CorruptBlockException} naming the block, the worker and the offset. Reads the
 * worker serves from the under file system carry no checksums and are taken as they come.
 *
 * <p>With zero-copy marshalling a queued chunk references the transport's (Netty's) buffers, possibly
 * several (a rope, never flattened: that would copy): it is checked and copied piece by piece, once,
 * into the caller's array, and its buffers released as soon as the chunk is used up, and every queued
 * one at {@link #close} (also those that arrive after it).
 *
 * <p>Not thread-safe: one reader thread; gRPC callbacks only enqueue (and release after close).
 */
final class BlockReader implements BlockRangeReader {
  private static final Object END = new Object();

  private final WorkerAddress worker;
  private final long blockId;
  private final long expected;
  private final long timeoutMs;
  private final FileSystemContext context;
  private final long offset;
  private final long end;
  /** Block offset of the next checksummed byte the worker should send. */
  private long nextOffset;
  /**
   * Every message must carry checksums: they were asked for and the worker cannot serve this read from the
   * under file system (whose reads carry none), so a message without them is the worker's (or a
   * marshaller's) fault, never accepted unchecked.
   */
  private final boolean sumsRequired;
  private final boolean unlisted;
  private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
  private ClientCallStreamObserver<ReadBlockRequest> call;
  private ReadBlockResponse currentMessage;
  /** The current chunk's pieces inside the range (one per transport buffer) and the one being copied out. */
  private Iterator<ByteBuffer> pieces;
  private ByteBuffer current;
  private volatile boolean closed;
  private long received;
  private boolean finished;

  /**
   * Starts reading.
   *
   * @param promote move the block to the worker's top tier first (CACHE_PROMOTE)
   * @param ufsFallback a worker without the block reads it from the under file system (persisted files)
   * @param noCache with ufsFallback: do not cache what is read from the under file system (NO_CACHE)
   * @param unlisted the master listed no copy of the block (the worker re-announces one it holds)
   * @param ufsOnly with ufsFallback: read the under file system's copy uncached even if the worker holds one
   *     (this reader found that copy corrupt)
   */
  BlockReader(FileSystemContext context, WorkerAddress worker, long blockId, long offset, long length,
      boolean promote, boolean ufsFallback, boolean noCache, boolean unlisted, boolean ufsOnly) {
    this.worker = worker;
    this.blockId = blockId;
    this.expected = length;
    this.timeoutMs = context.rpcTimeoutMs();
    this.context = context;
    this.offset = offset;
    this.end = offset + length;
    this.nextOffset = ChunkChecksums.alignDown(offset);
    boolean checksums = context.conf().get(ClientKeys.READ_CHECKSUM_VERIFY);
    this.sumsRequired = checksums && !ufsFallback;
    this.unlisted = unlisted;
    int prefetch = context.conf().get(ClientKeys.READ_PREFETCH_CHUNKS);
    int chunkSize = (int) (long) context.conf().get(ClientKeys.STREAM_CHUNK_SIZE);
    ReadBlockRequest req = ReadBlockRequest.newBuilder().setBlockId(blockId).setOffset(offset)
        .setLength(length).setChunkSize(chunkSize).setPromote(promote).setUfsFallback(ufsFallback)
        .setNoCache(noCache || ufsOnly).setUnlisted(unlisted && !ufsOnly).setChecksums(checksums)
        .setUfsOnly(ufsOnly).build();
    context.readBlock(worker, req, new ClientResponseObserver<ReadBlockRequest, ReadBlockResponse>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<ReadBlockRequest> stream) {
        call = stream;
        stream.disableAutoRequestWithInitial(prefetch);
      }

      @Override
      public void onNext(ReadBlockResponse value) {
        queue.add(value);
        if (closed) {
          releaseQueued(); // arrived after close: nobody will read it
        }
      }

      @Override
      public void onError(Throwable t) {
        queue.add(t);
      }

      @Override
      public void onCompleted() {
        queue.add(END);
      }
    });
  }

  @Override
  public WorkerAddress worker() {
    return worker;
  }

  @Override
  public String source() {
    return unlisted ? "worker " + worker + " (from the under file system)" : "worker " + worker;
  }

  /** Copies up to len bytes into b; returns -1 at the end of the range. */
  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    while (current == null || !current.hasRemaining()) {
      if (pieces != null && pieces.hasNext()) {
        current = pieces.next();
        continue;
      }
      releaseCurrent();
      if (finished) {
        return -1;
      }
      Object next;
      try {
        next = queue.poll(timeoutMs, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        close();
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("Interrupted while reading block " + blockId);
      }
      if (next == null) {
        close();
        throw new DeadlineExceededException("Worker " + worker + " sent nothing for " + timeoutMs
            + " ms while reading block " + blockId);
      }
      if (next == END) {
        finished = true;
        if (received != expected) {
          throw new DataLossException("Worker " + worker + " sent " + received + " of " + expected
              + " bytes of block " + blockId);
        }
        return -1;
      }
      if (next instanceof Throwable) {
        finished = true;
        io.strata.common.exception.StrataException e = GrpcErrors.fromThrowable((Throwable) next);
        if (e.code() == io.strata.common.exception.ErrorCode.DATA_LOSS) {
          // The worker found its own copy damaged (a block file shorter than listed, no checksums).
          throw new CorruptBlockException(blockId, worker.toString(), Math.max(offset, nextOffset), e.getMessage());
        }
        throw e.code().toException("Reading block " + blockId + " from worker " + worker + " failed: "
            + e.getMessage(), e);
      }
      currentMessage = (ReadBlockResponse) next;
      if (sumsRequired && currentMessage.getChunkCrc32CCount() == 0) {
        int size = currentMessage.getChunk().size();
        close();
        throw new io.strata.common.exception.InternalException("Worker " + worker + " sent " + size
            + " bytes of block " + blockId + " without the checksums asked for");
      }
      List<ByteBuffer> inRange = currentMessage.getChunkCrc32CCount() == 0
          ? currentMessage.getChunk().asReadOnlyByteBufferList() : verified(currentMessage);
      for (ByteBuffer p : inRange) {
        received += p.remaining();
      }
      pieces = inRange.iterator();
      call.request(1);
    }
    // The one copy: from the transport's buffers into the caller's array, across pieces of this chunk.
    int done = 0;
    while (true) {
      int n = Math.min(len - done, current.remaining());
      current.get(b, off + done, n);
      done += n;
      if (done == len || !pieces.hasNext()) {
        break;
      }
      current = pieces.next();
    }
    if (!current.hasRemaining() && !pieces.hasNext()) {
      releaseCurrent();
    }
    return done;
  }

  /**
   * Checks a checksummed message chunk by chunk over its pieces and returns the pieces of it inside the
   * requested range (the widening to whole checksum chunks trimmed off).
   */
  private List<ByteBuffer> verified(ReadBlockResponse msg) throws CorruptBlockException {
    ByteString chunk = msg.getChunk();
    int size = chunk.size();
    if (msg.getOffset() != nextOffset || msg.getChunkCrc32CCount() != ChunkChecksums.chunkCount(size)) {
      close();
      throw new CorruptBlockException(blockId, worker.toString(), nextOffset, "the worker sent " + size
          + " bytes at offset " + msg.getOffset() + " with " + msg.getChunkCrc32CCount() + " checksums, expected "
          + "offset " + nextOffset + " and " + ChunkChecksums.chunkCount(size) + " checksums");
    }
    List<ByteBuffer> all = chunk.asReadOnlyByteBufferList();
    int bad = ChunkChecksums.firstMismatch(all, msg.getChunkCrc32CList());
    if (bad >= 0) {
      long at = nextOffset + (long) bad * ChunkChecksums.CHUNK_BYTES;
      close();
      throw new CorruptBlockException(blockId, worker.toString(), at, String.format("CRC32C of the chunk at offset "
          + "%d does not match its stored checksum %08x", at, msg.getChunkCrc32C(bad)));
    }
    long from = nextOffset;
    nextOffset += size;
    return slice(all, (int) Math.max(0, offset - from), (int) Math.min(size, end - from));
  }

  /** The bytes [from, to) of the pieces laid end to end, as views of them. */
  private static List<ByteBuffer> slice(List<ByteBuffer> all, int from, int to) {
    List<ByteBuffer> out = new ArrayList<>(all.size());
    int at = 0;
    for (ByteBuffer p : all) {
      int start = Math.max(from, at);
      int stop = Math.min(to, at + p.remaining());
      if (start < stop) {
        ByteBuffer v = p.duplicate();
        v.position(p.position() + start - at).limit(p.position() + stop - at);
        out.add(v);
      }
      at += p.remaining();
    }
    return out;
  }

  private void releaseCurrent() {
    if (currentMessage != null) {
      current = null;
      pieces = null;
      context.release(currentMessage);
      currentMessage = null;
    }
  }

  /** Releases queued chunks; each is taken by exactly one thread (this or a late gRPC callback). */
  private void releaseQueued() {
    Object o;
    while ((o = queue.poll()) != null) {
      if (o instanceof ReadBlockResponse) {
        context.release((ReadBlockResponse) o);
      }
    }
  }

  @Override
  public void close() {
    if (!finished) {
      finished = true;
      call.cancel("reader closed", null);
    }
    closed = true;
    releaseCurrent();
    releaseQueued();
  }
}
