package io.strata.master.journal;

import java.util.Map;

/**
 * One change to the master's durable state, as the domain sees it. Each carries the outcome of the
 * operation (ids, times), never a request to re-run, so replay is deterministic whatever the clock.
 * Enum-like values (persistence state, write type, TTL action) travel as their names.
 */
public sealed interface JournalEntry {
  /**
   * A directory was created (explicitly, as a missing parent, or loaded from the under file system), owned
   * by {@code owner} and {@code group} ("" for the default owner, as in entries written before owners).
   */
  record Mkdir(long id, String path, int mode, long timeMs, String persistenceState, String owner, String group)
      implements JournalEntry {
    public Mkdir(long id, String path, int mode, long timeMs, String persistenceState) {
      this(id, path, mode, timeMs, persistenceState, "", "");
    }

    public Mkdir(long id, String path, int mode, long timeMs) {
      this(id, path, mode, timeMs, "NOT_PERSISTED");
    }
  }

  /** A file was created (incomplete), with the write type it is written with; owners as in {@link Mkdir}. */
  record CreateFile(long id, String path, long blockSize, int mode, long timeMs, String writeType, String owner,
      String group) implements JournalEntry {
    public CreateFile(long id, String path, long blockSize, int mode, long timeMs, String writeType) {
      this(id, path, blockSize, mode, timeMs, writeType, "", "");
    }

    public CreateFile(long id, String path, long blockSize, int mode, long timeMs) {
      this(id, path, blockSize, mode, timeMs, "MUST_CACHE");
    }
  }

  /**
   * A file was completed with its final length and persistence state (and UFS mtime when persisted, and the UFS
   * file's content fingerprint when it was loaded from a UFS that offers one, else "").
   */
  record CompleteFile(long id, long length, long timeMs, String persistenceState, long ufsMtimeMs,
      String ufsContentTag) implements JournalEntry {
    public CompleteFile(long id, long length, long timeMs, String persistenceState, long ufsMtimeMs) {
      this(id, length, timeMs, persistenceState, ufsMtimeMs, "");
    }

    public CompleteFile(long id, long length, long timeMs) {
      this(id, length, timeMs, "NOT_PERSISTED", 0);
    }
  }

  /** A path and everything under it was deleted. */
  record Delete(String path, long timeMs) implements JournalEntry {}

  /** A path was renamed. */
  record Rename(String src, String dst, long timeMs) implements JournalEntry {}

  /**
   * A temporary UFS name ({@code tempUri}) was handed out for the copy of file {@code fileId}, before any worker may
   * create it. When the file is gone or complete at replay (or {@code fileId} is 0: in a checkpoint, a temp of a
   * deleted file still to be deleted), the temp is an orphan the leader deletes.
   */
  record UfsWriteTarget(long fileId, String tempUri) implements JournalEntry {}

  /** The leader deleted the orphaned temp {@code tempUri} (or found it gone): replay forgets it. */
  record UfsTempDeleted(String tempUri) implements JournalEntry {}

  /** A block of a file was committed with its length (locations are never journaled). */
  record CommitBlock(long blockId, long length) implements JournalEntry {}

  /**
   * The cached blocks of these files were freed: their block records go, and a copy from before the free that a
   * worker reports later is removed (see {@code BlockMaster#freeFileBlocks}).
   */
  record Free(java.util.List<Long> fileIds) implements JournalEntry {
    public Free {
      fileIds = java.util.List.copyOf(fileIds);
    }
  }

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

  /**
   * Attributes of an inode changed; a null field is unchanged. {@code recursive}: the same change applies to
   * every inode under it too, as the tree is when the entry is applied (so replay, which rebuilds the tree in
   * the same order, changes the same inodes).
   */
  record SetAttribute(long id, Boolean pinned, Long ttlMs, String ttlAction, String persistenceState,
      Long ufsMtimeMs, String owner, String group, Integer mode, Long modificationTimeMs, Long accessTimeMs,
      boolean recursive) implements JournalEntry {
    /** A change of cache and persistence attributes only. */
    public SetAttribute(long id, Boolean pinned, Long ttlMs, String ttlAction, String persistenceState,
        Long ufsMtimeMs) {
      this(id, pinned, ttlMs, ttlAction, persistenceState, ufsMtimeMs, null, null, null, null, null, false);
    }
  }

  /** A under file system was mounted at a Strata path. */
  record AddMount(String path, String ufsUri, boolean readOnly, boolean shared, Map<String, String> options)
      implements JournalEntry {
    public AddMount {
      options = Map.copyOf(options);
    }

    @Override
    public String toString() {
      return "AddMount[path=" + path + ", ufsUri=" + ufsUri + ", readOnly=" + readOnly + ", shared=" + shared
          + ", options=" + io.strata.server.ufs.Redact.options(options) + "]";
    }
  }

  /** The mount at a path was removed. */
  record DeleteMount(String path) implements JournalEntry {}

  /**
   * The call {@code callId} of client {@code clientId} was applied (the operation this entry ends);
   * {@code inodeId} is the file it created or completed (0 for a rename or delete). Kept by the master's
   * request-id table so a retry gets the first answer, also after a failover.
   */
  record RequestDone(String clientId, long callId, long inodeId, long timeMs) implements JournalEntry {}
}
