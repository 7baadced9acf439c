package io.strata.worker.store;

import java.util.List;

/**
 * Puts a block in the first good dir, in configured order, that has room: dirs fill one after another,
 * which keeps later dirs (disks) idle until they are needed.
 *
 * <p>Stateless and thread-safe.
 */
public final class GreedyAllocator implements Allocator {
  public GreedyAllocator() {}

  @Override
  public DirView allocate(List<? extends DirView> dirs, long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("Bytes to allocate must be >= 0, got " + bytes);
    }
    for (DirView dir : dirs) {
      if (dir.isGood() && dir.availableBytes() >= bytes) {
        return dir;
      }
    }
    return null;
  }

  @Override
  public String toString() {
    return "Greedy";
  }
}
