package io.strata.worker.shuffle;

import java.util.concurrent.atomic.AtomicLong;

/**
 * How many bytes of forwarded shuffle batches a replica worker holds while they wait for the batches before them
 * ({@link PartitionFile#appendAt}): at most {@code aheadMax} past one copy's end, and at most {@code totalMax} over
 * all its copies together, so that forwards naming far-apart offsets in many partitions cannot hold the worker's
 * memory (each partition's own bound times the partitions open). A batch that would pass either bound freezes or
 * breaks its copy instead of waiting: the forward fails, its primary refuses the partition from then on and the
 * client revives it elsewhere, with nothing acknowledged lost.
 *
 * <p>Thread-safe.
 */
final class ParkingBudget {
  private final long aheadMax;
  private final long totalMax;
  private final AtomicLong held = new AtomicLong();

  ParkingBudget(long aheadMax, long totalMax) {
    this.aheadMax = aheadMax;
    this.totalMax = totalMax;
  }

  /** How far past a copy's end a forwarded batch may wait. */
  long aheadMax() {
    return aheadMax;
  }

  long totalMax() {
    return totalMax;
  }

  /** Takes {@code bytes} for a batch that waits; false (nothing taken) when that would pass the total. */
  boolean tryTake(long bytes) {
    long now = held.addAndGet(bytes);
    if (now > totalMax) {
      held.addAndGet(-bytes);
      return false;
    }
    return true;
  }

  /** Gives back what a waiting batch took, once it is appended or let go. */
  void release(long bytes) {
    held.addAndGet(-bytes);
  }

  /** Bytes of batches waiting on this worker now. */
  long held() {
    return held.get();
  }
}
