package io.strata.master.block;

/**
 * How the block master asks the namespace about the file a block belongs to.
 *
 * <p>Lock order: the namespace's lock comes before the block master's monitor. The block master never
 * asks {@link #stateOf} or {@link #cacheableLength} while holding its monitor unless it entered
 * {@link #whileUnchanged} first, so a complete (namespace write lock, then block lengths) can never
 * wait on a heartbeat that waits on the namespace.
 */
@FunctionalInterface
public interface FileLookup {
  /** What the namespace knows of a file id. */
  enum FileState { MISSING, INCOMPLETE, COMPLETE }

  FileState stateOf(long fileId);

  /**
   * The length a block of a complete, persisted file must have to be cached (read from the under file
   * system, or copied from a peer); -1 when the block may not be added (no such file or block, or the
   * file is not persisted, so its blocks are fixed).
   */
  default long cacheableLength(long blockId) {
    return -1;
  }

  /** The largest length a block of the file may have (its block size); unbounded when the file is unknown. */
  default long maxBlockLength(long blockId) {
    return Long.MAX_VALUE;
  }

  /**
   * Runs {@code action} with the namespace held still (its read lock): the block master takes its own
   * monitor inside, and the lookups it makes there re-enter the read lock. The default (no namespace,
   * unit tests) just runs it.
   */
  default <T> T whileUnchanged(java.util.function.Supplier<T> action) {
    return action.get();
  }
}
