package io.strata.client;

import io.strata.client.options.WriteType;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.ResourceExhaustedException;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes a file by its {@link WriteType}: blocks (MUST_CACHE, ASYNC_THROUGH, CACHE_THROUGH), each to the
 * worker the location policy picks, as a stream of chunks or, to a worker on this host, short-circuit
 * into its temp block file ({@link BlockWriter#open} chooses); and, for CACHE_THROUGH and THROUGH, the under
 * file system copy through one worker ({@link UfsWriteCopy}), fed the same chunks. {@link #close()} commits
 * the last block, closes the under file system copy (checking its length), then completes the file at the
 * master ({@link FileAtMaster}).
 *
 * <p>A full cache (every tier of the workers full of blocks of files not yet persisted, which workers never
 * evict): an ASYNC_THROUGH writer reserves each block whole at its worker before sending a byte of it
 * ({@link BlockOutStream#reserve}), so it never fails mid-block with bytes it no longer has; the
 * reservation waits up to {@link ClientKeys#WRITE_SPACE_WAIT_TIMEOUT} while the master persists that
 * worker's files, then the next worker is tried; when none had room the writer writes the file through to
 * the under file system: it opens the UFS copy ({@link UfsWriteCopy#writeThrough}), replays the blocks it committed so
 * far (read back from their workers), sends the rest of the file there only, and completes the file
 * PERSISTED with those blocks cached ({@code ufs_written}). A CACHE_THROUGH writer sends every byte to the under file system anyway: a block the cache has
 * no room for is dropped (even mid-block) and the rest of it goes to the under file system only; the next
 * block tries the cache again. MUST_CACHE fails at once.
 *
 * <p>Failover: when the current block's worker fails mid-block, the block goes to another worker, which gets
 * the block's bytes so far again ({@link BlockFailover}, which also chooses each block's worker). The under
 * file system stream itself does not fail over: its worker failing fails the write.
 *
 * <p>All or nothing: when any stream fails, or on {@link #cancel()}, every stream is cancelled (the workers
 * drop the block in progress and the partial under file system copy) and the file is deleted at the
 * master, so no half-written file stays visible. Blocks already committed go with the file.
 *
 * <p>Dropped without {@link #close} or {@link #cancel}, the stream is abandoned once the collector finds it
 * unreachable ({@link OpenWrite}): its lease is no longer renewed and its streams are cancelled.
 *
 * <p>Not thread-safe: one writer.
 */
public final class FileOutStream extends OutputStream {
  private final FileSystemContext context;
  private final WorkerSelector selector;
  private final URIStatus file;
  private final WriteType writeType;
  private final long blockSize;
  private final int chunkSize;
  private byte[] chunk;
  private int chunkFill;
  /** The block being written now and its worker, the workers that failed, the blocks committed so far. */
  private final BlockFailover blocks;
  /** The under file system copy: CACHE_THROUGH, THROUGH, and ASYNC_THROUGH once no worker has room. */
  private final UfsWriteCopy ufs;
  /** The file at the master: its lease, its completion, its deletion when the write fails. */
  private final FileAtMaster master;
  /** What a stream dropped without close or cancel lets go of (lease, streams), by the {@link StreamCleaner}. */
  private final OpenWrite open;
  private final java.lang.ref.Cleaner.Cleanable cleanable;

  /** MUST_CACHE short-circuit: the last finished block, committing while this stream writes the next; or null. */
  private BackgroundCommit pending;
  private final boolean commitInBackground;
  /** MUST_CACHE short-circuit with background commits: the next block's temp block created ahead; or null. */
  private final WriteAhead ahead;
  private int backgroundCommits;
  private int rewrittenBlocks;
  private long blockFill;
  private long length;
  private boolean closed;
  /** Why the write failed (the stream closed itself): thrown again by a later close. Null when it did not. */
  private Throwable failure;

  FileOutStream(FileSystemContext context, WorkerSelector selector, URIStatus file, WriteType writeType) {
    this.context = context;
    this.selector = selector;
    this.file = file;
    this.writeType = writeType;
    this.blockSize = file.blockSize();
    this.chunkSize = (int) Math.min(context.conf().get(ClientKeys.STREAM_CHUNK_SIZE), blockSize);
    this.commitInBackground = context.conf().get(ClientKeys.SHORT_CIRCUIT_WRITE_COMMIT_BACKGROUND);
    this.ahead = WriteAhead.of(context, writeType, blockSize);
    this.open = new OpenWrite(context.leases(), file.id(), file.path(), ahead);
    this.blocks = new BlockFailover(context, selector, file, writeType, ahead, this::writeThroughUfs, open);
    this.ufs = new UfsWriteCopy(context, selector, file, chunkSize, open);
    this.master = new FileAtMaster(context, file); // the lease: renewed until the file completes or is abandoned
    this.cleanable = StreamCleaner.register(this, open);
  }

  /** The write ended here (closed or abandoned): the cleaner has nothing to let go and forgets this stream. */
  private void ended() {
    open.done();
    cleanable.clean();
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
      if (writeType.cachesBlocks() && !blocks.writing() && !blocks.dropped() && !ufs.through()) {
        openBlock();
      }
      if (chunkFill == 0 && ufs.stream() == null && !writeType.writesUfs() && blocks.keepsBytes()) {
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
            ahead.startAfter(blocks.index(), file.id(), selector, blocks.failedWorkers());
          }
        }
        continue;
      }
      if (chunk == null) {
        chunk = blocks.chunkArray(chunkSize);
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
    if (pending != null && pending.failed()) {
      blocks.failedWorkers().add(pending.writer.worker()); // its commit failed: no new block there (rewritten later)
    }
    try {
      blocks.open();
    } catch (ResourceExhaustedException e) {
      if (writeType == WriteType.ASYNC_THROUGH) {
        writeThroughUfs(e, null);
      } else if (!blocks.drop(e)) {
        abort(e);
        throw e;
      }
    } catch (IOException | RuntimeException e) {
      abort(e);
      throw e;
    }
  }

  /**
   * ASYNC_THROUGH, no worker had room for the next block, or for the one failing over ({@code blockSoFar}: its
   * bytes so far; null for none): from now on the file is written through ({@link UfsWriteCopy#writeThrough}).
   */
  private void writeThroughUfs(ResourceExhaustedException why, BlockReplayBuffer blockSoFar) throws IOException {
    try {
      ufs.writeThrough(why, blocks.index(), blocks.failedWorkers(), blocks.committed(), blockSoFar);
    } catch (IOException | RuntimeException e) {
      abort(e);
      throw e;
    }
  }

  private void ensureUfs() throws IOException {
    if (!writeType.writesUfs()) {
      return;
    }
    try {
      ufs.open(blocks.failedWorkers());
    } catch (IOException | RuntimeException e) {
      abort(e);
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
    UfsOutStream ufsTarget = ufs.stream();
    try {
      // Both streams wrap the same array without copying; neither changes it, and the replay buffer keeps it
      // (unchanged) until the block commits.
      if (blocks.writing()) {
        blocks.write(full, n);
      }
      if (ufsTarget != null) {
        ufsTarget.write(full, n);
      }
    } catch (IOException | RuntimeException e) {
      abort(e);
      throw e;
    }
  }

  /**
   * Writes {@code n} bytes of the caller's array through the current block's writer
   * ({@link BlockFailover#writeThrough}); false when the block failed over instead and the caller sends them again.
   */
  private boolean writeThrough(byte[] b, int off, int n) throws IOException {
    try {
      return blocks.writeThrough(b, off, n);
    } catch (IOException | RuntimeException e) {
      abort(e);
      throw e;
    }
  }

  private void finishBlock() throws IOException {
    blockFill = 0;
    awaitPending(); // at most one commit in flight, and blocks commit in order
    if (commitInBackground && writeType == WriteType.MUST_CACHE && ufs.stream() == null && blocks.keepsBytes()
        && commitLater()) {
      return;
    }
    if (!blocks.writing()) {
      blocks.skipDropped();
      return;
    }
    try {
      blocks.commit();
    } catch (IOException | RuntimeException e) {
      abort(e); // cancels the writer too (harmless after its failure; closes what it holds)
      throw e;
    }
    // The block's writer is done with its chunks (committed: everything was sent); when no UFS stream holds
    // them (its sends may still be in flight), their arrays serve the next block's chunks.
    blocks.next(ufs.stream() == null);
  }

  /**
   * Starts the current block's commit on the context's background threads and moves on to the next block
   * ({@link BackgroundCommit}); false (nothing started) when they refuse more work: the caller commits it here.
   */
  private boolean commitLater() {
    BackgroundCommit c = BackgroundCommit.start(context, blocks.writer(), blocks.index());
    if (c == null) {
      return false;
    }
    pending = c;
    backgroundCommits++;
    blocks.next(true); // the writer's file holds the block; no UFS stream shares the chunks (MUST_CACHE)
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
        abort(e);
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
        blocks.committed(p.writer.blockId(), p.writer.worker(), done.length());
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
      blocks.rewrite(p, failure);
      rewrittenBlocks++;
    } catch (IOException | RuntimeException | Error e) {
      p.writer.cancel(); // nothing after its own failure or a rewrite's (each is idempotent)
      abort(e);
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
      if (failure != null) {
        // As HDFS does: a close after a failed write or complete says so again, never "written". A new exception
        // each time: try-with-resources adds the close's to the write's, and refuses the write's own.
        throw new IOException("The write of this file failed before: " + failure.getMessage(), failure);
      }
      return;
    }
    sendChunk();
    if (blocks.writing()) {
      finishBlock();
    }
    awaitPending(); // every block is committed before the file completes
    if (ahead != null) {
      ahead.discardNow(); // the file ended within the block: the next one's temp block goes, before close returns
    }
    ensureUfs(); // an empty CACHE_THROUGH or THROUGH file still gets its (empty) under file system copy
    try {
      ufs.close();
    } catch (IOException | RuntimeException e) {
      abort(e);
      throw e;
    }
    closed = true;
    ended();
    try {
      master.complete(length, ufs.through());
    } catch (IOException | RuntimeException e) {
      failure = e;
      throw e;
    }
  }

  /**
   * Abandons the write: the streams in progress are cancelled (the workers drop the block and the partial
   * under file system copy) and the file is deleted at the master. Harmless after close or a failure.
   */
  public void cancel() {
    abort(null);
  }

  /** {@code why}: the failure a later {@link #close} throws again; null for a cancel. */
  private void abort(Throwable why) {
    if (closed) {
      return;
    }
    closed = true;
    failure = why;
    master.dropLease();
    if (ahead != null) {
      ahead.discard();
    }
    blocks.cancel(); // and the bytes kept for a failover: a failed writer's file kept is closed
    if (pending != null) {
      // Its commit is refused or undone with the file's deletion; a writer whose commit failed still holds
      // its descriptor, closed once the commit is over.
      pending.cancelWhenFailed();
      pending = null;
    }
    ufs.cancel();
    ended();
    master.delete();
  }
}
