package io.strata.client;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongPredicate;

/**
 * Keeps a {@link FileSystemContext}'s under file system write streams alive while their writers are: a worker ends
 * a WriteUfsFile stream that brings it no message for its {@code strata.worker.ufs.write.idle.timeout} and deletes
 * the partial copy, which is right for a writer that went silent (its process frozen, its host cut off) and wrong
 * for one that is slow (a gap between two chunks past that timeout). Every half
 * {@code strata.user.ufs.write.keepalive.interval}, each stream that sent nothing for the interval gets an empty
 * message ({@link UfsOutStream#keepAlive}), so no stream is silent for longer than the interval while its writer
 * lives. Only while the context still holds the file's lease: a writer that lost its lease (recovered by the
 * master) keeps no stream alive. Keep-alives come from this client's own thread, never the master's or the
 * writer's, so neither a slow application nor a master that does not answer can delay them.
 *
 * <p>Thread-safe. The thread (a daemon, {@code strata-ufs-keepalive}) starts with the first stream and ends at
 * {@link #close}; a sweep never waits (a stream busy sending is skipped).
 */
final class UfsKeepAlives implements AutoCloseable {
  private final long intervalNanos;
  private final LongPredicate leaseHeld;
  private final Set<UfsOutStream> streams = ConcurrentHashMap.newKeySet();
  private final LongAdder sent = new LongAdder();
  private ScheduledExecutorService timer;
  private boolean closed;

  /**
   * @param intervalMs the longest a held stream stays without a message; 0: no keep-alives
   * @param leaseHeld whether the context still holds the lease of a file (by id)
   */
  UfsKeepAlives(long intervalMs, LongPredicate leaseHeld) {
    this.intervalNanos = TimeUnit.MILLISECONDS.toNanos(intervalMs);
    this.leaseHeld = leaseHeld;
  }

  /** {@code stream} sent its first message: keep it alive until {@link #remove}. */
  void add(UfsOutStream stream) {
    if (intervalNanos == 0) {
      return;
    }
    streams.add(stream);
    synchronized (this) {
      if (timer == null && !closed) {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "strata-ufs-keepalive");
          t.setDaemon(true);
          return t;
        });
        // Checked every half interval, a stream is sent one when it was quiet for half: never quiet a whole one.
        long period = Math.max(1, intervalNanos / 2);
        timer.scheduleWithFixedDelay(this::sweep, period, period, TimeUnit.NANOSECONDS);
      }
    }
  }

  /** {@code stream} ended (closed, cancelled, failed): nothing more is sent on it. */
  void remove(UfsOutStream stream) {
    streams.remove(stream);
  }

  /** One round: an empty message on each held stream quiet for half the interval. */
  void sweep() {
    long now = System.nanoTime();
    for (UfsOutStream s : streams) {
      if (leaseHeld.test(s.fileId()) && s.keepAlive(now, intervalNanos / 2)) {
        sent.increment();
      }
    }
  }

  /** Streams kept alive now. */
  int streams() {
    return streams.size();
  }

  /** Keep-alives sent so far. */
  long sent() {
    return sent.sum();
  }

  @Override
  public void close() {
    ScheduledExecutorService t;
    synchronized (this) {
      closed = true;
      t = timer;
      timer = null;
    }
    if (t != null) {
      t.shutdownNow();
    }
    streams.clear();
  }
}
