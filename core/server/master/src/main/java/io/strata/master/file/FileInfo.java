package io.strata.master.file;

/**
 * An immutable snapshot of an inode, as the tree hands it out. {@code ufsPath} and {@code mountPoint}
 * come from the mount table ({@link #withUfs}); the tree leaves them empty. {@code accessTimeMs} is the
 * creation time until an attribute change sets it.
 */
public record FileInfo(long id, String path, String name, boolean directory, long length, long blockSize,
    boolean complete, long creationTimeMs, long modificationTimeMs, String owner, String group, int mode,
    int childCount, PersistenceState persistence, WriteType writeType, boolean pinned, long ttlMs,
    TtlAction ttlAction, long ufsMtimeMs, String ufsPath, boolean mountPoint, long accessTimeMs, String ufsContentTag) {

  /** With no UFS content fingerprint. */
  public FileInfo(long id, String path, String name, boolean directory, long length, long blockSize,
      boolean complete, long creationTimeMs, long modificationTimeMs, String owner, String group, int mode,
      int childCount, PersistenceState persistence, WriteType writeType, boolean pinned, long ttlMs,
      TtlAction ttlAction, long ufsMtimeMs, String ufsPath, boolean mountPoint, long accessTimeMs) {
    this(id, path, name, directory, length, blockSize, complete, creationTimeMs, modificationTimeMs, owner, group,
        mode, childCount, persistence, writeType, pinned, ttlMs, ttlAction, ufsMtimeMs, ufsPath, mountPoint,
        accessTimeMs, "");
  }

  /** A file or directory with no UFS state (tests of the namespace alone). */
  public FileInfo(long id, String path, String name, boolean directory, long length, long blockSize,
      boolean complete, long creationTimeMs, long modificationTimeMs, String owner, String group, int mode,
      int childCount) {
    this(id, path, name, directory, length, blockSize, complete, creationTimeMs, modificationTimeMs, owner, group,
        mode, childCount, PersistenceState.NOT_PERSISTED, WriteType.MUST_CACHE, false, -1, TtlAction.DELETE, 0, "",
        false, creationTimeMs);
  }

  /** Blocks of a complete file. */
  public long blockCount() {
    return directory || blockSize == 0 ? 0 : length / blockSize + (length % blockSize == 0 ? 0 : 1);
  }

  /** The length of block {@code index} of a complete file. */
  public long blockLength(long index) {
    long count = blockCount();
    if (index < 0 || index >= count) {
      return -1;
    }
    return index < count - 1 ? blockSize : length - blockSize * (count - 1);
  }

  public boolean persisted() {
    return persistence == PersistenceState.PERSISTED;
  }

  public FileInfo withUfs(String ufsPath, boolean mountPoint) {
    return new FileInfo(id, path, name, directory, length, blockSize, complete, creationTimeMs, modificationTimeMs,
        owner, group, mode, childCount, persistence, writeType, pinned, ttlMs, ttlAction, ufsMtimeMs, ufsPath,
        mountPoint, accessTimeMs, ufsContentTag);
  }
}
