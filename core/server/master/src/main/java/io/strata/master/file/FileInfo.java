package io.strata.master.file;

/** An immutable snapshot of an inode, as the tree hands it out. */
public record FileInfo(long id, String path, String name, boolean directory, long length, long blockSize,
    boolean complete, long creationTimeMs, long modificationTimeMs, String owner, String group, int mode,
    int childCount) {

  /** Blocks of a complete file. */
  public long blockCount() {
    return directory || blockSize == 0 ? 0 : length / blockSize + (length % blockSize == 0 ? 0 : 1);
  }
}
