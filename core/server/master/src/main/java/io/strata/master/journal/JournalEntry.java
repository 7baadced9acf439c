package io.strata.master.journal;

/**
 * One change to the master's durable state, as the domain sees it. Each carries the outcome of the
 * operation (ids, times), never a request to re-run, so replay is deterministic whatever the clock.
 */
public sealed interface JournalEntry {
  /** A directory was created (explicitly, or as a missing parent). */
  record Mkdir(long id, String path, int mode, long timeMs) implements JournalEntry {}

  /** A file was created (incomplete). */
  record CreateFile(long id, String path, long blockSize, int mode, long timeMs) implements JournalEntry {}

  /** A file was completed with its final length. */
  record CompleteFile(long id, long length, long timeMs) implements JournalEntry {}

  /** A path and everything under it was deleted. */
  record Delete(String path, long timeMs) implements JournalEntry {}

  /** A path was renamed. */
  record Rename(String src, String dst, long timeMs) implements JournalEntry {}

  /** A block of a file was committed with its length (locations are never journaled). */
  record CommitBlock(long blockId, long length) implements JournalEntry {}

  /**
   * In a checkpoint: the next inode id the tree hands out. Ids of inodes deleted before the checkpoint
   * appear in no other checkpoint entry, and must not be handed out again after a restart.
   */
  record NextInodeId(long nextId) implements JournalEntry {}

  /**
   * In a checkpoint, after every inode: a directory's modification time, which re-creating its children
   * would otherwise move (and a delete or rename under it is not in the checkpoint).
   */
  record DirectoryModified(String path, long timeMs) implements JournalEntry {}
}
