package io.strata.worker.rpc;

import io.strata.worker.WorkerKeys;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Cancels block reads whose reader stopped taking data: a read stream holds its block's read lock (so
 * the block can be neither removed nor evicted) and a file descriptor for as long as it is open, and a
 * client that requests one chunk and never more would hold both for ever. One scheduled sweep every
 * quarter of the timeout checks every open read; one silent for the timeout is told it {@link
 * Watched#stalled stalled} and cancels itself.
 *
 * <p>Thread-safe; the sweep runs on the given scheduler, and {@link #close()} stops it.
 */
public final class ReadStallWatch implements AutoCloseable {
  /** A read's view for the watch. */
  interface Watched {
    long lastProgressNanos();

    /** Called on the sweep thread once the read took no data for the timeout. */
    void stalled(String why);
  }

  /** Watches nothing: reads are never cancelled. */
  public static final ReadStallWatch NONE = new ReadStallWatch();

  private final Set<Watched> reads = ConcurrentHashMap.newKeySet();
  private final long timeoutNanos;
  private final long timeoutMs;
  private final java.util.concurrent.ScheduledFuture<?> sweep;

  private ReadStallWatch() {
    this.timeoutNanos = 0;
    this.timeoutMs = 0;
    this.sweep = null;
  }

  public ReadStallWatch(ScheduledExecutorService scheduler, long timeoutMs) {
    this.timeoutMs = timeoutMs;
    this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    long period = Math.max(5, timeoutMs / 4);
    this.sweep = scheduler.scheduleWithFixedDelay(this::sweep, period, period, TimeUnit.MILLISECONDS);
  }

  /** Starts watching a read; the returned action stops it (the read calls it when it ends). */
  Runnable watch(Watched read) {
    if (sweep == null) {
      return () -> { };
    }
    reads.add(read);
    return () -> reads.remove(read);
  }

  /** Reads watched now. */
  public int watched() {
    return reads.size();
  }

  void sweep() {
    long now = System.nanoTime();
    for (Watched r : reads) {
      if (now - r.lastProgressNanos() > timeoutNanos) {
        reads.remove(r);
        try {
          r.stalled("the reader took no data for " + timeoutMs + " ms (" + WorkerKeys.READ_STREAM_STALL_TIMEOUT.name()
              + "); the read is cancelled");
        } catch (RuntimeException e) {
          org.slf4j.LoggerFactory.getLogger(ReadStallWatch.class).warn("Cancelling a stalled read failed", e);
        }
      }
    }
  }

  @Override
  public void close() {
    if (sweep != null) {
      sweep.cancel(false);
    }
  }
}
