package io.strata.master.file;

import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import java.util.ArrayList;
import java.util.List;

/**
 * Views of inodes for the world outside the tree: an inode's path, its immutable {@link FileInfo}
 * snapshot, and child paths.
 *
 * <p>Stateless; callers hold the tree's lock while they read the inodes they pass.
 */
final class InodeViews {
  private InodeViews() {}

  /** The path of {@code inode}, walked up to the root. */
  static String pathOf(Inode inode) {
    if (inode.parent == null) {
      return "/";
    }
    StringBuilder sb = new StringBuilder();
    List<String> parts = new ArrayList<>();
    for (Inode i = inode; i.parent != null; i = i.parent) {
      parts.add(i.name);
    }
    for (int i = parts.size() - 1; i >= 0; i--) {
      sb.append('/').append(parts.get(i));
    }
    return sb.toString();
  }

  /** The immutable snapshot of {@code inode}, found at {@code path}. */
  static FileInfo snapshot(Inode inode, String path) {
    if (inode instanceof InodeDirectory) {
      InodeDirectory d = (InodeDirectory) inode;
      return new FileInfo(d.id, path, d.name, true, 0, 0, true, d.creationTimeMs, d.modificationTimeMs,
          d.owner, d.group, d.mode, d.children.size(), d.persistence, WriteType.MUST_CACHE, d.pinned, d.ttlMs,
          d.ttlAction, 0, "", false, d.accessTimeMs);
    }
    InodeFile f = (InodeFile) inode;
    return new FileInfo(f.id, path, f.name, false, f.length, f.blockSize, f.complete, f.creationTimeMs,
        f.modificationTimeMs, f.owner, f.group, f.mode, 0, f.persistence, f.writeType, f.pinned, f.ttlMs,
        f.ttlAction, f.ufsMtimeMs, "", false, f.accessTimeMs, f.ufsContentTag);
  }

  static String childPath(String parent, String name) {
    return parent.equals("/") ? "/" + name : parent + "/" + name;
  }

  static StrataPath childOf(StrataPath p, String name) {
    try {
      return p.child(name);
    } catch (StrataException e) {
      throw new IllegalStateException("A name in the tree is not a valid path component: " + name, e);
    }
  }
}
