package io.strata.worker.store;

import io.strata.common.exception.NotFoundException;
import io.strata.worker.store.BlockStore.BlockMeta;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The block store's index and space accounting: the tiers and their dirs, which dir holds each committed
 * block, the blocks being written, the pinned, evictable and removal-pending sets, and each dir's
 * {@code used} bytes (committed blocks plus the reservations of blocks being written and moved in). Built
 * at start from what the dirs hold; a dir that cannot be opened is left out (marked bad).
 *
 * <p>Invariants (under {@link #lock}): a committed block is in exactly one good dir's {@code blocks} and in
 * {@link #committed}; {@link #evictable} and {@link #removeWhenUnlocked} are subsets of {@link #committed}'s
 * keys; a good dir's {@code used} is its committed bytes plus the reservations it holds. A bad dir's
 * accounting is reset when it fails, so nothing is given back to it.
 *
 * <p>Threading: every field here, and every dir's {@code blocks}, {@code used} and {@code lostBlocks}, is
 * guarded by {@link #lock}: the {@link TieredBlockStore} itself, the store's one monitor, which every part
 * of the store ({@link WriteSpace}, {@link Commits}, {@link Mover}, {@link Removals}, {@link DirFailures},
 * {@link StoreReports}) takes for its index and accounting steps, and never holds during file I/O or while
 * waiting for a block lock. {@link #tiers} and {@link #allDirs} never change after construction.
 */
final class BlockIndex {
  private static final Logger LOG = LoggerFactory.getLogger(BlockIndex.class);

  /** The store's one monitor. */
  final Object lock;
  final List<List<StorageDir>> tiers = new ArrayList<>();
  final List<StorageDir> allDirs = new ArrayList<>();
  final long maxDirCapacity;
  /** Committed blocks → the dir holding them. */
  final Map<Long, StorageDir> committed = new HashMap<>();
  /**
   * Blocks being written; a null value reserves the id while a writer sets up, a removal unlinks or a move copies
   * (a dir failing meanwhile frees its blocks' ids in {@link #committed}, not here: no new copy starts at their paths).
   */
  final Map<Long, Temp> writing = new HashMap<>();
  final Set<Long> pinned = new HashSet<>();
  /**
   * Committed blocks whose file is persisted, so eviction may drop them out of the last tier; always a
   * subset of {@link #committed}'s keys. Every other committed block is protected.
   */
  final Set<Long> evictable = new HashSet<>();
  /**
   * Committed blocks whose removal waits for the lock holders to leave; always a subset of {@link #committed}'s
   * keys (a block leaving the index leaves this set), so a stale entry never outlives its block and
   * refuses reads of a later block with the same id.
   */
  final Set<Long> removeWhenUnlocked = new HashSet<>();
  /** Wakes writers waiting for room; its monitor is a leaf (nothing else is locked under it). */
  final SpaceSignal space = new SpaceSignal();
  /** Traffic and evictions per tier (atomic; no lock needed). */
  final StoreCounters counters = new StoreCounters();
  /** Names temp files (writes and moves in) uniquely. */
  long tmpSeq;

  /**
   * Opens every dir of {@code specs} and indexes the blocks they hold ({@code durability} syncs checksum
   * sidecars rebuilt at start); {@code lock} is the store's monitor.
   */
  BlockIndex(Object lock, List<TierSpec> specs, BlockAnnotator annotator, Durability durability) {
    this.lock = lock;
    long max = 0;
    for (int t = 0; t < specs.size(); t++) {
      TierSpec spec = specs.get(t);
      List<StorageDir> dirs = new ArrayList<>();
      for (int d = 0; d < spec.dirs().size(); d++) {
        TierSpec.Dir ds = spec.dirs().get(d);
        StorageDir dir = new StorageDir(t, spec.alias(), d, ds.path(), ds.quota(), spec.fsync());
        dirs.add(dir);
        allDirs.add(dir);
        try {
          Map<Long, Long> found = dir.open(durability);
          for (Map.Entry<Long, Long> e : found.entrySet()) {
            if (committed.containsKey(e.getKey())) {
              StorageDir first = committed.get(e.getKey());
              if (e.getValue().equals(first.blocks.get(e.getKey()))) {
                // A move a crash cut short between the copy's rename and the source's delete: two copies of one
                // block (a block's bytes never change). A copy in a tier without fsync may have lost its bytes in
                // the crash with its size kept, so the one whose bytes match its checksums stays (the first when
                // both do); the other goes, or it would fill its dir uncounted, one more per such crash.
                long id = e.getKey();
                boolean firstWhole = verified(first, id);
                boolean secondWhole = verified(dir, id);
                // Neither verified (a sidecar rebuilt from bytes a crash may have zeroed): the copy in a tier that
                // fsyncs is the one the crash could not undo.
                StorageDir drop = firstWhole ? dir : secondWhole ? first : !first.fsync && dir.fsync ? first : dir;
                if (drop == first) {
                  first.blocks.remove(id);
                  first.used -= e.getValue();
                  committed.put(id, dir);
                  dir.blocks.put(id, e.getValue());
                  dir.used += e.getValue();
                }
                LOG.warn("Block {} is in both {} and {} (a move cut short); deleting the copy in {}{}", id, first, dir,
                    drop, firstWhole || secondWhole ? "" : " (neither copy could be verified against checksums of its own)");
                try {
                  java.nio.file.Files.deleteIfExists(drop.blockPath(id));
                  java.nio.file.Files.deleteIfExists(drop.sidecarPath(id));
                } catch (IOException notDeleted) {
                  LOG.warn("Cannot delete the other copy of block {} in {}: {}", id, drop, notDeleted.toString());
                }
              } else {
                LOG.warn("Block {} is in both {} and {} with other lengths; keeping the first, leaving the other's "
                    + "file as it is", e.getKey(), first, dir);
              }
              continue;
            }
            committed.put(e.getKey(), dir);
            dir.blocks.put(e.getKey(), e.getValue());
            dir.used += e.getValue();
            annotator.onAccess(e.getKey());
          }
          max = Math.max(max, ds.quota());
          LOG.info("Storage dir {} (tier {}): {} blocks, {} of {} bytes used", ds.path(), spec.alias(),
              found.size(), dir.used, ds.quota());
        } catch (IOException | RuntimeException e) {
          dir.markBad();
          LOG.error("Storage dir {} (tier {}) cannot be used and is left out: {}", ds.path(), spec.alias(),
              e.toString());
        }
      }
      tiers.add(List.copyOf(dirs));
    }
    this.maxDirCapacity = max;
    if (allDirs.stream().noneMatch(StorageDir::isGood)) {
      throw new IllegalStateException("No storage dir can be used: " + allDirs);
    }
  }

  /** The good dirs of {@code tier} with a capacity of at least {@code bytes}. Caller holds the monitor. */
  List<StorageDir> eligible(List<StorageDir> tier, long bytes) {
    List<StorageDir> out = new ArrayList<>();
    for (StorageDir d : tier) {
      if (d.isGood() && d.capacity >= bytes) {
        out.add(d);
      }
    }
    return out;
  }

  /** Gives back {@code n} reserved bytes of {@code dir} and wakes writers waiting for room. */
  void release(StorageDir dir, long n) {
    synchronized (lock) {
      if (dir.isGood()) { // a bad dir's accounting was reset when it failed
        dir.used -= n;
      }
    }
    space.changed();
  }

  BlockMeta get(long blockId) throws NotFoundException {
    synchronized (lock) {
      StorageDir dir = committed.get(blockId);
      if (dir == null) {
        throw new NotFoundException("Block " + blockId + " does not exist on this worker");
      }
      return new BlockMeta(blockId, dir.blocks.get(blockId), dir.tierAlias);
    }
  }

  /** The dir holding a committed block, or null. */
  StorageDir dirOf(long blockId) {
    synchronized (lock) {
      return committed.get(blockId);
    }
  }

  /** Committed block ids of a dir. */
  List<Long> blocksIn(StorageDir dir) {
    synchronized (lock) {
      return new ArrayList<>(dir.blocks.keySet());
    }
  }

  /**
   * Whether the bytes of block {@code id} in {@code dir} match checksums kept from before (a sidecar rebuilt at this
   * start from the bytes proves nothing); false when unreadable.
   */
  private static boolean verified(StorageDir dir, long id) {
    if (dir.rebuiltSidecars.contains(id)) {
      return false;
    }
    try {
      long length = java.nio.file.Files.size(dir.blockPath(id));
      return java.util.Arrays.equals(ChecksumSidecar.compute(dir.blockPath(id)),
          ChecksumSidecar.read(dir.sidecarPath(id), length));
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** A committed block's length, or -1. */
  long lengthOf(long blockId) {
    synchronized (lock) {
      StorageDir d = committed.get(blockId);
      return d == null ? -1 : d.blocks.get(blockId);
    }
  }
}
