package io.strata.worker.store;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Puts successive blocks of a tier in its dirs in turn, skipping dirs that are bad or lack room, which
 * spreads writes (and so disk bandwidth) across the tier's dirs regardless of how full each one is.
 *
 * <p>State: per tier ordinal, the {@code dirIndex} of the dir chosen last; the next search starts at the
 * first dir (in list order) after it and wraps around. Remembering the dir rather than a list position
 * keeps the turn right when the caller leaves a dir out of the list (say, after it went bad). One entry
 * per tier, so memory is bounded.
 *
 * <p>Thread-safe: {@link #allocate} is synchronized, so concurrent callers take consecutive turns.
 */
public final class RoundRobinAllocator implements Allocator {
  private final Map<Integer, Integer> lastDirIndexByTier = new HashMap<>();

  public RoundRobinAllocator() {}

  @Override
  public synchronized DirView allocate(List<? extends DirView> dirs, long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("Bytes to allocate must be >= 0, got " + bytes);
    }
    int n = dirs.size();
    if (n == 0) {
      return null;
    }
    int tier = dirs.get(0).tierOrdinal();
    Integer last = lastDirIndexByTier.get(tier);
    int start = 0;
    if (last != null) {
      for (int i = 0; i < n; i++) {
        if (dirs.get(i).dirIndex() > last) {
          start = i;
          break;
        }
      }
    }
    for (int i = 0; i < n; i++) {
      DirView dir = dirs.get((start + i) % n);
      if (dir.isGood() && dir.availableBytes() >= bytes) {
        lastDirIndexByTier.put(tier, dir.dirIndex());
        return dir;
      }
    }
    return null;
  }

  @Override
  public String toString() {
    return "RoundRobin";
  }
}
