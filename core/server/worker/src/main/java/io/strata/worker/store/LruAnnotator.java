package io.strata.worker.store;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Least recently used first: a block's heat is the logical time of its last access.
 *
 * <p>State: block id to the logical time of its last access; an entry lives from the first access to
 * {@link #onRemove}. Thread-safe: every method is synchronized on this object.
 */
public final class LruAnnotator implements BlockAnnotator {
  private final Map<Long, Long> lastAccess = new HashMap<>();
  private long now;

  public LruAnnotator() {}

  @Override
  public synchronized void onAccess(long blockId) {
    lastAccess.put(blockId, ++now);
  }

  @Override
  public synchronized void onRemove(long blockId) {
    lastAccess.remove(blockId);
  }

  @Override
  public synchronized List<Long> coldestFirst(Collection<Long> candidates) {
    List<Long> ids = new ArrayList<>(new LinkedHashSet<>(candidates));
    // Never-seen blocks get time 0, before every access (times start at 1); ties only among them.
    ids.sort(Comparator.<Long>comparingLong(id -> lastAccess.getOrDefault(id, 0L))
        .thenComparingLong(id -> id));
    return ids;
  }

  /** Blocks currently remembered; for tests of the memory bound. */
  synchronized int trackedBlocks() {
    return lastAccess.size();
  }

  @Override
  public String toString() {
    return "LRU";
  }
}
