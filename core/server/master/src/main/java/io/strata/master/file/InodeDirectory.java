package io.strata.master.file;

import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
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

  /** The inode at {@code path} below this directory (the root's descendants by their paths), or null. */
  Inode find(StrataPath path) {
    Inode cur = this;
    for (String part : path.components()) {
      if (!(cur instanceof InodeDirectory)) {
        return null;
      }
      cur = ((InodeDirectory) cur).children.get(part);
      if (cur == null) {
        return null;
      }
    }
    return cur;
  }

  /** As {@link #find}, but a missing path is a {@link NotFoundException} saying what was missing. */
  Inode require(StrataPath path) throws StrataException {
    Inode cur = this;
    StrataPath walked = StrataPath.ROOT;
    for (String part : path.components()) {
      if (!(cur instanceof InodeDirectory)) {
        throw new NotFoundException("Path " + path + " does not exist: " + walked + " is a file");
      }
      cur = ((InodeDirectory) cur).children.get(part);
      if (cur == null) {
        throw new NotFoundException("Path " + path + " does not exist");
      }
      walked = walked.child(part);
    }
    return cur;
  }
}
