package io.strata.worker.store;

import java.util.concurrent.atomic.LongAdder;

/**
 * The store's traffic, per tier ordinal (0 = top): bytes served to readers of its blocks (whatever the path:
 * gRPC, block transfer, short-circuit), bytes of blocks committed, and blocks (with their bytes) evicted out
 * of a tier, moved down or deleted. Read by the worker's metrics at scrape time.
 *
 * <p>Thread-safe and cheap: one {@link LongAdder} add per count.
 */
public final class StoreCounters {
  private static final int TIERS = 3;
  private final LongAdder[] bytesRead = adders();
  private final LongAdder[] bytesWritten = adders();
  private final LongAdder[] evictions = adders();
  private final LongAdder[] evictedBytes = adders();

  private static LongAdder[] adders() {
    LongAdder[] a = new LongAdder[TIERS];
    for (int i = 0; i < TIERS; i++) {
      a[i] = new LongAdder();
    }
    return a;
  }

  void read(int tier, long bytes) {
    bytesRead[tier].add(bytes);
  }

  void written(int tier, long bytes) {
    bytesWritten[tier].add(bytes);
  }

  void evicted(int tier, long bytes) {
    evictions[tier].increment();
    evictedBytes[tier].add(bytes);
  }

  /** Bytes served to readers from blocks in tier {@code tier}. */
  public long bytesRead(int tier) {
    return bytesRead[tier].sum();
  }

  /** Bytes of the blocks committed into tier {@code tier}. */
  public long bytesWritten(int tier) {
    return bytesWritten[tier].sum();
  }

  /** Blocks evicted out of tier {@code tier} (moved to the next tier down, or deleted out of the last). */
  public long evictions(int tier) {
    return evictions[tier].sum();
  }

  /** Bytes of the blocks {@link #evictions} counts. */
  public long evictedBytes(int tier) {
    return evictedBytes[tier].sum();
  }
}
