package io.strata.worker.rpc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends data streams whose client went quiet. A block read holds its block's read lock (so the block can
 * be neither removed nor evicted) and a file descriptor while it is open, and a client that requests one
 * chunk and never more would hold both for ever; a UFS file write holds an open UFS stream and a partial
 * file. A sweep every quarter of the timeout checks every watched stream; one without progress for the
 * timeout is told it {@link Watched#idle idled} and ends itself (cancelled with DEADLINE_EXCEEDED naming
 * {@code key}, its resources released). A stream busy at that moment (in a slow write) is left for the
 * next sweep.
 *
 * <p>Thread-safe; the sweep runs on the given scheduler, and {@link #close()} stops it.
 */
public final class IdleWatch implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(IdleWatch.class);

  /** A stream's view for the watch. */
  interface Watched {
    /** {@code System.nanoTime()} of its last progress. */
    long lastProgressNanos();

    /** Called on the sweep thread once it made no progress for the timeout; false when busy right now. */
    boolean idle(String why);
  }

  /** Watches nothing: streams are never ended for idling. */
  public static final IdleWatch NONE = new IdleWatch();

  private final Set<Watched> streams = ConcurrentHashMap.newKeySet();
  private final long timeoutNanos;
  private final String why;
  private final ScheduledFuture<?> sweep;

  private IdleWatch() {
    this.timeoutNanos = 0;
    this.why = "";
    this.sweep = null;
  }

  /** Ends streams idle for {@code timeoutMs}; {@code key} names the setting in the error. */
  public IdleWatch(ScheduledExecutorService scheduler, long timeoutMs, String key) {
    this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    this.why = "no progress for " + timeoutMs + " ms (" + key + "); the stream is cancelled";
    long period = Math.max(5, timeoutMs / 4);
    this.sweep = scheduler.scheduleWithFixedDelay(this::sweep, period, period, TimeUnit.MILLISECONDS);
  }

  /** Starts watching a stream; the returned action stops it (the stream calls it when it ends). */
  Runnable watch(Watched stream) {
    if (sweep == null) {
      return () -> { };
    }
    streams.add(stream);
    return () -> streams.remove(stream);
  }

  /** Streams watched now. */
  public int watched() {
    return streams.size();
  }

  void sweep() {
    long now = System.nanoTime();
    for (Watched s : streams) {
      if (now - s.lastProgressNanos() > timeoutNanos) {
        try {
          if (s.idle(why)) {
            streams.remove(s);
          }
        } catch (RuntimeException e) {
          streams.remove(s);
          LOG.warn("Ending an idle stream failed", e);
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
