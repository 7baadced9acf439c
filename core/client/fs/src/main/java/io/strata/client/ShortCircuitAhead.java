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
 * A block on a memory file system opened ahead for a reader that reads it mapped
 * ({@link ShortCircuitClient.OpenBlock#readMapped}, {@link ClientKeys#SHORT_CIRCUIT_READ_MMAP}) is also mapped
 * there, and once the open is handed over its pages are faulted in on that thread; when the reader verifies
 * checksums ({@link ClientKeys#SHORT_CIRCUIT_CHECKSUM_VERIFY}) that same pass checks each chunk's CRC32C
 * ({@link io.strata.client.shortcircuit.BlockMapping#verifyAhead}), so the reader's copy from the block takes no
 * page faults and computes no checksum for the chunks already matched. The reader checks any chunk the pass has
 * not reached or found not matching, so a corrupt copy is caught and handled by the reader as before. A block
 * read by channel gets no pass ahead: a second read of it costs the reader more in memory traffic than the
 * checksums it would spare (measured, docs/PERFORMANCE.md).
 *
 * <p>Not thread-safe: used by its stream's one reader thread; the opens run on the context's executor.
 */
final class ShortCircuitAhead implements AutoCloseable {
  private final ShortCircuitClient client;
  private final Executor executor;
  private CompletableFuture<ShortCircuitClient.OpenBlock> pending;
  private long blockId = -1;
  private WorkerAddress worker;

  /** Whether the faulting pass also checks the chunks' checksums (the reader verifies them). */
  private final boolean verify;
  /** Whether the context is closed: its executor may then have dropped an open still queued, which never ends. */
  private final java.util.function.BooleanSupplier closed;

  ShortCircuitAhead(ShortCircuitClient client, Executor executor, boolean verify,
      java.util.function.BooleanSupplier closed) {
    this.client = client;
    this.executor = executor;
    this.verify = verify;
    this.closed = closed;
  }

  /**
   * Starts opening {@code blockId} on {@code worker} (with its bytes in the answer when it has at most
   * {@code inlineMax}), unless that open is already ahead (any other is dropped).
   */
  void start(WorkerAddress worker, long blockId, boolean promote, int inlineMax) {
    if (pending != null && this.blockId == blockId && worker.equals(this.worker)) {
      return;
    }
    discard();
    CompletableFuture<ShortCircuitClient.OpenBlock> f = new CompletableFuture<>();
    try {
      executor.execute(() -> {
        ShortCircuitClient.OpenBlock open;
        try {
          open = client.open(worker, blockId, promote, inlineMax);
        } catch (RuntimeException e) {
          f.complete(null); // the reader opens it itself when it gets there
          return;
        }
        io.strata.client.shortcircuit.BlockMapping m = null;
        int[] sums = null;
        try {
          // The reader's choice of a mapped read is made here when this block is the first to need it (a probe).
          m = open != null && open.readMapped() ? open.mapping() : null;
          sums = m != null && verify ? storedSums(open) : null;
        } finally {
          // Handed over first (and whatever happened above, so the reader never waits for ever): a reader that
          // gets there before the pass below ends takes the block at once and checks what it has not matched.
          f.complete(open);
        }
        if (m != null) {
          // The reader will map it anyway: faulted in (and checked) here, on another core, off its path.
          try {
            if (sums != null) {
              client.verifiedAhead(m.verifyAhead(sums, open.length()));
            } else {
              m.prefault();
            }
          } catch (RuntimeException e) {
            // Only a head start is lost: the reader faults and checks the pages itself.
          }
        }
      });
    } catch (RejectedExecutionException busy) {
      return; // every background thread busy: this block is opened when the reader gets there
    }
    pending = f;
    this.blockId = blockId;
    this.worker = worker;
  }

  /**
   * The open of {@code blockId} on {@code worker} started before, once it completes; null when none was
   * started for it (another one is dropped) or it could not be made, and when the context closed while it was
   * awaited (a closing context's executor drops the opens still queued, which then never complete) or the reader
   * was interrupted (the flag is set again): the reader then opens the block itself, which fails as it should.
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
    while (true) {
      try {
        return f.get(1, java.util.concurrent.TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        if (closed.getAsBoolean()) {
          pending = f;
          discard(); // closed when it completes, if it ever does
          return null;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        pending = f;
        discard();
        return null;
      } catch (java.util.concurrent.ExecutionException | RuntimeException e) {
        return null;
      }
    }
  }

  /** Every chunk's stored checksum of {@code open}; null when they cannot be had (the reader then asks itself). */
  private static int[] storedSums(ShortCircuitClient.OpenBlock open) {
    if (open.length() <= 0) {
      return null;
    }
    try {
      return open.checksums(0, io.strata.common.checksum.ChunkChecksums.chunkOf(open.length() - 1) + 1);
    } catch (java.io.IOException | RuntimeException e) {
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
