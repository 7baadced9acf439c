package io.strata.client;

import io.strata.client.options.WriteType;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The block a {@link FileOutStream} is writing now, kept going across workers: each block goes to the worker
 * the write location policy picks among those that have not failed the stream (ASYNC_THROUGH: the first that
 * can reserve it whole, {@link #reservedBlock}), or to the one its writer was created at ahead
 * ({@link WriteAhead}); the blocks committed so far are listed with their workers ({@link #committed()}).
 *
 * <p>Failover: when the block's worker fails mid-block (gone, silent, reset; see
 * {@link BlockRetry#isCopyFailure}), the block goes to another worker, which gets the block's bytes so far
 * again from a bounded buffer ({@link BlockReplayBuffer}, {@link ClientKeys#WRITE_FAILOVER_BUFFER_SIZE}), after
 * a backoff, within {@link ClientKeys#BLOCK_WRITE_RETRY_MAX}; the failed worker gets no later block of this
 * file. This covers MUST_CACHE and the cached part of CACHE_THROUGH and ASYNC_THROUGH (ASYNC_THROUGH
 * reserves the block at the new worker first; when none has room the stream writes the file through,
 * {@link NoRoom}, the block so far included). A block that outgrew the buffer, or that no other worker takes,
 * fails the write, except CACHE_THROUGH, which leaves the block to its under file system copy
 * ({@link #drop}: also what a full cache does to a CACHE_THROUGH block).
 *
 * <p>A method that throws leaves the write to its stream to abandon: the stream cancels this block
 * ({@link #cancel}) with everything else and deletes the file.
 *
 * <p>Not thread-safe: its stream's one writer thread.
 */
final class BlockFailover {
  private static final Logger LOG = LoggerFactory.getLogger(BlockFailover.class);

  /** A block committed at {@code worker} with {@code length} bytes. */
  record Committed(long blockId, WorkerAddress worker, long length) {}

  /**
   * ASYNC_THROUGH, no worker has room for the block failing over: the stream writes the file through to the
   * under file system from now on, beginning with the blocks committed so far and {@code blockSoFar}.
   */
  @FunctionalInterface
  interface NoRoom {
    void writeThrough(ResourceExhaustedException why, BlockReplayBuffer blockSoFar) throws IOException;
  }

  private final FileSystemContext context;
  private final WorkerSelector selector;
  private final URIStatus file;
  private final WriteType writeType;
  private final long blockSize;
  /** MUST_CACHE short-circuit with background commits: the next block's temp block created ahead; or null. */
  private final WriteAhead ahead;
  private final NoRoom noRoom;
  /** The current block's bytes so far, re-sent to another worker when its worker fails. */
  private final BlockReplayBuffer replay;
  private final BlockRetry.Policy retryPolicy;
  /** Workers that failed this stream: no later block of it goes there. */
  private final Set<WorkerAddress> failedWorkers = new HashSet<>();
  /** Blocks committed so far and where (ASYNC_THROUGH: replayed into the UFS copy if it falls back). */
  private final List<Committed> committed = new ArrayList<>();
  /** The block being written now, or null (between blocks, dropped, through the UFS, THROUGH). */
  private BlockWriter block;
  /** Told the current block's writer, to cancel it if the stream is dropped unclosed. */
  private final OpenWrite open;
  /**
   * Bytes were written through the current writer ({@link #writeThrough}): it holds all of the block so far,
   * and {@link #replay} none of what came after it took over.
   */
  private boolean wroteThrough;
  /** Retries of the current block after its workers failed; null before a failure. */
  private BlockRetry blockRetry;
  /** CACHE_THROUGH: the cache had no room for the current block; it goes to the under file system only. */
  private boolean dropped;
  private int blockIndex;

  BlockFailover(FileSystemContext context, WorkerSelector selector, URIStatus file, WriteType writeType,
      WriteAhead ahead, NoRoom noRoom, OpenWrite open) {
    this.open = open;
    this.context = context;
    this.selector = selector;
    this.file = file;
    this.writeType = writeType;
    this.blockSize = file.blockSize();
    this.ahead = ahead;
    this.noRoom = noRoom;
    this.replay = new BlockReplayBuffer(context.conf().get(ClientKeys.WRITE_FAILOVER_BUFFER_SIZE));
    this.retryPolicy = BlockRetry.Policy.writes(context.conf());
  }

  /** Makes {@code writer} (or null) the current block's writer. */
  private void setBlock(BlockWriter writer) {
    block = writer;
    open.block = writer;
  }

  /** Whether a block is being written to a worker now. */
  boolean writing() {
    return block != null;
  }

  /** CACHE_THROUGH: the current block was dropped from the cache; the rest of it goes to the UFS only. */
  boolean dropped() {
    return dropped;
  }

  /** Whether the current block's writer keeps its bytes itself ({@link BlockWriter#keepsBytes}). */
  boolean keepsBytes() {
    return block != null && block.keepsBytes();
  }

  /** The index in the file of the current block (of the next one between blocks). */
  int index() {
    return blockIndex;
  }

  /** The current block's writer, or null. */
  BlockWriter writer() {
    return block;
  }

  /** Workers that failed this stream; a caller that finds another one failed adds it. */
  Set<WorkerAddress> failedWorkers() {
    return failedWorkers;
  }

  /** Blocks committed so far, in order, and where. */
  List<Committed> committed() {
    return committed;
  }

  /** Records a block committed elsewhere (in the background). */
  void committed(long blockId, WorkerAddress worker, long length) {
    committed.add(new Committed(blockId, worker, length));
  }

  /** An array of {@code size} bytes for the next chunk: a committed block's when there is one (contents stale). */
  byte[] chunkArray(int size) {
    return replay.reuse(size);
  }

  /**
   * Starts the current block: the writer created ahead for it, else one at the worker the write policy picks.
   * RESOURCE_EXHAUSTED when no worker has room: the stream drops the block, writes the file through, or fails.
   */
  void open() throws IOException {
    long blockId = BlockId.of(file.id(), blockIndex);
    replay.clear();
    blockRetry = null;
    wroteThrough = false;
    setBlock(ahead == null ? null : ahead.take(blockId, failedWorkers));
    if (block == null) {
      setBlock(newWriter(blockId));
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
    return startAtSomeWorker(blockId, worker -> BlockWriter.open(context, worker, blockId, blockSize, false),
        (none, full, failed) -> {
          if (full != null) {
            return full; // a worker that was full: CACHE_THROUGH drops the block, MUST_CACHE fails with why
          }
          if (writeType == WriteType.CACHE_THROUGH) {
            none.addSuppressed(failed); // the UFS copy takes the block, as when every worker is full
            return none;
          }
          return failed;
        });
  }

  /** Starts a block at one worker, or throws why it could not. */
  private interface Starter {
    BlockWriter start(WorkerAddress worker) throws IOException;
  }

  /** The error when no worker is left: from the selector's, the last full worker's and the last failed one's. */
  private interface NoneLeft {
    IOException error(ResourceExhaustedException none, ResourceExhaustedException full, IOException failed);
  }

  /**
   * Starts block {@code blockId} at the worker the write policy picks, leaving out each worker that is full (another
   * may have room) or fails before the block starts (its refusal of a short-circuit create, say: left out of this
   * stream, as a worker failing later is). When no worker is left after one refused, {@code noneLeft} makes the error.
   */
  private BlockWriter startAtSomeWorker(long blockId, Starter starter, NoneLeft noneLeft) throws IOException {
    Set<WorkerAddress> skip = new HashSet<>(failedWorkers);
    ResourceExhaustedException full = null;
    IOException failed = null;
    while (true) {
      WorkerAddress worker;
      try {
        worker = selector.select(blockId, blockSize, skip);
      } catch (ResourceExhaustedException e) {
        throw full == null && failed == null ? e : noneLeft.error(e, full, failed);
      }
      try {
        return starter.start(worker);
      } catch (ResourceExhaustedException e) {
        LOG.info("Worker {} has no room for block {} of {}: {}", worker, blockIndex, file.path(), e.getMessage());
        skip.add(worker);
        full = e;
      } catch (IOException e) {
        if (!BlockRetry.isCopyFailure(e)) {
          throw e;
        }
        LOG.info("Worker {} failed to start block {} of {}: {}; trying another", worker, blockIndex, file.path(),
            e.getMessage());
        failedWorkers.add(worker);
        skip.add(worker);
        failed = e;
      }
    }
  }

  /**
   * Sends {@code chunk} (which the caller no longer changes) to the current block's writer, keeping it for a
   * failover: a worker that fails has the block fail over, a full cache drops it (CACHE_THROUGH).
   */
  void write(byte[] chunk, int n) throws IOException {
    replay.add(chunk, n);
    try {
      block.write(chunk, n);
    } catch (IOException e) {
      writerFailed(e);
    }
  }

  /**
   * The current block's writer failed with {@code e}: a full cache drops the block (CACHE_THROUGH), a failure
   * of its worker has the block fail over; anything else is thrown.
   */
  private void writerFailed(IOException e) throws IOException {
    if (e instanceof ResourceExhaustedException) {
      if (!drop(e)) {
        throw e;
      }
    } else if (!BlockRetry.isCopyFailure(e)) {
      throw e;
    } else {
      failover(e);
    }
  }

  /**
   * Writes {@code n} bytes of the caller's array through the current block's writer, which keeps them
   * ({@link BlockWriter#keepsBytes}). False when its worker failed and the block failed over instead: the
   * bytes so far went to the new writer, these did not, and the caller sends them again.
   */
  boolean writeThrough(byte[] b, int off, int n) throws IOException {
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
  }

  /**
   * Commits the current block at its worker, failing it over when that worker fails (the new worker has the
   * whole block again and commits it); listed in {@link #committed()}, unless it went to the under file system
   * instead (dropped, or the file written through). Then {@link #next}.
   */
  void commit() throws IOException {
    while (block != null) {
      try {
        long len = block.close();
        committed.add(new Committed(block.blockId(), block.worker(), len));
        break;
      } catch (IOException e) {
        writerFailed(e); // a new worker has the whole block again (committed next round), or it went to the UFS
      }
    }
    dropped = false;
  }

  /**
   * The current block is over (committed, or its commit handed to {@link BackgroundCommit}): the next one
   * starts afresh. With {@code chunksFree} nothing else holds the block's chunks (no UFS stream, whose sends
   * may still be in flight), so their arrays serve the next block's chunks.
   */
  void next(boolean chunksFree) {
    setBlock(null);
    if (chunksFree) {
      replay.clearAndRecycle();
    } else {
      replay.clear();
    }
    blockRetry = null;
    dropped = false;
    blockIndex++;
  }

  /** The end of a block no worker was writing: a dropped one is over, and the next tries the cache again. */
  void skipDropped() {
    if (dropped) {
      dropped = false;
      blockIndex++;
    }
  }

  /**
   * The current block's worker failed with {@code cause} (a failure of that worker: {@link
   * BlockRetry#isCopyFailure}). The block goes to another worker, which gets the block's bytes so far again
   * from {@link #replay}, after a backoff, within {@link ClientKeys#BLOCK_WRITE_RETRY_MAX} and
   * {@link ClientKeys#BLOCK_RETRY_TOTAL_TIMEOUT}. When that cannot be (the block outgrew the replay buffer,
   * no retry or time left, no other worker takes it): CACHE_THROUGH leaves the block to its under file system
   * copy (as for a full cache), ASYNC_THROUGH with no worker room left writes the file through; otherwise
   * this throws an error naming the block, every worker tried and why. Returns with {@link #block} the new
   * writer, or null when the block is left to the UFS.
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
      setBlock(null);
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
        if (drop(stop)) {
          return;
        }
        throw stop;
      }
      try {
        setBlock(newWriter(failed.blockId()));
        BlockWriter to = block;
        replay.replayTo(to::write);
        return;
      } catch (ResourceExhaustedException e) {
        // No other worker takes the block (or the one that did is full).
        if (writeType == WriteType.ASYNC_THROUGH && block == null) {
          noRoom.writeThrough(e, replay);
          // Replayed (read whole) into the UFS copy: the failed writer's file it kept, and its chunks, go now, not
          // when the stream is collected (nothing after this moves to a next block).
          replay.clear();
          return;
        }
        if (drop(e)) {
          return;
        }
        throw blockRetry.finalError(what, e);
      } catch (IOException e) {
        if (block == null || !BlockRetry.isCopyFailure(e)) {
          throw blockRetry.finalError(what, e);
        }
        failure = e; // the new worker failed too, while taking the block so far: the next one
      }
    }
  }

  /**
   * The block {@code p} committed in the background failed its commit at its worker with {@code failure} (a
   * failure of that worker): it is written again to another worker ({@link BackgroundCommit#rewrite}) and
   * listed committed there; throws what ends the retries.
   */
  void rewrite(BackgroundCommit p, IOException failure) throws IOException {
    if (ahead != null) {
      ahead.discard(); // as for a failover: the block written again may need the room it holds
    }
    BackgroundCommit.Rewritten again = p.rewrite(context, selector, failedWorkers, retryPolicy, blockSize,
        failure, "Committing block " + p.blockIndex + " (id " + p.writer.blockId() + ") of " + file.path()
            + " (" + writeType + ", written whole, committed in the background)");
    committed.add(new Committed(p.writer.blockId(), again.worker(), again.length()));
  }

  /** A block stream whose room is reserved whole at a worker; each worker that stays full is left out. */
  private BlockWriter reservedBlock(long blockId) throws IOException {
    long waitMs = context.conf().get(ClientKeys.WRITE_SPACE_WAIT_TIMEOUT).toMillis();
    return startAtSomeWorker(blockId, worker -> {
      BlockOutStream.reserve(context, worker, blockId, blockSize, waitMs);
      return BlockWriter.open(context, worker, blockId, blockSize, true);
    }, (none, full, failed) -> full == null ? none : new ResourceExhaustedException("Writing " + file.path()
        + " (ASYNC_THROUGH): no worker had room for block " + blockIndex + " within " + waitMs
        + " ms (strata.user.write.space.wait.timeout); the last one said: " + full.getMessage(), full));
  }

  /**
   * CACHE_THROUGH only: the cache has no room for this block, which the under file system copy holds in
   * full anyway; the block stream (if any) is dropped and the rest of the block goes there only.
   */
  boolean drop(IOException why) {
    if (writeType != WriteType.CACHE_THROUGH) {
      return false;
    }
    LOG.info("The cache cannot take block {} of {}; writing it to the under file system only: {}", blockIndex,
        file.path(), why.getMessage());
    if (block != null) {
      block.cancel();
      setBlock(null);
    }
    dropped = true;
    return true;
  }

  /**
   * The write is abandoned: the block in progress is cancelled (its worker drops it), and the bytes kept for
   * a failover go (a failed writer's file kept is closed).
   */
  void cancel() {
    if (block != null) {
      block.cancel();
      setBlock(null);
    }
    replay.clear();
  }
}
