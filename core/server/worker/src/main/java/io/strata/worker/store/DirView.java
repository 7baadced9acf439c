package io.strata.worker.store;

/**
 * A read-only view of one storage dir, as the allocation and eviction policies see it: which tier it
 * belongs to, where it is, how full it is and whether it is still usable.
 *
 * <p>{@code tierOrdinal} orders tiers from the top (0 = MEM) down; {@code dirIndex} is the dir's position
 * among its tier's dirs in configured order. Sizes are in bytes.
 *
 * <p>Thread-safety: implementations must be safe to read from any thread. The values may change between
 * calls (blocks are written and evicted concurrently), so a policy reads each value once per decision and
 * does not expect two reads to agree; the block store re-checks space when it reserves it.
 */
public interface DirView {
  int tierOrdinal();

  String tierAlias();

  int dirIndex();

  String path();

  long capacityBytes();

  long usedBytes();

  /** Bytes still free; never negative, even when a dir is over its quota. */
  default long availableBytes() {
    return Math.max(0, capacityBytes() - usedBytes());
  }

  /** False once an I/O error marked the dir bad; a bad dir gets no new blocks. */
  boolean isGood();
}
