package io.strata.client;

import io.strata.client.options.WriteType;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.DeleteRequest;
import java.io.IOException;
import java.io.OutputStream;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a file by its {@link WriteType}: blocks (MUST_CACHE, ASYNC_THROUGH, CACHE_THROUGH), each to the
 * worker the location policy picks, as a stream of chunks or, to a worker on this host, short-circuit
 * into its temp block file ({@link BlockWriter#open} chooses); and, for CACHE_THROUGH and THROUGH, the under
 * file system copy through one worker ({@link UfsOutStream}), fed the same chunks. {@link #close()} commits
 * the last block, closes the under file system copy (checking its length), then completes the file at the
 * master.
 *
 * <p>A full cache (every tier of the workers full of blocks of files not yet persisted, which workers never
 * evict): an ASYNC_THROUGH writer reserves each block whole at its worker before sending a byte of it
 * ({@link BlockOutStream#reserve}), so it never fails mid-block with bytes it no longer has; the
 * reservation waits up to {@link ClientKeys#WRITE_SPACE_WAIT_TIMEOUT} while the master persists that
 * worker's files, then the next worker is tried; when none had room the writer writes the file through to
 * the under file system: it opens the UFS copy ({@link UfsOutStream}), replays the blocks it committed so
 * far (read back from their workers), sends the rest of the file there only, and completes the file
 * PERSISTED with those blocks cached ({@code ufs_written}). A CACHE_THROUGH writer sends every byte to the under file system anyway: a block the cache has
 * no room for is dropped (even mid-block) and the rest of it goes to the under file system only; the next
 * block tries the cache again. MUST_CACHE fails at once.
 *
 * <p>Failover: when the current block's worker fails mid-block (gone, silent, reset; see
 * {@link BlockRetry#isCopyFailure}), the block goes to another worker, which gets the block's bytes so far
 * again from a bounded buffer ({@link BlockReplayBuffer}, {@link ClientKeys#WRITE_FAILOVER_BUFFER_SIZE}), after
 * a backoff, within {@link ClientKeys#BLOCK_WRITE_RETRY_MAX}; the failed worker gets no later block of this
 * file. This covers MUST_CACHE and the cached part of CACHE_THROUGH and ASYNC_THROUGH (ASYNC_THROUGH
 * reserves the block at the new worker first; when none has room it writes the file through, the block so
 * far included). A block that outgrew the buffer, or that no other worker takes, fails the write as below,
 * except CACHE_THROUGH, which leaves the block to its under file system copy. The under file system stream
 * itself does not fail over: its worker failing fails the write.
 *
 * <p>All or nothing: when any stream fails, or on {@link #cancel()}, every stream is cancelled (the workers
 * drop the block in progress and the partial under file system copy) and the file is deleted at the
 * master, so no half-written file stays visible. Blocks already committed go with the file.
 *
 * <p>Not thread-safe: one writer.
 */
public final class FileOutStream extends OutputStream {
  private static final Logger LOG = LoggerFactory.getLogger(FileOutStream.class);

  private final FileSystemContext context;
  private final WorkerSelector selector;
  private final URIStatus file;
  private final WriteType writeType;
  private final long blockSize;
  private final int chunkSize;
  private byte[] chunk;
  private int chunkFill;
  /** The block being written now, or null (between blocks, dropped, through the UFS, THROUGH). */
  private BlockWriter block;
  /** The current block's bytes so far, re-sent to another worker when its worker fails. */
  private final BlockReplayBuffer replay;
  /**
   * Bytes were written through the current writer ({@link #writeThrough}): it holds all of the block so far,
   * and {@link #replay} none of what came after it took over.
   */
  private boolean wroteThrough;
  private final BlockRetry.Policy retryPolicy;
  /** Retries of the current block after its workers failed; null before a failure. */
  private BlockRetry blockRetry;
  /** Workers that failed this stream: no later block of it goes there. */
  private final Set<WorkerAddress> failedWorkers = new HashSet<>();
  /** CACHE_THROUGH: the cache had no room for the current block; it goes to the under file system only. */
  private boolean blockDropped;
  /** ASYNC_THROUGH: no worker had room; the rest of the file goes to the under file system only. */
  private boolean throughUfs;
  /** Blocks committed so far and where (ASYNC_THROUGH: replayed into the UFS copy if it falls back). */
  private final java.util.List<Committed> committed = new java.util.ArrayList<>();
  private UfsOutStream ufs;

  private record Committed(long blockId, WorkerAddress worker, long length) {}

  /** MUST_CACHE short-circuit: the last finished block, committing while this stream writes the next; or null. */
  private BackgroundCommit pending;
  private final boolean commitInBackground;
  /** MUST_CACHE short-circuit with background commits: the next block's temp block created ahead; or null. */
  private final WriteAhead ahead;
  private int backgroundCommits;
  private int rewrittenBlocks;
  private int blockIndex;
  private long blockFill;
  private long length;
  private boolean closed;

  FileOutStream(FileSystemContext context, WorkerSelector selector, URIStatus file, WriteType writeType) {
    this.context = context;
    this.selector = selector;
    this.file = file;
    this.writeType = writeType;
    this.blockSize = file.blockSize();
    this.chunkSize = (int) Math.min(context.conf().get(ClientKeys.STREAM_CHUNK_SIZE), blockSize);
    this.replay = new BlockReplayBuffer(context.conf().get(ClientKeys.WRITE_FAILOVER_BUFFER_SIZE));
    this.retryPolicy = BlockRetry.Policy.writes(context.conf());
    this.commitInBackground = context.conf().get(ClientKeys.SHORT_CIRCUIT_WRITE_COMMIT_BACKGROUND);
    this.ahead = WriteAhead.of(context, writeType, blockSize);
    context.leases().add(file.id()); // renewed until the file completes or is abandoned
  }

  /** Bytes written so far. */
  public long bytesWritten() {
    return length;
  }

  /**
   * Blocks whose commit ran in the background while the next was written, and of those, blocks written again
   * elsewhere because that commit failed ({@code strata.user.shortcircuit.write.commit.background}).
   */
  public int[] backgroundCommits() {
    return new int[] {backgroundCommits, rewrittenBlocks};
  }

  /** Blocks whose temp block was created ahead, in the background, and taken by this stream so far. */
  public int blocksCreatedAhead() {
    return ahead == null ? 0 : ahead.taken();
  }

  /** Short-circuit writes of this stream's client: blocks written that way, and why others streamed. */
  public io.strata.client.shortcircuit.ShortCircuitClient shortCircuit() {
    return context.shortCircuit();
  }

  /** How this stream writes: the create call's write type, or the configured default. */
  public WriteType writeType() {
    return writeType;
  }

  /** The file being written, as the master described it at creation. */
  public URIStatus status() {
    return file;
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    if (off < 0 || len < 0 || off + len > b.length) {
      throw new IndexOutOfBoundsException("off=" + off + " len=" + len + " array=" + b.length);
    }
    ensureOpen();
    while (len > 0) {
      if (writeType.cachesBlocks() && block == null && !blockDropped && !throughUfs) {
        openBlock();
      }
      if (chunkFill == 0 && block != null && ufs == null && !writeType.writesUfs() && block.keepsBytes()) {
        // Short-circuit, no under file system copy: straight from the caller's array into the block's file,
        // which keeps the bytes for a failover (no chunk copy, nothing kept on the heap).
        int n = (int) Math.min(Math.min(len, chunkSize), blockSize - blockFill);
        if (writeThrough(b, off, n)) {
          blockFill += n;
          length += n;
          off += n;
          len -= n;
          if (blockFill == blockSize) {
            finishBlock();
          } else if (ahead != null && blockFill >= blockSize / 2) {
            ahead.startAfter(blockIndex, file.id(), selector, failedWorkers);
          }
        }
        continue;
      }
      if (chunk == null) {
        chunk = replay.reuse(chunkSize);
        chunkFill = 0;
      }
      // Chunks never straddle a block boundary, whether or not blocks are written.
      int n = (int) Math.min(Math.min(len, chunk.length - chunkFill), blockSize - blockFill);
      System.arraycopy(b, off, chunk, chunkFill, n);
      chunkFill += n;
      blockFill += n;
      length += n;
      off += n;
      len -= n;
      if (chunkFill == chunk.length || blockFill == blockSize) {
        sendChunk();
      }
      if (blockFill == blockSize) {
        finishBlock();
      }
    }
  }

  private void ensureOpen() throws IOException {
    if (closed) {
      throw new FailedPreconditionException("The stream writing " + file.path() + " is closed");
    }
  }

  private void openBlock() throws IOException {
    long blockId = BlockId.of(file.id(), blockIndex);
    if (pending != null && pending.failed()) {
      failedWorkers.add(pending.writer.worker()); // its commit failed: no new block there (rewritten later)
    }
    replay.clear();
    blockRetry = null;
    wroteThrough = false;
    try {
      block = ahead == null ? null : ahead.take(blockId, failedWorkers);
      if (block == null) {
        block = newWriter(blockId);
      }
    } catch (ResourceExhaustedException e) {
      if (writeType == WriteType.ASYNC_THROUGH) {
        writeThroughUfs(e);
      } else if (!dropBlock(e)) {
        abort();
        throw e;
      }
    } catch (IOException | RuntimeException e) {
      abort();
      throw e;
    }
  }

  /**
   * A writer for block {@code blockId} at the worker the write policy picks among those that have not failed
   * this stream; ASYNC_THROUGH reserves the block's room there first.
   */
  private BlockWriter newWriter(long blockId) throws IOException {
    if (writeType == WriteType.ASYNC_THROUGH) {
      return reservedBlock(blockId);
    }
    return BlockWriter.open(context, selector.select(blockId, blockSize, failedWorkers), blockId, blockSize, false);
  }

  /**
   * The current block's worker failed with {@code cause} (a failure of that worker: {@link
   * BlockRetry#isCopyFailure}). The block goes to another worker, which gets the block's bytes so far again
   * from {@link #replay}, after a backoff, within {@link ClientKeys#BLOCK_WRITE_RETRY_MAX} and
   * {@link ClientKeys#BLOCK_RETRY_TOTAL_TIMEOUT}. When that cannot be (the block outgrew the replay buffer,
   * no retry or time left, no other worker takes it): CACHE_THROUGH leaves the block to its under file system
   * copy (as for a full cache), ASYNC_THROUGH with no worker room left writes the file through; otherwise the
   * write fails cleanly ({@link #abort}: the file is deleted) with an error naming the block, every worker
   * tried and why. Returns with {@link #block} the new writer, or null when the block is left to the UFS.
   */
  private void failover(IOException cause) throws IOException {
    if (blockRetry == null) {
      blockRetry = new BlockRetry(retryPolicy);
    }
    if (ahead != null) {
      // The block created ahead holds a block's room, which the block failing over may need: dropped (once its
      // create is over; not waited for, since that create may be stuck on the worker that just failed).
      ahead.discard();
    }
    IOException failure = cause;
    while (true) {
      BlockWriter failed = block;
      block = null;
      if (wroteThrough) {
        // Every byte of the block so far is in the failed writer's file (replayed into it, then written
        // through): its descriptor is what the next writer is replayed from.
        failed.detachBytes(replay);
        wroteThrough = false;
      }
      failed.cancel();
      failedWorkers.add(failed.worker());
      String what = "Writing block " + blockIndex + " (id " + failed.blockId() + ") of " + file.path() + " ("
          + writeType + ", " + replay.bytes() + " bytes of the block written)";
      StrataException stop = null;
      if (!replay.complete()) {
        StrataException why = failure instanceof StrataException se ? se
            : io.strata.common.exception.ErrorCode.DATA_LOSS.toException(String.valueOf(failure.getMessage()), failure);
        stop = why.code().toException(what + " failed at worker " + failed.worker() + " (" + why.code() + ": "
            + why.getMessage() + ")" + (blockRetry.failures().isEmpty() ? "" : " after it " + blockRetry.tried())
            + ", and cannot fail over to another worker: the block's bytes so far exceed "
            + ClientKeys.WRITE_FAILOVER_BUFFER_SIZE.name() + "=" + replay.limit(), failure);
      } else {
        LOG.warn("{} failed at worker {} ({}); failing over to another worker", what, failed.worker(),
            failure.getMessage());
        if (!blockRetry.retryAfter("worker " + failed.worker(), failure)) {
          stop = blockRetry.finalError(what, failure);
        }
      }
      if (stop != null) {
        if (dropBlock(stop)) {
          return;
        }
        abort();
        throw stop;
      }
      try {
        block = newWriter(failed.blockId());
        BlockWriter to = block;
        replay.replayTo(to::write);
        return;
      } catch (ResourceExhaustedException e) {
        // No other worker takes the block (or the one that did is full).
        if (writeType == WriteType.ASYNC_THROUGH && block == null) {
          writeThroughUfs(e);
          try {
            replay.replayTo(ufs::write);
          } catch (IOException | RuntimeException u) {
            abort();
            throw u;
          }
          return;
        }
        if (dropBlock(e)) {
          return;
        }
        abort();
        throw blockRetry.finalError(what, e);
      } catch (IOException e) {
        if (block == null || !BlockRetry.isCopyFailure(e)) {
          abort();
          throw blockRetry.finalError(what, e);
        }
        failure = e; // the new worker failed too, while taking the block so far: the next one
      }
    }
  }

  /**
   * ASYNC_THROUGH, no worker had room for the next block: from now on the file is written through. Its UFS
   * copy gets the blocks committed so far, read back from their workers, then every later byte.
   */
  private void writeThroughUfs(ResourceExhaustedException why) throws IOException {
    LOG.warn("No worker has room for block {} of {}; writing the file through to the under file system: {}",
        blockIndex, file.path(), why.getMessage());
    try {
      ufs = new UfsOutStream(context, selector.select(0, failedWorkers), file.id(), file.path());
      for (Committed c : committed) {
        try (BlockReader r = new BlockReader(context, c.worker(), c.blockId(), 0, c.length(), false, false, false,
            false, false)) {
          for (long done = 0; done < c.length(); ) {
            int n = (int) Math.min(chunkSize, c.length() - done);
            byte[] buf = new byte[n];
            r.readFully(buf, 0, n);
            ufs.write(buf, n);
            done += n;
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      e.addSuppressed(why);
      abort();
      throw e;
    }
    throughUfs = true;
  }

  /** A block stream whose room is reserved whole at a worker; each worker that stays full is left out. */
  private BlockWriter reservedBlock(long blockId) throws IOException {
    long waitMs = context.conf().get(ClientKeys.WRITE_SPACE_WAIT_TIMEOUT).toMillis();
    Set<WorkerAddress> full = new HashSet<>(failedWorkers);
    ResourceExhaustedException last = null;
    while (true) {
      WorkerAddress worker;
      try {
        worker = selector.select(blockId, blockSize, full);
      } catch (ResourceExhaustedException e) {
        if (last == null) {
          throw e;
        }
        throw new ResourceExhaustedException("Writing " + file.path() + " (ASYNC_THROUGH): no worker had room for "
            + "block " + blockIndex + " within " + waitMs + " ms (strata.user.write.space.wait.timeout); "
            + "the last one said: " + last.getMessage(), last);
      }
      try {
        BlockOutStream.reserve(context, worker, blockId, blockSize, waitMs);
        return BlockWriter.open(context, worker, blockId, blockSize, true);
      } catch (ResourceExhaustedException e) {
        LOG.info("Worker {} has no room for block {} of {}: {}", worker, blockIndex, file.path(), e.getMessage());
        full.add(worker);
        last = e;
      } catch (IOException e) {
        if (!BlockRetry.isCopyFailure(e)) {
          throw e;
        }
        // A worker that fails before the block even starts: leave it out like a full one.
        LOG.info("Worker {} failed to reserve block {} of {}: {}", worker, blockIndex, file.path(), e.getMessage());
        failedWorkers.add(worker);
        full.add(worker);
      }
    }
  }

  /**
   * CACHE_THROUGH only: the cache has no room for this block, which the under file system copy holds in
   * full anyway; the block stream (if any) is dropped and the rest of the block goes there only.
   */
  private boolean dropBlock(IOException why) {
    if (writeType != WriteType.CACHE_THROUGH) {
      return false;
    }
    LOG.info("The cache cannot take block {} of {}; writing it to the under file system only: {}", blockIndex,
        file.path(), why.getMessage());
    if (block != null) {
      block.cancel();
      block = null;
    }
    blockDropped = true;
    return true;
  }

  private void ensureUfs() throws IOException {
    if (ufs != null || !writeType.writesUfs()) {
      return;
    }
    try {
      WorkerAddress worker = selector.select(0, failedWorkers);
      ufs = new UfsOutStream(context, worker, file.id(), file.path());
    } catch (IOException | RuntimeException e) {
      abort();
      throw e;
    }
  }

  private void sendChunk() throws IOException {
    if (chunkFill == 0) {
      return;
    }
    byte[] full = chunk;
    int n = chunkFill;
    chunk = null;
    chunkFill = 0;
    ensureUfs();
    // The UFS copy this chunk goes to; a failover below that writes the file through replays it there itself.
    UfsOutStream ufsTarget = ufs;
    try {
      // Both streams wrap the same array without copying; neither changes it, and the replay buffer keeps it
      // (unchanged) until the block commits.
      if (block != null) {
        replay.add(full, n);
        try {
          block.write(full, n);
        } catch (ResourceExhaustedException e) {
          if (!dropBlock(e)) {
            throw e;
          }
        } catch (IOException e) {
          if (!BlockRetry.isCopyFailure(e)) {
            throw e;
          }
          failover(e);
        }
      }
      if (ufsTarget != null) {
        ufsTarget.write(full, n);
      }
    } catch (IOException | RuntimeException e) {
      abort();
      throw e;
    }
  }

  /**
   * Writes {@code n} bytes of the caller's array through the current block's writer, which keeps them
   * ({@link BlockWriter#keepsBytes}). False when its worker failed and the block failed over instead: the
   * bytes so far went to the new writer, these did not, and the caller sends them again.
   */
  private boolean writeThrough(byte[] b, int off, int n) throws IOException {
    try {
      try {
        block.writeThrough(b, off, n);
        wroteThrough = true;
        return true;
      } catch (ResourceExhaustedException e) {
        throw e; // no under file system copy to leave the block to (CACHE_THROUGH never writes through)
      } catch (IOException e) {
        if (!BlockRetry.isCopyFailure(e)) {
          throw e;
        }
        failover(e);
        return false;
      }
    } catch (IOException | RuntimeException e) {
      abort();
      throw e;
    }
  }

  private void finishBlock() throws IOException {
    blockFill = 0;
    awaitPending(); // at most one commit in flight, and blocks commit in order
    if (block != null && commitInBackground && writeType == WriteType.MUST_CACHE && ufs == null
        && block.keepsBytes() && commitLater()) {
      return;
    }
    if (block == null) {
      if (blockDropped) {
        blockDropped = false;
        blockIndex++;
      }
      return;
    }
    try {
      while (block != null) {
        try {
          long len = block.close();
          committed.add(new Committed(block.blockId(), block.worker(), len));
          break;
        } catch (ResourceExhaustedException e) {
          if (!dropBlock(e)) {
            abort(); // cancels the writer too (harmless after its failure; closes what it holds)
            throw e;
          }
        } catch (IOException e) {
          if (!BlockRetry.isCopyFailure(e)) {
            abort();
            throw e;
          }
          failover(e); // a new worker has the whole block again (committed next round), or it went to the UFS
        }
      }
      blockDropped = false;
    } catch (RuntimeException e) {
      abort();
      throw e;
    }
    block = null;
    if (ufs == null) {
      // The block's writer is done with its chunks (committed: everything was sent), and no UFS stream
      // holds them (its sends may still be in flight), so their arrays serve the next block's chunks.
      replay.clearAndRecycle();
    } else {
      replay.clear();
    }
    blockRetry = null;
    blockIndex++;
  }

  /**
   * Starts the current block's commit on the context's background threads and moves on to the next block
   * ({@link BackgroundCommit}); false (nothing started) when they refuse more work: the caller commits it here.
   */
  private boolean commitLater() {
    BackgroundCommit c = BackgroundCommit.start(context, block, blockIndex);
    if (c == null) {
      return false;
    }
    pending = c;
    backgroundCommits++;
    block = null;
    replay.clearAndRecycle(); // the writer's file holds the block; no UFS stream shares the chunks (MUST_CACHE)
    blockRetry = null;
    blockDropped = false;
    blockIndex++;
    return true;
  }

  /**
   * Waits for the block committing in the background, if any. When its worker failed, the block is written
   * again, from the bytes in the failed writer's descriptor, to another worker (within the write retries);
   * when that cannot be, the write fails cleanly ({@link #abort}) naming the block and the workers tried.
   */
  private void awaitPending() throws IOException {
    BackgroundCommit p = pending;
    if (p == null) {
      return;
    }
    BackgroundCommit.Outcome done;
    try {
      done = p.await(context, file.path());
    } catch (IOException e) {
      // Interrupted, or the client closed: the commit may still run, and abort cancels its writer once it is over.
      try {
        abort();
      } catch (RuntimeException ignored) {
        // a closed client cannot delete the file; its lease runs out at the master
      }
      if (e instanceof java.io.InterruptedIOException) {
        Thread.currentThread().interrupt();
      }
      throw e;
    }
    pending = null; // its commit is over: this thread owns the writer again
    try {
      Throwable failed = done.failure();
      if (failed == null) {
        committed.add(new Committed(p.writer.blockId(), p.writer.worker(), done.length()));
        return;
      }
      if (failed instanceof RuntimeException re) {
        throw re;
      }
      if (failed instanceof Error err) {
        throw err;
      }
      IOException failure = failed instanceof IOException io ? io : new IOException(failed);
      if (!BlockRetry.isCopyFailure(failure)) {
        throw failure;
      }
      if (ahead != null) {
        ahead.discard(); // as for a failover: the block written again may need the room it holds
      }
      BackgroundCommit.Rewritten again = p.rewrite(context, selector, failedWorkers, retryPolicy, blockSize,
          failure, "Committing block " + p.blockIndex + " (id " + p.writer.blockId() + ") of " + file.path()
              + " (" + writeType + ", written whole, committed in the background)");
      committed.add(new Committed(p.writer.blockId(), again.worker(), again.length()));
      rewrittenBlocks++;
    } catch (IOException | RuntimeException | Error e) {
      p.writer.cancel(); // nothing after its own failure or a rewrite's (each is idempotent)
      abort();
      throw e;
    }
  }

  @Override
  public void flush() {
    // Data becomes visible only when the file completes; nothing to flush early.
  }

  /** Commits the last block, closes the under file system copy, and completes the file. */
  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    sendChunk();
    if (block != null) {
      finishBlock();
    }
    awaitPending(); // every block is committed before the file completes
    if (ahead != null) {
      ahead.discardNow(); // the file ended within the block: the next one's temp block goes, before close returns
    }
    ensureUfs(); // an empty CACHE_THROUGH or THROUGH file still gets its (empty) under file system copy
    if (ufs != null) {
      try {
        ufs.close();
      } catch (IOException | RuntimeException e) {
        abort();
        throw e;
      }
      ufs = null;
    }
    closed = true;
    try {
      context.leases().remove(file.id()); // the master drops its lease when the file completes
      // One request, so one request id, for every retry: a retry the master already applied gets its answer.
      CompleteFileRequest req = CompleteFileRequest.newBuilder().setPath(file.path()).setFileId(file.id())
          .setLength(length).setUfsWritten(throughUfs).setRequestId(context.nextRequestId()).build();
      context.callMaster(m -> m.completeFile(req));
    } catch (StrataException e) {
      // Not deleted: the master may have completed it and lost only the reply, or the path may now name
      // another writer's file. An incomplete file is refused by readers anyway.
      throw e.code().toException("Completing " + file.path() + " failed: " + e.getMessage(), e);
    } finally {
      context.metadataCache().invalidate(file.path());
    }
  }

  /**
   * Abandons the write: the streams in progress are cancelled (the workers drop the block and the partial
   * under file system copy) and the file is deleted at the master. Harmless after close or a failure.
   */
  public void cancel() {
    abort();
  }

  private void abort() {
    if (closed) {
      return;
    }
    closed = true;
    context.leases().remove(file.id());
    if (ahead != null) {
      ahead.discard();
    }
    if (block != null) {
      block.cancel();
      block = null;
    }
    if (pending != null) {
      // Its commit is refused or undone with the file's deletion; a writer whose commit failed still holds
      // its descriptor, closed once the commit is over.
      pending.cancelWhenFailed();
      pending = null;
    }
    replay.clear(); // closes a failed writer's file it kept
    if (ufs != null) {
      ufs.cancel();
      ufs = null;
    }
    deleteFile();
  }

  /** Best effort: a file that cannot be deleted now stays incomplete, which readers refuse anyway. */
  private void deleteFile() {
    try {
      // Strata only: the partial UFS copy was a temporary name the worker deletes; whatever the UFS holds at
      // the file's own path is not this writer's.
      DeleteRequest req = DeleteRequest.newBuilder().setPath(file.path()).setStrataOnly(true)
          .setFileId(file.id()).setRequestId(context.nextRequestId()).build();
      context.callMaster(m -> m.delete(req));
    } catch (StrataException e) {
      LOG.debug("Could not delete {} after its write failed", file.path(), e);
    } finally {
      context.metadataCache().invalidate(file.path());
    }
  }
}
