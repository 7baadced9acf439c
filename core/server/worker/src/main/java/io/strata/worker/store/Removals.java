package io.strata.worker.store;

import java.io.IOException;
import java.util.Optional;

/**
 * Removes committed blocks: at once when the block's write lock is free, else deferred until the last
 * holder (a reader or a mover) leaves: no new reader is admitted meanwhile ({@link BlockIndex#removeWhenUnlocked}),
 * and whoever releases the lock last finishes the removal ({@link #finishDeferredRemoval}). A reader that lets go
 * ({@link #finishDeferredRemovalLater}) hands that finish to a thread of this class's own: readers close on network
 * threads (a transfer's event loop releases its file region), and a removal unlinks files, which a dying disk can hang.
 * Eviction deletes through {@link #deleteBlock} too.
 *
 * <p>Thread-safe. Block locks are only try-locked here, never waited for; the store's monitor
 * ({@link BlockIndex#lock}) is taken for the index steps only, never across the file deletion or the
 * {@link StoreEvents} callback.
 */
final class Removals {
  private final BlockIndex index;
  /** Unlinks the files ({@link Durability#unlink}). */
  private final Durability durability;
  private final BlockLockManager locks;
  private final DirFailures failures;
  private final BlockAnnotator annotator;
  private final StoreEvents events;
  /**
   * Finishes the removals readers let go of: a thread per dir ({@link Lanes}: one dying disk holds up its own
   * removals only), made when needed and gone when idle (a store has no close). Each deferred block is queued once
   * ({@link #finishing}).
   */
  private final Lanes finisher = new Lanes("worker-store-deferred-removals");
  /** Deferred removals queued on {@link #finisher}; guarded by {@link BlockIndex#lock}. */
  private final java.util.Set<Long> finishing = new java.util.HashSet<>();

  Removals(BlockIndex index, BlockLockManager locks, DirFailures failures, BlockAnnotator annotator,
      StoreEvents events, Durability durability) {
    this.durability = durability;
    this.index = index;
    this.locks = locks;
    this.failures = failures;
    this.annotator = annotator;
    this.events = events;
  }

  boolean remove(long blockId) throws IOException {
    synchronized (index.lock) {
      if (!index.committed.containsKey(blockId)) {
        return false;
      }
    }
    Optional<BlockLock> lock = locks.tryWriteLock(blockId);
    if (lock.isEmpty()) {
      // Readers (or a mover) hold it: no new reader is admitted, and the last one out removes it.
      synchronized (index.lock) {
        if (!index.committed.containsKey(blockId)) {
          return false; // it left meanwhile (evicted, or another removal): nothing to defer
        }
        index.removeWhenUnlocked.add(blockId);
      }
      finishDeferredRemoval(blockId);
      return true;
    }
    try (BlockLock l = lock.get()) {
      return deleteBlock(blockId, null);
    }
  }

  /** As {@link #finishDeferredRemoval}, on this class's own thread (for a reader's close, on any thread). */
  void finishDeferredRemovalLater(long blockId) {
    StorageDir dir;
    synchronized (index.lock) {
      if (!index.removeWhenUnlocked.contains(blockId) || !finishing.add(blockId)) {
        return; // nothing deferred (the usual case: no task), or queued already
      }
      dir = index.committed.get(blockId);
    }
    finisher.execute(dir == null ? "" : dir.root.toString(), () -> {
      synchronized (index.lock) {
        finishing.remove(blockId);
      }
      finishDeferredRemoval(blockId);
    });
  }

  /** Finishes a removal deferred for {@code blockId}, if one is and its lock is free now. */
  void finishDeferredRemoval(long blockId) {
    synchronized (index.lock) {
      if (!index.removeWhenUnlocked.contains(blockId)) {
        return;
      }
    }
    Optional<BlockLock> lock = locks.tryWriteLock(blockId);
    if (lock.isPresent()) {
      try (BlockLock l = lock.get()) {
        synchronized (index.lock) {
          index.removeWhenUnlocked.remove(blockId);
        }
        deleteBlock(blockId, null);
      }
    }
  }

  /** Deletes a block the caller holds the write lock of; {@code expected} null means wherever it is. */
  boolean deleteBlock(long blockId, StorageDir expected) {
    StorageDir dir;
    IOException unlinkFailed = null;
    boolean claimed;
    synchronized (index.lock) {
      dir = index.committed.get(blockId);
      if (dir == null || (expected != null && dir != expected)) {
        return false;
      }
      // Its id stays claimed (a null entry in writing: no new copy can start) until its files are unlinked, which
      // happens outside this monitor: a dir whose unlink hangs (a dying disk) must not hold every other dir's reads,
      // writes and the heartbeat until the master gives the worker up. Unclaimed, a new copy of the block could be
      // committed at this very path before the unlink, which would delete the new copy's files.
      claimed = !index.writing.containsKey(blockId);
      if (claimed) {
        index.writing.put(blockId, null);
      } else {
        // Someone holds the id already: never so for a committed block here (a move claims it only while holding the
        // block's write lock, which the caller holds now).
        unlinkFailed = unlink(dir, blockId);
      }
      index.committed.remove(blockId);
      Long len = dir.blocks.remove(blockId);
      dir.used -= len == null ? 0 : len;
      index.pinned.remove(blockId);
      index.evictable.remove(blockId);
      index.removeWhenUnlocked.remove(blockId);
    }
    if (claimed) {
      try {
        unlinkFailed = unlink(dir, blockId);
      } finally {
        synchronized (index.lock) {
          index.writing.remove(blockId, null);
        }
      }
    }
    index.space.changed();
    annotator.onRemove(blockId);
    if (unlinkFailed != null) {
      failures.dirFailed(dir, unlinkFailed);
    }
    events.blockRemoved(blockId);
    return true;
  }

  /** Unlinks a block's file and its checksum sidecar; the failure, or null. */
  private IOException unlink(StorageDir dir, long blockId) {
    try {
      durability.unlink(dir.blockPath(blockId));
      durability.unlink(dir.sidecarPath(blockId));
      return null;
    } catch (IOException e) {
      return e;
    }
  }
}
