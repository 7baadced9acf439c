package io.strata.worker.store;

import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * Orders blocks for eviction: the block store reports each access and removal, and the evictor asks
 * which of the blocks it may evict (say, those of one dir that no reader pins) to evict first.
 *
 * <p>Time is logical: each {@link #onAccess} advances an internal counter, and no wall clock is read, so
 * the order depends only on the sequence of calls and tests are deterministic.
 *
 * <p>Contract: {@link #coldestFirst} returns each distinct candidate exactly once, coldest first; a
 * candidate never accessed (or accessed, then removed) counts as colder than any accessed block, and such
 * blocks come in ascending id order. {@link #onRemove} forgets a block, so memory is bounded by the blocks
 * currently present, not by all blocks ever seen.
 *
 * <p>Thread-safety: implementations are thread-safe. Implementations loaded by {@link #create} need a
 * public no-arg constructor.
 */
public interface BlockAnnotator {
  /** Records an access (a read or a commit) of {@code blockId}, advancing logical time. */
  void onAccess(long blockId);

  /** Forgets {@code blockId}; a no-op for a block never seen. */
  void onRemove(long blockId);

  /** The distinct {@code candidates}, coldest (first to evict) first. A new, modifiable list. */
  List<Long> coldestFirst(Collection<Long> candidates);

  /**
   * A new annotator: "LRU", "LRFU" (case-insensitive; LRFU with its default parameters), or the fully
   * qualified name of a class implementing this interface with a public no-arg constructor.
   *
   * @throws IllegalArgumentException naming {@code nameOrClass} when it is blank, no such class, not a
   *     BlockAnnotator, or cannot be instantiated
   */
  static BlockAnnotator create(String nameOrClass) {
    if (nameOrClass == null || nameOrClass.isBlank()) {
      throw new IllegalArgumentException(
          "Block annotator must be LRU, LRFU or a class name, got '" + nameOrClass + "'");
    }
    String name = nameOrClass.trim();
    switch (name.toLowerCase(Locale.ROOT)) {
      case "lru":
        return new LruAnnotator();
      case "lrfu":
        return new LrfuAnnotator();
      default:
        return PolicyLoader.instantiate("block annotator", name, BlockAnnotator.class, "LRU, LRFU");
    }
  }
}
