package io.strata.worker.store;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The block store's background work, one round per {@link #runOnce()} (the worker schedules it; tests
 * call it directly):
 * <ol>
 *   <li>dir health: a dir whose layout is gone (removed, replaced by a file) is marked bad;</li>
 *   <li>abandoned temp blocks (no data for the temp timeout: the writer died) are aborted;</li>
 *   <li>the space reserver: a dir above the high watermark is evicted down to the low watermark, so
 *       writes find room without evicting themselves;</li>
 *   <li>tier alignment: up to {@code maxMovesPerRound} blocks move up when they are hotter (by the
 *       annotator) than the coldest block of the tier above, which moves down to make room. The bound
 *       keeps this from starving foreground I/O.</li>
 * </ol>
 * Not thread-safe: one scheduler thread runs it.
 */
public final class TierManager {
  private static final Logger LOG = LoggerFactory.getLogger(TierManager.class);

  private final TieredBlockStore store;
  private final double highWatermark;
  private final double lowWatermark;
  private final long tempTimeoutMs;
  private final int maxMovesPerRound;

  public TierManager(TieredBlockStore store, double highWatermark, double lowWatermark, long tempTimeoutMs,
      int maxMovesPerRound) {
    if (!(lowWatermark > 0 && lowWatermark <= highWatermark && highWatermark <= 1)) {
      throw new IllegalArgumentException("Watermarks must satisfy 0 < low <= high <= 1, got low=" + lowWatermark
          + " high=" + highWatermark);
    }
    this.store = store;
    this.highWatermark = highWatermark;
    this.lowWatermark = lowWatermark;
    this.tempTimeoutMs = tempTimeoutMs;
    this.maxMovesPerRound = maxMovesPerRound;
  }

  public void runOnce() {
    checkDirs();
    reapAbandoned();
    reserveSpace();
    align();
  }

  void checkDirs() {
    for (StorageDir d : store.dirs()) {
      if (d.isGood() && !d.looksHealthy()) {
        store.dirFailed(d, null);
      }
    }
  }

  void reapAbandoned() {
    for (Temp t : store.idleTemps(tempTimeoutMs)) {
      LOG.warn("Temp block {} had no data for {} ms: its writer is gone; removing it", t.blockId, tempTimeoutMs);
      store.abortIdle(t, "it had no data for " + tempTimeoutMs + " ms, past strata.worker.temp.block.timeout");
    }
  }

  void reserveSpace() {
    for (StorageDir d : store.dirs()) {
      long used;
      synchronized (store) {
        used = d.used;
      }
      if (d.isGood() && used > highWatermark * d.capacity) {
        long want = (long) Math.ceil(d.capacity * (1 - lowWatermark));
        store.freeSpace(d, want);
      }
    }
  }

  /** Moves hot blocks up and cold blocks down, at most {@code maxMovesPerRound} moves up. */
  int align() {
    int moved = 0;
    for (int t = 0; t + 1 < store.tierCount() && moved < maxMovesPerRound; t++) {
      List<Long> lower = new ArrayList<>();
      for (StorageDir d : store.tier(t + 1)) {
        lower.addAll(store.blocksIn(d));
      }
      List<Long> hottestFirst = new ArrayList<>(store.annotator.coldestFirst(lower));
      Collections.reverse(hottestFirst);
      for (long hot : hottestFirst) {
        if (moved >= maxMovesPerRound) {
          break;
        }
        long len = store.lengthOf(hot);
        if (len < 0) {
          continue;
        }
        if (!roomWithoutEviction(t, len)) {
          Long cold = coldestIn(t);
          if (cold == null || !colder(cold, hot)) {
            break; // the upper tier holds only hotter blocks: aligned
          }
          if (!evictDown(cold, t)) {
            break;
          }
        }
        if (store.moveUp(hot, t)) {
          moved++;
        }
      }
    }
    return moved;
  }

  private boolean roomWithoutEviction(int tier, long len) {
    synchronized (store) {
      return store.allocator.allocate(store.tier(tier), len) != null;
    }
  }

  private Long coldestIn(int tier) {
    List<Long> upper = new ArrayList<>();
    for (StorageDir d : store.tier(tier)) {
      upper.addAll(store.blocksIn(d));
    }
    upper.removeIf(store::isPinned);
    List<Long> order = store.annotator.coldestFirst(upper);
    return order.isEmpty() ? null : order.get(0);
  }

  private boolean colder(long a, long b) {
    return store.annotator.coldestFirst(List.of(a, b)).get(0) == a;
  }

  /** Moves {@code id} from tier {@code tier} one tier down, if it is still there and its lock is free. */
  private boolean evictDown(long id, int tier) {
    var lock = store.tryLockForMove(id);
    if (lock.isEmpty()) {
      return false;
    }
    try (var l = lock.get()) {
      // Where it is now, under its lock: a writer's eviction may have moved it since it was picked (out
      // of the tier, possibly into the last one, which has no tier below).
      StorageDir from = store.dirOf(id);
      if (from == null || from.tierOrdinal != tier) {
        return false;
      }
      return store.moveLocked(id, from, tier + 1);
    }
  }
}
