package io.strata.master.file;

/**
 * The bound on what one batch of a walk over many inodes holds: the inodes a {@link SubtreeWalk} batch visits under
 * the tree's lock (free, persist, the TTL check), and the ids of the persist queue a {@link PersistScheduler} round
 * reads at a time. One per master, shared by those two; tests make it small and read the largest batch held.
 *
 * <p>Thread-safe (volatile fields; the largest batch is a statistic, a lost update only makes it smaller).
 */
final class WalkBatches {
  /** By default: a few thousand snapshots at a time, the tree's lock held for about a millisecond. */
  static final int DEFAULT = 4096;

  private volatile int size = DEFAULT;
  private volatile int largest;

  /** The most inodes (or queue ids) one batch takes. */
  int size() {
    return size;
  }

  /** Sets {@link #size} (at least 1). */
  void size(int n) {
    size = Math.max(1, n);
  }

  /** A batch held {@code n} snapshots or ids. */
  void held(int n) {
    if (n > largest) {
      largest = n;
    }
  }

  /** The most snapshots or ids one batch held so far. */
  int largest() {
    return largest;
  }
}
