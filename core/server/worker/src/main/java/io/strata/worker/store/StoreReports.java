package io.strata.worker.store;

import io.strata.worker.store.BlockStore.BlockMeta;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What the store reports about itself: reads per tier (the cache hit ratio), the committed blocks, capacity
 * and use of the good dirs, a report per dir, and why a full dir cannot take more ({@link #fullMessage}).
 *
 * <p>Thread-safe. The read counters are atomic; everything else is read under the store's monitor
 * ({@link BlockIndex#lock}), so each answer is one consistent snapshot.
 */
final class StoreReports {
  private final BlockIndex index;
  private final BlockLockManager locks;
  /** Reads opened per tier ordinal: the cache hit ratio per tier. */
  private final AtomicLongArray readsByTier = new AtomicLongArray(3);

  StoreReports(BlockIndex index, BlockLockManager locks) {
    this.index = index;
    this.locks = locks;
  }

  /** Counts a read opened in tier {@code ordinal}. */
  void countRead(int ordinal) {
    readsByTier.incrementAndGet(ordinal);
  }

  /** Block reads opened so far, per tier (index = tier ordinal, 0 = top). */
  long[] readsByTier() {
    long[] out = new long[index.tiers.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = readsByTier.get(i);
    }
    return out;
  }

  List<BlockMeta> committedBlocks() {
    synchronized (index.lock) {
      List<BlockMeta> out = new ArrayList<>(index.committed.size());
      for (Map.Entry<Long, StorageDir> e : index.committed.entrySet()) {
        out.add(new BlockMeta(e.getKey(), e.getValue().blocks.get(e.getKey()), e.getValue().tierAlias));
      }
      return out;
    }
  }

  long capacityBytes() {
    synchronized (index.lock) {
      long c = 0;
      for (StorageDir d : index.allDirs) {
        if (d.isGood()) {
          c += d.capacity;
        }
      }
      return c;
    }
  }

  long usedBytes() {
    synchronized (index.lock) {
      long u = 0;
      for (StorageDir d : index.allDirs) {
        if (d.isGood()) {
          u += d.used;
        }
      }
      return u;
    }
  }

  /** Committed blocks per dir, in the order of {@link #dirReports} (0 for a bad dir). */
  long[] dirBlockCounts() {
    synchronized (index.lock) {
      long[] out = new long[index.allDirs.size()];
      for (int i = 0; i < out.length; i++) {
        StorageDir d = index.allDirs.get(i);
        out[i] = d.isGood() ? d.blocks.size() : 0;
      }
      return out;
    }
  }

  List<BlockStore.DirReport> dirReports() {
    synchronized (index.lock) {
      List<BlockStore.DirReport> out = new ArrayList<>(index.allDirs.size());
      for (StorageDir d : index.allDirs) {
        out.add(new BlockStore.DirReport(d.tierAlias, d.tierOrdinal, d.path(), d.isGood(), d.capacity,
            d.isGood() ? d.used : 0, d.lostBlocks));
      }
      return out;
    }
  }

  /**
   * Why a dir cannot take {@code n} more bytes: the tier, the dir and what holds its space (blocks of files
   * not yet persisted, which are never evicted from the last tier; pinned blocks; blocks being read; bytes
   * reserved by blocks being written). Caller holds the monitor.
   */
  String fullMessage(StorageDir dir, long blockId, long n) {
    long unpersisted = 0;
    long pinnedBytes = 0;
    long readBytes = 0;
    long committed = 0;
    boolean last = dir.tierOrdinal + 1 >= index.tiers.size();
    for (Map.Entry<Long, Long> e : dir.blocks.entrySet()) {
      committed += e.getValue();
      if (index.pinned.contains(e.getKey())) {
        pinnedBytes += e.getValue();
      } else if (!index.evictable.contains(e.getKey())) {
        unpersisted += e.getValue();
      } else if (locks.isReadLocked(e.getKey())) {
        readBytes += e.getValue();
      }
    }
    return "Tier " + dir.tierAlias + " (storage dir " + dir.root + ") is full: " + dir.used + " of "
        + dir.capacity + " bytes used, held by " + unpersisted + " bytes of blocks of files not yet persisted"
        + (last ? " (never evicted from the last tier)" : "") + ", " + pinnedBytes + " bytes of pinned blocks, "
        + readBytes + " bytes of blocks being read, " + (dir.used - committed)
        + " bytes reserved by blocks being written; block " + blockId + " needs " + n + " more bytes";
  }
}
