package io.strata.client;

import io.strata.client.shortcircuit.ShortCircuitClient;
import io.strata.common.net.WorkerAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The short-circuit open of the block after the one a sequential read is on, started in the background
 * ({@link ClientKeys#SHORT_CIRCUIT_OPEN_AHEAD}) so that the domain-socket round trips of that open (request,
 * descriptor; several thread wake-ups on the client and the worker) overlap the read of the current block
 * instead of stalling the reader at the block boundary. At most one open is ahead per stream. The reader
 * {@link #take}s it when it reaches that block on that worker; an open it does not take (the stream sought
 * elsewhere, chose another worker, or closed) is closed, which releases the worker's read lock, as soon as
 * it completes. A background open that could not be made is null: the reader then opens as it would have.
 * A MEM-tier block opened ahead for a reader that reads mapped ({@link ClientKeys#SHORT_CIRCUIT_READ_MMAP}) is
 * also mapped and its pages faulted in there, so the reader's copy from it takes no page faults.
 *
 * <p>Not thread-safe: used by its stream's one reader thread; the opens run on the context's executor.
 */
final class ShortCircuitAhead implements AutoCloseable {
  private final ShortCircuitClient client;
  private final Executor executor;
  private CompletableFuture<ShortCircuitClient.OpenBlock> pending;
  private long blockId = -1;
  private WorkerAddress worker;

  /** Whether an open ahead also maps the block and faults its pages in (the reader reads it mapped). */
  private final boolean prefault;

  ShortCircuitAhead(ShortCircuitClient client, Executor executor, boolean prefault) {
    this.client = client;
    this.executor = executor;
    this.prefault = prefault;
  }

  /** Starts opening {@code blockId} on {@code worker}, unless that open is already ahead (any other is dropped). */
  void start(WorkerAddress worker, long blockId, boolean promote) {
    if (pending != null && this.blockId == blockId && worker.equals(this.worker)) {
      return;
    }
    discard();
    try {
      pending = CompletableFuture.supplyAsync(() -> {
        ShortCircuitClient.OpenBlock open = client.open(worker, blockId, promote);
        if (open != null && prefault && ShortCircuitBlockReader.inMemory(open)) {
          // The reader will map it anyway: mapped and faulted in here, on another core, the faults are off its path.
          io.strata.client.shortcircuit.BlockMapping m = open.mapping();
          if (m != null) {
            m.prefault();
          }
        }
        return open;
      }, executor);
    } catch (RejectedExecutionException busy) {
      return; // every background thread busy: this block is opened when the reader gets there
    }
    this.blockId = blockId;
    this.worker = worker;
  }

  /**
   * The open of {@code blockId} on {@code worker} started before, once it completes; null when none was
   * started for it (another one is dropped) or it could not be made.
   */
  ShortCircuitClient.OpenBlock take(WorkerAddress worker, long blockId) {
    if (pending == null) {
      return null;
    }
    if (this.blockId != blockId || !worker.equals(this.worker)) {
      discard();
      return null;
    }
    CompletableFuture<ShortCircuitClient.OpenBlock> f = pending;
    pending = null;
    try {
      return f.join();
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Drops the open ahead: closed (the worker's lock released) when it completes, now if it has. */
  void discard() {
    if (pending != null) {
      pending.thenAccept(open -> {
        if (open != null) {
          open.close();
        }
      });
      pending = null;
    }
  }

  @Override
  public void close() {
    discard();
  }
}
