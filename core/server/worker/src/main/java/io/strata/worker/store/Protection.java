package io.strata.worker.store;

import java.util.Collection;

/**
 * Pins and protection. A pinned block is never evicted or moved down by eviction. Every committed block is
 * <em>protected</em> (never deleted out of the last tier by eviction or the reserver) until
 * {@link #markEvictable} says its file is persisted. Writers waiting for room are woken when blocks become
 * evictable; {@link #awaitedBytes} is what they wait for.
 *
 * <p>Thread-safe: the sets live in the {@link BlockIndex}, under the store's monitor ({@link BlockIndex#lock}).
 */
final class Protection {
  private final BlockIndex index;

  Protection(BlockIndex index) {
    this.index = index;
  }

  /**
   * Pins a committed block; an unknown id is ignored (a block removed between its commit and this call would
   * otherwise stay in the set and pin a later copy of that block whose file is no longer pinned).
   */
  void pin(long blockId) {
    synchronized (index.lock) {
      if (index.committed.containsKey(blockId)) {
        index.pinned.add(blockId);
      }
    }
  }

  void unpin(long blockId) {
    synchronized (index.lock) {
      index.pinned.remove(blockId);
    }
  }

  boolean isPinned(long blockId) {
    synchronized (index.lock) {
      return index.pinned.contains(blockId);
    }
  }

  /** The blocks' files are persisted: eviction may drop them out of the last tier. Unknown ids are ignored. */
  void markEvictable(Collection<Long> blockIds) {
    synchronized (index.lock) {
      for (long id : blockIds) {
        if (index.committed.containsKey(id)) {
          index.evictable.add(id);
        }
      }
    }
    index.space.changed();
  }

  /** Whether eviction may drop the block out of the last tier (tests and reports). */
  boolean isEvictable(long blockId) {
    synchronized (index.lock) {
      return index.evictable.contains(blockId);
    }
  }

  /** Bytes writers are waiting for ({@link WriteSpace#createReserved}). */
  long awaitedBytes() {
    return index.space.awaited();
  }
}
