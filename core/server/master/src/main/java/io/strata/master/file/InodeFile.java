package io.strata.master.file;

/**
 * A file: block size, and once complete its length. Its blocks are named by {@code BlockId.of(id, i)}
 * for i below {@code ceil(length / blockSize)}. Guarded by the tree's lock.
 */
final class InodeFile extends Inode {
  final long blockSize;
  long length;
  boolean complete;
  WriteType writeType = WriteType.MUST_CACHE;
  /** The UFS file's modification time when it was persisted or loaded (with the length, its fingerprint). */
  long ufsMtimeMs;
  /** The UFS file's content fingerprint (an object store's ETag) when it was loaded; "" when none is known. */
  String ufsContentTag = "";

  InodeFile(long id, String name, InodeDirectory parent, long nowMs, String owner, String group, int mode,
      long blockSize) {
    super(id, name, parent, nowMs, owner, group, mode);
    this.blockSize = blockSize;
  }

  @Override
  boolean isDirectory() {
    return false;
  }
}
