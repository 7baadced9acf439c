package io.strata.client;

import java.util.List;

/**
 * What the master says of a file or directory. Immutable.
 *
 * @param blocks the file's blocks with their locations, only when asked for (openFile); otherwise empty
 * @param persistenceState whether the under file system holds it: {@value #NOT_PERSISTED},
 *     {@value #TO_BE_PERSISTED}, {@value #PERSISTED} or {@value #LOST}
 * @param ttlMs time to live in ms from creation, -1 when none
 * @param ttlAction FREE or DELETE: what happens when the TTL runs out ("" when the master says nothing)
 * @param ufsPath where it lives in the under file system, "" when not under a mount
 * @param mountPoint true when the path is a mount point
 * @param owner the owner's name, as the creating client sent it or setAttribute set it (a plain string:
 *     permissions are not enforced yet); the group likewise (the owner's name unless set)
 * @param mode the permission bits, 0 to 07777
 * @param accessTimeMs the last access time: the creation time until setAttribute sets it (reads do not
 *     move it, as HDFS with access times off)
 */
public record URIStatus(long id, String path, String name, boolean directory, long length, long blockSize,
    boolean complete, long creationTimeMs, long modificationTimeMs, String owner, String group, int mode,
    int childCount, List<FileBlockInfo> blocks, String persistenceState, boolean pinned, long ttlMs,
    String ttlAction, String ufsPath, boolean mountPoint, long accessTimeMs) implements java.io.Serializable {

  public static final String NOT_PERSISTED = "NOT_PERSISTED";
  public static final String TO_BE_PERSISTED = "TO_BE_PERSISTED";
  public static final String PERSISTED = "PERSISTED";
  public static final String LOST = "LOST";

  public URIStatus {
    blocks = List.copyOf(blocks);
    persistenceState = persistenceState == null || persistenceState.isEmpty() ? NOT_PERSISTED : persistenceState;
    ttlAction = ttlAction == null ? "" : ttlAction;
    ufsPath = ufsPath == null ? "" : ufsPath;
  }

  /** The status as the master described it before access times: the access time is the creation time. */
  public URIStatus(long id, String path, String name, boolean directory, long length, long blockSize,
      boolean complete, long creationTimeMs, long modificationTimeMs, String owner, String group, int mode,
      int childCount, List<FileBlockInfo> blocks, String persistenceState, boolean pinned, long ttlMs,
      String ttlAction, String ufsPath, boolean mountPoint) {
    this(id, path, name, directory, length, blockSize, complete, creationTimeMs, modificationTimeMs, owner, group,
        mode, childCount, blocks, persistenceState, pinned, ttlMs, ttlAction, ufsPath, mountPoint, creationTimeMs);
  }

  /**
   * The status as the master described it before the under file system existed: not persisted, not pinned,
   * no TTL, not under a mount.
   */
  public URIStatus(long id, String path, String name, boolean directory, long length, long blockSize,
      boolean complete, long creationTimeMs, long modificationTimeMs, String owner, String group, int mode,
      int childCount, List<FileBlockInfo> blocks) {
    this(id, path, name, directory, length, blockSize, complete, creationTimeMs, modificationTimeMs, owner, group,
        mode, childCount, blocks, NOT_PERSISTED, false, -1, "", "", false);
  }

  public boolean isFile() {
    return !directory;
  }

  /** True when the under file system holds the whole file (so a block on no worker can be read from it). */
  public boolean isPersisted() {
    return PERSISTED.equals(persistenceState);
  }
}
