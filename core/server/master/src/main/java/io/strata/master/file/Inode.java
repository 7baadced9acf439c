package io.strata.master.file;

/**
 * A node of the namespace. Mutable, and guarded by the {@link InodeTree}'s lock: only the tree reads or
 * changes inodes, and it hands out immutable {@link FileInfo} snapshots.
 */
abstract class Inode {
  final long id;
  String name;
  InodeDirectory parent;
  final long creationTimeMs;
  long modificationTimeMs;
  final String owner;
  final String group;
  int mode;

  Inode(long id, String name, InodeDirectory parent, long nowMs, String owner, String group, int mode) {
    this.id = id;
    this.name = name;
    this.parent = parent;
    this.creationTimeMs = nowMs;
    this.modificationTimeMs = nowMs;
    this.owner = owner;
    this.group = group;
    this.mode = mode;
  }

  abstract boolean isDirectory();
}
