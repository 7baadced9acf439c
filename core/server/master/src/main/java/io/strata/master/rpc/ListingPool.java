package io.strata.master.rpc;

import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.master.MasterKeys;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;

/**
 * The threads that run the master's streamed listings, at most {@link MasterKeys#LISTING_THREADS_MAX} at once.
 * A streamed listing keeps its thread while it waits for its client to take the batches already sent (flow
 * control), so the number of threads is the number of listings in progress: past the bound a listing is
 * refused with RESOURCE_EXHAUSTED, naming the key, rather than queued behind slow clients or given a thread
 * more. Admission is a semaphore, given back when the listing ends: a thread still on its way back to the
 * pool never makes a new listing look refused (the pool itself is a cached one: idle threads end after a
 * minute, and at most the listings just ended add to the bound for a moment).
 *
 * <p>Thread-safe.
 */
public final class ListingPool implements AutoCloseable {
  private final ExecutorService pool;
  private final Semaphore permits;
  private final int max;
  private final java.time.Duration stallTimeout;

  public ListingPool(int max, java.time.Duration stallTimeout, ThreadFactory threads) {
    this.max = max;
    this.stallTimeout = stallTimeout;
    this.permits = new Semaphore(max);
    this.pool = Executors.newCachedThreadPool(threads);
  }

  /** Runs {@code listing} on a thread of its own, or says why it cannot. */
  void start(Runnable listing) throws StrataException {
    if (pool.isShutdown()) {
      throw new UnavailableException("The master is shutting down");
    }
    if (!permits.tryAcquire()) {
      throw new ResourceExhaustedException("The master is running " + max + " streamed listings, the most it "
          + "runs at once (" + MasterKeys.LISTING_THREADS_MAX.name() + "=" + max + "); retry when one has ended");
    }
    try {
      pool.execute(() -> {
        try {
          listing.run();
        } finally {
          permits.release();
        }
      });
    } catch (RejectedExecutionException e) {
      permits.release();
      throw new UnavailableException("The master is shutting down");
    }
  }

  /**
   * How long a listing waits for its client to take what was sent before it is ended
   * ({@link MasterKeys#LISTING_STALL_TIMEOUT}), so a client that never reads gives its thread back.
   */
  java.time.Duration stallTimeout() {
    return stallTimeout;
  }

  /** Listings running now. */
  public int running() {
    return max - permits.availablePermits();
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
