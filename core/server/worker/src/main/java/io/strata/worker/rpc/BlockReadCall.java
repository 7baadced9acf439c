package io.strata.worker.rpc;

import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.DeadlineExceededException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.OutOfRangeException;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.worker.store.BlockStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * One block read from the local store (ReadBlock): a server stream of chunks sent only while the
 * transport is ready, so a slow reader holds at most a window of data in memory. Zero-copy (unless the
 * service or the call asks for the plain path): each chunk is read from the block file into a pooled
 * direct buffer and lent to gRPC until written; on the plain path into a heap array per chunk. A reader
 * that takes nothing for the stall timeout is cancelled and the block released.
 *
 * <p>Threading: {@link #serve} runs on the calling gRPC thread (or on a UFS worker thread after a load);
 * the ready, cancel and idle callbacks then come from gRPC and the idle watch's threads and are
 * serialised by {@link #lock}, which the idle watch only tries (a drain busy reading a slow disk is not idle,
 * and the watch's one thread, shared by every stream, never waits for it).
 */
final class BlockReadCall implements IdleWatch.Watched {
  private final CallResources res;
  /** Whether chunks go out in pooled direct buffers lent to gRPC (else a heap array per chunk). */
  private final boolean lend;
  /** Whether the call came over the data domain socket (else TCP): the byte counters' path. */
  private final boolean domainSocket;
  private final ReadStream out;
  private final BlockStore.ReadHandle handle;
  private final FileChannel channel;
  private final long end;
  private final int chunk;
  /** The block's checksums when the reader asked for them (then start, end and chunk are chunk-aligned). */
  private final int[] sums;
  private final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
  private long pos;
  private boolean done;
  private volatile long lastSentNanos = System.nanoTime();
  private Runnable unwatch = () -> { };

  private BlockReadCall(CallResources res, ReadStream out, BlockStore.ReadHandle handle, long start, long end,
      int[] sums, boolean lend, boolean domainSocket) {
    this.res = res;
    this.lend = lend;
    this.domainSocket = domainSocket;
    this.out = out;
    this.handle = handle;
    this.channel = handle.channel();
    this.pos = start;
    this.end = end;
    this.sums = sums;
    this.chunk = sums == null ? out.chunk()
        : Math.max(1, out.chunk() / ChunkChecksums.CHUNK_BYTES) * ChunkChecksums.CHUNK_BYTES;
  }

  /** Serves a read from the local store (the normal path, and the path after a UFS load). */
  static void serve(CallResources res, ReadBlockRequest req, ReadStream stream, boolean lend, boolean domainSocket) {
    BlockStore.ReadHandle handle;
    long start = req.getOffset();
    long end;
    int[] sums = null;
    try {
      BlockStore.BlockMeta meta = res.store().get(req.getBlockId());
      if (start > meta.length() || req.getLength() > meta.length() - start) {
        throw new OutOfRangeException("Block " + req.getBlockId() + " has " + meta.length()
            + " bytes; cannot read " + req.getLength() + " bytes at offset " + start);
      }
      end = start + req.getLength();
      handle = res.store().openForRead(req.getBlockId(), req.getPromote());
      if (req.getChecksums() && end > start) {
        // Whole checksum chunks, so the reader can check every byte it is sent.
        long length = handle.meta().length();
        start = ChunkChecksums.alignDown(start);
        end = ChunkChecksums.alignUp(end, length);
        try {
          sums = handle.checksums();
        } catch (IOException | RuntimeException e) {
          handle.close();
          throw e;
        }
      }
    } catch (NotFoundException e) {
      if (req.getUfsFallback()) {
        // Removed (evicted, freed) since it was found here: the under file system still has it.
        res.ufs().readThrough(req.getBlockId(), req.getOffset(), req.getLength(), req.getNoCache(), stream);
      } else {
        stream.fail(e);
      }
      return;
    } catch (Exception e) {
      stream.fail(e);
      return;
    }
    new BlockReadCall(res, stream, handle, start, end, sums, lend, domainSocket).begin();
  }

  @Override
  public long lastProgressNanos() {
    return lastSentNanos;
  }

  @Override
  public boolean idle(String why) {
    // Only tried: a drain reading from a slow disk is not idle, and the watch's one thread must not wait.
    if (!lock.tryLock()) {
      return false;
    }
    try {
      if (!done) {
        finish();
        out.fail(new DeadlineExceededException("Block " + handle.meta().blockId() + " read: the reader made "
            + why));
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  private void begin() {
    lock.lock();
    try {
      unwatch = res.stallWatch().watch(this);
    } finally {
      lock.unlock();
    }
    out.listen(this::drain, this::finish);
    if (out.isCancelled()) {
      finish(); // cancelled before the listeners were in place: release the block now
      return;
    }
    drain();
  }

  private void finish() {
    lock.lock();
    try {
      if (!done) {
        done = true;
        unwatch.run();
        handle.close();
      }
    } finally {
      lock.unlock();
    }
  }

  private void drain() {
    lock.lock();
    try {
      drainLocked();
    } finally {
      lock.unlock();
    }
  }

  private void drainLocked() {
    try {
      while (!done && pos < end && out.isReady()) {
        int n = (int) Math.min(chunk, end - pos);
        if (!lend) {
          ByteBuffer buf = ByteBuffer.allocate(n);
          fill(buf);
          out.sendOne(ReadStream.message(buf, pos, sums));
        } else {
          DirectBufferPool pool = res.pool();
          ByteBuffer buf = pool.acquire(n);
          boolean lent = false;
          try {
            fill(buf);
            ReadBlockResponse msg = ReadStream.message(buf, pos, sums);
            lent = true;
            out.sendLent(msg, res.marshalling().readResponses(), () -> pool.release(buf));
          } finally {
            if (!lent) {
              pool.release(buf);
            }
          }
        }
        pos += n;
        res.streamed().read(domainSocket, n);
        handle.served(n);
        lastSentNanos = System.nanoTime();
      }
      if (!done && pos >= end) {
        finish();
        out.complete();
      }
    } catch (Exception e) {
      if (!done) {
        finish();
        out.fail(e);
      }
    }
  }

  /** Fills {@code buf} (to its limit) from the block file at {@link #pos}, and flips it. */
  private void fill(ByteBuffer buf) throws IOException {
    while (buf.hasRemaining()) {
      int r = channel.read(buf, pos + buf.position());
      if (r < 0) {
        throw new DataLossException("Block file ended at " + (pos + buf.position()) + ", before " + end);
      }
    }
    buf.flip();
  }
}
