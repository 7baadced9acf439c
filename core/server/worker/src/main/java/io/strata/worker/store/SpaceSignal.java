package io.strata.worker.store;

/**
 * Wakes writers waiting for room in the block store. Every change that may make room (a removal, a
 * returned reservation, a block becoming evictable, a move out of a dir) bumps a generation; a waiter reads
 * the generation, tries to reserve, and when that fails waits until the generation moves on or its deadline
 * passes, so a change between its try and its wait is never missed. It also counts the bytes awaited, which
 * the worker reports to the master.
 *
 * <p>Thread-safe. Its monitor is a leaf: nothing else is locked or called while it is held, so it may be
 * taken under the store's monitor, and a waiter holds no other lock while it waits.
 */
final class SpaceSignal {
  private long generation;
  private long awaited;

  synchronized long generation() {
    return generation;
  }

  synchronized void changed() {
    generation++;
    notifyAll();
  }

  /** Waits until a change after {@code seen}; false when {@code deadlineNanos} (System.nanoTime) passed first. */
  synchronized boolean await(long seen, long deadlineNanos) throws InterruptedException {
    while (generation == seen) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  synchronized void awaiting(long delta) {
    awaited += delta;
  }

  synchronized long awaited() {
    return awaited;
  }
}
