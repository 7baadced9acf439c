package io.strata.master.file;

import java.util.TreeMap;

/** A directory: children by name, in name order so listings page by name. Guarded by the tree's lock. */
final class InodeDirectory extends Inode {
  final TreeMap<String, Inode> children = new TreeMap<>();
  /** True once the UFS listing of this directory was merged in (not journaled: a restart lists it again). */
  boolean childrenLoaded;
  /** When the UFS listing was last merged in (not journaled). */
  long childrenSyncMs;
  /** The tree's change sequence when a child last left (deleted or renamed away); not journaled. */
  long removedSeq;

  InodeDirectory(long id, String name, InodeDirectory parent, long nowMs, String owner, String group, int mode) {
    super(id, name, parent, nowMs, owner, group, mode);
  }

  @Override
  boolean isDirectory() {
    return true;
  }
}
