package io.strata.worker.store;

import java.util.List;

/**
 * Puts a block in the good dir with the most available space (ties: the lowest {@code dirIndex}), which
 * spreads bytes so the dirs of a tier fill evenly. The default allocator.
 *
 * <p>Stateless and thread-safe.
 */
public final class MaxFreeAllocator implements Allocator {
  public MaxFreeAllocator() {}

  @Override
  public DirView allocate(List<? extends DirView> dirs, long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("Bytes to allocate must be >= 0, got " + bytes);
    }
    DirView best = null;
    long bestFree = -1;
    for (DirView dir : dirs) {
      if (!dir.isGood()) {
        continue;
      }
      long free = dir.availableBytes(); // read once: it may change under us
      if (free < bytes) {
        continue;
      }
      if (free > bestFree || (free == bestFree && dir.dirIndex() < best.dirIndex())) {
        best = dir;
        bestFree = free;
      }
    }
    return best;
  }

  @Override
  public String toString() {
    return "MaxFree";
  }
}
