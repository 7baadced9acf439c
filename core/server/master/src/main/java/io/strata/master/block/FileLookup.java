package io.strata.master.block;

/** How the block master asks the namespace about the file a block belongs to. */
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
}
