package io.strata.worker.shuffle;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The worker-wide budget of heap the partition files' write-behind buffers may hold
 * ({@code strata.worker.shuffle.append.buffer.max}): a partition file takes room before it grows its buffer and
 * gives it back when the buffer goes (seal, drop); one that finds no room writes its batches through instead.
 *
 * <p>Thread-safe (lock-free).
 */
final class AppendBuffers {
  private final long max;
  private final AtomicLong held = new AtomicLong();

  AppendBuffers(long max) {
    this.max = max;
  }

  /** Takes {@code bytes} of the budget when that much is left; false (nothing taken) otherwise. */
  boolean take(long bytes) {
    while (true) {
      long now = held.get();
      if (now + bytes > max) {
        return false;
      }
      if (held.compareAndSet(now, now + bytes)) {
        return true;
      }
    }
  }

  void giveBack(long bytes) {
    held.addAndGet(-bytes);
  }

  /** Bytes of buffers held now. */
  long held() {
    return held.get();
  }
}
