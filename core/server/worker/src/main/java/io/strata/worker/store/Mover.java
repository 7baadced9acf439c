package io.strata.worker.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Eviction and tier moves: makes room in a dir by moving its coldest blocks (by the {@link BlockAnnotator})
 * one tier down, or deleting them out of the last tier when they are evictable ({@link #freeSpace}); moves
 * a block up on promotion and alignment ({@link #moveUp}); reserves room in a tier for a block moving in
 * ({@link #reserveIn}). A move copies into the target's {@code tmp/}, fsyncs it where the tier asks
 * ({@link Durability}), renames it into {@code blocks/}, and only then deletes the source. The block's id stays
 * claimed (a null entry in {@link BlockIndex#writing}) through the move's file operations, so a dir failing
 * meanwhile (which frees the ids of its blocks) lets no new copy of the block start at the paths the move renames
 * into and deletes.
 *
 * <p>Thread-safe. Movers only ever try-lock a block ({@link #tryLockForMove}), so eviction cannot deadlock
 * with readers; a block with a reader, or pinned, is skipped. The store's monitor ({@link BlockIndex#lock})
 * is taken for the index and accounting steps only, never across a copy, a rename, an fsync or a delete.
 */
final class Mover {
  private static final Logger LOG = LoggerFactory.getLogger(Mover.class);

  private final BlockIndex index;
  private final BlockLockManager locks;
  private final Allocator allocator;
  private final BlockAnnotator annotator;
  private final Removals removals;
  private final DirFailures failures;
  private final Durability durability;
  private final StoreEvents events;

  Mover(BlockIndex index, BlockLockManager locks, Allocator allocator, BlockAnnotator annotator, Removals removals,
      DirFailures failures, Durability durability, StoreEvents events) {
    this.index = index;
    this.locks = locks;
    this.allocator = allocator;
    this.annotator = annotator;
    this.removals = removals;
    this.failures = failures;
    this.durability = durability;
    this.events = events;
  }

  /**
   * The write lock a mover (eviction, promotion, alignment) takes on a block, if free now. Releasing it
   * finishes a removal that was asked for meanwhile: the mover is the last one out, like a reader.
   */
  Optional<BlockLock> tryLockForMove(long blockId) {
    return locks.tryWriteLock(blockId).map(inner -> new BlockLock() {
      @Override
      public long blockId() {
        return blockId;
      }

      @Override
      public void close() {
        inner.close();
        removals.finishDeferredRemovalLater(blockId); // not on this thread (an eviction's may be a client's call)
      }
    });
  }

  /**
   * Makes {@code bytes} available in {@code dir} by moving its coldest unlocked, unpinned blocks to the
   * next tier down, or deleting them when they cannot move (the last tier, or no room below) and are
   * evictable: a protected block (its file not persisted) is never deleted. Returns whether the room is there.
   */
  boolean freeSpace(StorageDir dir, long bytes) {
    List<Long> order;
    boolean last = dir.tierOrdinal + 1 >= index.tiers.size();
    synchronized (index.lock) {
      if (!dir.isGood()) {
        return false;
      }
      if (dir.capacity - dir.used >= bytes) {
        return true;
      }
      List<Long> candidates = new ArrayList<>(dir.blocks.keySet());
      candidates.removeAll(index.pinned);
      if (last) {
        candidates.retainAll(index.evictable);
      }
      order = annotator.coldestFirst(candidates);
    }
    for (long id : order) {
      synchronized (index.lock) {
        if (dir.capacity - dir.used >= bytes) {
          return true;
        }
      }
      Optional<BlockLock> lock = tryLockForMove(id);
      if (lock.isEmpty()) {
        continue;
      }
      try (BlockLock l = lock.get()) {
        long length;
        synchronized (index.lock) {
          if (index.committed.get(id) != dir || index.pinned.contains(id)) {
            continue;
          }
          length = dir.blocks.get(id);
        }
        if (!last && moveLocked(id, dir, dir.tierOrdinal + 1)) {
          index.counters.evicted(dir.tierOrdinal, length);
          continue;
        }
        synchronized (index.lock) {
          if (!index.evictable.contains(id)) {
            continue; // protected: it stays where it is
          }
        }
        removals.deleteBlock(id, dir);
        index.counters.evicted(dir.tierOrdinal, length);
      }
    }
    synchronized (index.lock) {
      return dir.capacity - dir.used >= bytes;
    }
  }

  /** Moves a block to tier {@code target} if it is below it and its lock is free; returns whether it moved. */
  boolean moveUp(long blockId, int target) {
    Optional<BlockLock> lock = tryLockForMove(blockId);
    if (lock.isEmpty()) {
      return false;
    }
    try (BlockLock l = lock.get()) {
      StorageDir from;
      synchronized (index.lock) {
        from = index.committed.get(blockId);
      }
      if (from == null || from.tierOrdinal <= target) {
        return false;
      }
      return moveLocked(blockId, from, target);
    }
  }

  /**
   * Moves a block the caller holds the write lock of from {@code from} to a dir of tier {@code target}. The block's id
   * is claimed (a null entry in {@link BlockIndex#writing}, as a removal claims it) from before the copy gets a name
   * in the target until the move's last file operation: the source dir may fail meanwhile, which frees the id (its
   * blocks leave the index), and a new copy of the block written then could land at the very paths this move
   * renames into, deletes on a failure, or deletes as a stale copy; claimed, no new copy starts until the move is
   * done (its writer is refused, as while a removal unlinks).
   */
  boolean moveLocked(long blockId, StorageDir from, int target) {
    long length;
    synchronized (index.lock) {
      Long len = from.blocks.get(blockId);
      if (len == null) {
        return false;
      }
      length = len;
    }
    StorageDir to = reserveIn(target, length);
    if (to == null) {
      return false;
    }
    Path tmp;
    synchronized (index.lock) {
      StorageDir now = index.committed.get(blockId);
      // Still in its source, or lost with it while room was made (its bytes may still be read, and kept below);
      // never a copy committed elsewhere since, nor an id another caller holds.
      if ((now != from && (now != null || from.isGood())) || index.writing.containsKey(blockId)) {
        tmp = null;
      } else {
        index.writing.put(blockId, null);
        tmp = to.tmpDir.resolve(blockId + "-move-" + (index.tmpSeq++));
      }
    }
    if (tmp == null) {
      index.release(to, length);
      return false;
    }
    try {
      return copyClaimed(blockId, from, to, length, tmp);
    } finally {
      synchronized (index.lock) {
        index.writing.remove(blockId, null);
      }
    }
  }

  /** The move of {@link #moveLocked} once the id is claimed and {@code length} bytes reserved in {@code to}. */
  private boolean copyClaimed(long blockId, StorageDir from, StorageDir to, long length, Path tmp) {
    Path tmpSidecar = ChecksumSidecar.of(tmp);
    try {
      // The checksum sidecar moves first and goes last, so the block file never lacks one.
      Files.copy(from.sidecarPath(blockId), tmpSidecar);
      if (to.fsync) {
        durability.syncFile(tmpSidecar);
      }
      Files.move(tmpSidecar, to.sidecarPath(blockId), StandardCopyOption.ATOMIC_MOVE);
      Files.copy(from.blockPath(blockId), tmp);
      if (to.fsync) {
        durability.syncFile(tmp); // the copy is whole on disk before the source can go
      }
      Files.move(tmp, to.blockPath(blockId), StandardCopyOption.ATOMIC_MOVE);
      if (to.fsync) {
        durability.syncDir(to.blocksDir);
      }
    } catch (IOException e) {
      index.release(to, length);
      try {
        // This move's own names: the claimed id keeps any other copy of the block off them.
        Files.deleteIfExists(tmp);
        Files.deleteIfExists(tmpSidecar);
        Files.deleteIfExists(to.sidecarPath(blockId));
      } catch (IOException ignored) {
        // the target dir is failing; the health check will tell
      }
      if (!from.looksHealthy()) {
        failures.dirFailed(from, e);
      } else if (!to.looksHealthy()) {
        failures.dirFailed(to, e);
      } else {
        LOG.warn("Moving block {} from {} to {} failed: {}", blockId, from, to, e.toString());
      }
      return false;
    }
    boolean adopted = false;
    boolean deleteCopy = false;
    boolean stale = false;
    synchronized (index.lock) {
      if (!from.isGood() && to.isGood() && index.committed.get(blockId) == null) {
        // The source dir failed during the copy and the block was reported lost, but the copy is whole in a good
        // dir, and the claimed id let no other copy start meanwhile: it is the block now (announced below as moved,
        // which the master takes as added after the loss), not deleted with what may have been its only copy.
        index.committed.put(blockId, to);
        to.blocks.put(blockId, length);
        adopted = true;
      } else if (!from.isGood() || index.committed.get(blockId) != from || !to.isGood()) {
        // Both dirs failed, or the target did during the copy: the block stays where it is (its source is whole and
        // still listed, when good), and the copy goes with the failed dir.
        stale = true;
        if (to.isGood()) {
          to.used -= length;
          deleteCopy = true;
        } // a failed target dir keeps the copy: its files no longer count, and its disk may hang a delete
      } else {
        index.committed.put(blockId, to);
        to.blocks.put(blockId, length);
        from.blocks.remove(blockId);
        from.used -= length;
      }
    }
    index.space.changed();
    if (stale) {
      if (deleteCopy) {
        try {
          // Outside the monitor: the id is still claimed, so these are this move's files, never a new copy's.
          Files.deleteIfExists(to.blockPath(blockId));
          Files.deleteIfExists(to.sidecarPath(blockId));
        } catch (IOException ignored) {
          // best effort
        }
      }
      return false;
    }
    if (adopted) {
      LOG.warn("Block {} was copied whole to {} while its dir {} failed: kept there", blockId, to, from);
      events.blockMoved(blockId, length, to.tierAlias);
      return true;
    }
    try {
      // Still claimed: were the target to fail now, freeing the id, no new copy could land here before this delete.
      Files.deleteIfExists(from.blockPath(blockId));
      Files.deleteIfExists(from.sidecarPath(blockId));
    } catch (IOException e) {
      failures.dirFailed(from, e);
    }
    events.blockMoved(blockId, length, to.tierAlias);
    return true;
  }

  /** Reserves {@code bytes} in a dir of tier {@code ordinal}, evicting there if needed; null if impossible. */
  StorageDir reserveIn(int ordinal, long bytes) {
    List<StorageDir> tier = index.tiers.get(ordinal);
    for (int attempt = 0; attempt < 2; attempt++) {
      StorageDir d;
      synchronized (index.lock) {
        d = (StorageDir) allocator.allocate(tier, bytes);
        if (d != null) {
          d.used += bytes;
          return d;
        }
        d = (StorageDir) allocator.allocate(index.eligible(tier, bytes), 0);
      }
      if (d == null || !freeSpace(d, bytes)) {
        return null;
      }
    }
    return null;
  }
}
