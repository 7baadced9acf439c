package io.strata.client;

import io.strata.client.options.WriteType;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;

/**
 * The next block's short-circuit temp block, created in the background while a MUST_CACHE file's current block
 * is still being written ({@link ClientKeys#SHORT_CIRCUIT_WRITE_CREATE_AHEAD}), so that the create's round trip
 * to the worker (request, temp file, granted space, descriptor; several thread wake-ups on both sides) overlaps
 * the writing instead of stalling the writer at the block boundary: the write-side twin of
 * {@link ShortCircuitAhead}. At most one create is ahead per stream. The writer {@link #take}s it when it starts
 * that block, unless the worker it was made at failed this stream meanwhile; one it does not take (the file
 * ended first, the stream failed, another worker was chosen) is cancelled as soon as it completes, which has the
 * worker drop the temp block and its space (at a normal close, before the close returns: {@link #discardNow}).
 * A create that could not be made (no room, no short-circuit) is null: the writer then opens the block as it
 * would have, and gets that answer itself.
 *
 * <p>Not thread-safe: used by its stream's one writer thread; the creates run on the context's executor, and a
 * writer made there is handed over through the future (so its first use happens after its creation).
 */
final class WriteAhead {
  private final FileSystemContext context;
  private final long blockSize;
  private CompletableFuture<BlockWriter> pending;
  private long blockId = -1;
  private WorkerAddress worker;
  /** The block index a create ahead was last tried for (started or not), so each block tries once. */
  private int triedFor = -1;
  private int taken;

  private WriteAhead(FileSystemContext context, long blockSize) {
    this.context = context;
    this.blockSize = blockSize;
  }

  /**
   * For a stream writing {@code type} in blocks of {@code blockSize}: creates ahead when it is on, for MUST_CACHE
   * with commits in the background, and only when the first grant covers a whole block (the default), so that
   * the space a block created ahead holds can never be what the current block's next grant is refused for; else
   * null.
   */
  static WriteAhead of(FileSystemContext context, WriteType type, long blockSize) {
    io.strata.common.conf.StrataConf conf = context.conf();
    boolean on = type == WriteType.MUST_CACHE && conf.get(ClientKeys.SHORT_CIRCUIT_WRITE_COMMIT_BACKGROUND)
        && conf.get(ClientKeys.SHORT_CIRCUIT_WRITE_CREATE_AHEAD)
        && conf.get(ClientKeys.SHORT_CIRCUIT_WRITE_GRANT_SIZE) >= blockSize;
    return on ? new WriteAhead(context, blockSize) : null;
  }

  /**
   * Half way through short-circuit block {@code index} of file {@code fileId}, when it is the second or a later
   * block (a file that has filled a block is likely to fill more; a one-block file, the common small file, never
   * pays for a create it does not use): the next block's temp block is created in the background at the worker
   * the write policy picks for it now, tried once per block. Only at a worker on this host (the rule
   * {@link BlockWriter#open} follows: a domain socket is found by the worker's port alone, so a remote worker's
   * create would reach the local one). A policy that has no worker to give, or picks a remote one, leaves the
   * block to the writer, which opens it when it gets there.
   */
  void startAfter(int index, long fileId, WorkerSelector selector, Set<WorkerAddress> failed) {
    int next = index + 1;
    if (index == 0 || triedFor == next || next > BlockId.MAX_INDEX) {
      return;
    }
    triedFor = next;
    long id = BlockId.of(fileId, next);
    WorkerAddress at;
    try {
      at = selector.select(id, blockSize, failed);
    } catch (IOException | RuntimeException e) {
      return;
    }
    if (at.host().equals(context.conf().get(ClientKeys.HOSTNAME))) {
      start(at, id);
    }
  }

  /** Starts creating {@code blockId} short-circuit at {@code worker}, dropping any other create ahead. */
  private void start(WorkerAddress worker, long blockId) {
    discard();
    long grant = Math.min(context.conf().get(ClientKeys.SHORT_CIRCUIT_WRITE_GRANT_SIZE), blockSize);
    long grantSize = context.conf().get(ClientKeys.SHORT_CIRCUIT_WRITE_GRANT_SIZE);
    CompletableFuture<BlockWriter> f = new CompletableFuture<>();
    try {
      context.background().execute(() -> {
        try {
          io.strata.client.shortcircuit.ShortCircuitWrite w =
              context.shortCircuit().create(worker, blockId, blockSize, false, grant);
          f.complete(w == null ? null : new ShortCircuitBlockWriter(w, grantSize));
        } catch (Exception | Error e) {
          f.complete(null); // the writer opens the block itself when it gets there, and sees the error then
        }
      });
    } catch (RejectedExecutionException busy) {
      return; // every background thread busy: the block is created when the writer gets there
    }
    pending = f;
    this.blockId = blockId;
    this.worker = worker;
  }

  /**
   * The writer created ahead for {@code blockId}, once its create completes; null when none was started for it
   * (another one is discarded), it could not be made, or its worker is one of {@code failed} (discarded).
   */
  BlockWriter take(long blockId, Set<WorkerAddress> failed) {
    if (pending == null) {
      return null;
    }
    if (this.blockId != blockId || failed.contains(worker)) {
      discard();
      return null;
    }
    CompletableFuture<BlockWriter> f = pending;
    pending = null;
    BlockWriter w = await(f);
    if (w != null) {
      taken++;
    }
    return w;
  }

  /**
   * The create's writer once it completes (a round trip bounded by the RPC timeout), waiting in steps so that a
   * client closed meanwhile (its background threads gone, the create perhaps never run) ends the wait: then null,
   * and a writer the create still makes is cancelled when it does. An interrupt does not end it (the flag is set
   * again after): a writer that went on while the create was still running at the worker would find the block id
   * taken there and fail the write.
   */
  private BlockWriter await(CompletableFuture<BlockWriter> f) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return f.get(1, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
          if (context.isClosed()) {
            cancelWhenDone(f);
            return null;
          }
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (java.util.concurrent.ExecutionException e) {
          return null; // not reached: the create completes with null on every failure
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static void cancelWhenDone(CompletableFuture<BlockWriter> f) {
    f.thenAccept(w -> {
      if (w != null) {
        w.cancel();
      }
    });
  }

  /** Blocks whose writer was taken from a create ahead so far. */
  int taken() {
    return taken;
  }

  /**
   * Drops the create ahead and waits for that: its create is waited for (a bounded round trip) and its writer
   * cancelled, which returns once the worker dropped the temp block. For a stream that ends normally, so that
   * nothing of it outlives its close.
   */
  void discardNow() {
    if (pending != null) {
      CompletableFuture<BlockWriter> f = pending;
      pending = null;
      BlockWriter w = await(f);
      if (w != null) {
        w.cancel();
      }
    }
  }

  /** Drops the create ahead: its writer is cancelled (the worker drops the temp block) once it completes. */
  void discard() {
    if (pending != null) {
      cancelWhenDone(pending);
      pending = null;
    }
  }
}
