package io.strata.master.file;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.DirectoryNotEmptyException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.path.StrataPath;
import io.strata.server.ufs.UfsManager;
import io.strata.server.ufs.UnderFileSystem;
import java.io.IOException;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The namespace changes clients make, with their checks and their under file system side: create a file,
 * create a directory (also in the UFS when written through), delete (the UFS copy first) and rename (in
 * the UFS too, within one mount). A UFS change happens before the tree's, outside its lock; what the tree
 * then refuses is undone in the UFS. Each call waits for its journal entries before it returns.
 *
 * <p>Thread-safe: state lives in the tree, the mount table and the block master; the commit lock orders
 * a delete's block removal against commits (see {@link FileSystemMaster}).
 */
final class NamespaceChanges {
  private static final Logger LOG = LoggerFactory.getLogger(NamespaceChanges.class);

  private final InodeTree tree;
  private final MountTable mounts;
  private final MetadataSync sync;
  private final LeaseRecovery leases;
  private final Object commitLock;
  private final Consumer<List<Long>> removeBlocks;
  private final MountOperations.Flush flush;
  private final long maxBlockSize;
  private volatile long minBlockSize = 1;
  /** Deletes and renames of related paths, one at a time (see {@link PathGuard}). */
  private final PathGuard guard;

  /** Deletes and renames waiting for a change of a related path (tests). */
  int changesWaiting() {
    return guard.waiting();
  }

  NamespaceChanges(InodeTree tree, MountTable mounts, MetadataSync sync, LeaseRecovery leases, Object commitLock,
      Consumer<List<Long>> removeBlocks, MountOperations.Flush flush, long maxBlockSize, PathGuard guard) {
    this.guard = guard;
    this.tree = tree;
    this.mounts = mounts;
    this.sync = sync;
    this.leases = leases;
    this.commitLock = commitLock;
    this.removeBlocks = removeBlocks;
    this.flush = flush;
    this.maxBlockSize = maxBlockSize;
  }

  void setMinBlockSize(long bytes) {
    minBlockSize = bytes;
  }

  /** As above, owned by {@code owner} (its group: the same name; "": the default owner, strata). */
  FileInfo createFile(String path, long blockSize, boolean recursive, int mode, WriteType writeType,
      String clientId, String owner) throws StrataException {
    FileInfo f = createFileUnflushed(path, blockSize, recursive, mode, writeType, clientId, owner);
    flush.run();
    return f;
  }

  /** {@link #createFile} without waiting for its journal entries: the caller flushes before it answers. */
  FileInfo createFileUnflushed(String path, long blockSize, boolean recursive, int mode, WriteType writeType,
      String clientId, String owner) throws StrataException {
    StrataPath p = StrataPath.of(path);
    if (!p.isRoot()) {
      UfsTempNames.refuseUserName(path, p.name());
    }
    if (blockSize <= 0) {
      throw new InvalidArgumentException("Cannot create " + path + ": block size " + blockSize
          + " must be positive");
    }
    if (blockSize < minBlockSize) {
      throw new InvalidArgumentException("Cannot create " + path + ": block size " + blockSize
          + " is smaller than the limit " + minBlockSize + " (strata.master.block.size.min): each block costs a "
          + "master call and a worker block, so tiny blocks make reads and writes crawl");
    }
    if (blockSize > maxBlockSize) {
      throw new InvalidArgumentException("Cannot create " + path + ": block size " + blockSize
          + " is larger than the limit " + maxBlockSize + " (strata.master.block.size.max)");
    }
    if (mode < 0 || mode > 07777) {
      throw new InvalidArgumentException("Cannot create " + path + ": mode " + Integer.toOctalString(mode)
          + " is not a permission mode (0 to 07777)");
    }
    Names.check("owner", owner == null || owner.isEmpty() ? null : owner, "Cannot create " + path);
    Names.check("client id", clientId == null || clientId.isEmpty() ? null : clientId, "Cannot create " + path);
    if (!p.isRoot()) {
      mounts.checkWritable(p, "create");
      if (writeType != WriteType.MUST_CACHE) {
        mounts.requireUfs(p, "create with write type " + writeType);
      }
      // A path the UFS holds but Strata has not loaded yet exists: load it (and its parent) first.
      sync.ensure(p.parent(), -1);
      sync.ensure(p, -1);
    }
    FileInfo f = tree.createFile(p, blockSize, recursive, mode, writeType, owner);
    leases.created(clientId, f.id());
    return f;
  }

  /** As above, owned by {@code owner} (as for {@code createFile}). */
  FileInfo createDirectory(String path, boolean recursive, boolean allowExists, int mode, WriteType writeType,
      String owner) throws StrataException {
    StrataPath p = StrataPath.of(path);
    Names.check("owner", owner == null || owner.isEmpty() ? null : owner, "Cannot create directory " + path);
    PersistenceState state = PersistenceState.NOT_PERSISTED;
    UfsDirsCreated madeInUfs = null;
    if (!p.isRoot()) {
      UfsTempNames.refuseUserName(path, p.name());
      mounts.checkWritable(p, "create directory");
      sync.ensure(p.parent(), -1);
      sync.ensure(p, -1);
      if (writeType.writesUfs() && tree.lookupOrNull(p) == null) {
        MountTable.Resolution r = mounts.requireUfs(p, "create directory with write type " + writeType);
        // Refused in Strata before anything is made in the UFS; undone there if the tree refuses after all.
        tree.checkParent(p, recursive, "create directory");
        try {
          madeInUfs = UfsDirsCreated.mkdirs(sync.client(r), r.ufsUri());
        } catch (StrataException e) {
          throw e;
        } catch (IOException e) {
          throw MetadataSync.unavailable(r, e);
        }
        state = PersistenceState.PERSISTED;
      }
    }
    FileInfo f;
    try {
      f = tree.createDirectory(p, recursive, allowExists, mode, state, List.of(), owner);
    } catch (StrataException e) {
      if (madeInUfs != null) {
        madeInUfs.undo();
      }
      throw e;
    }
    flush.run();
    return f;
  }

  /** As above; a non-zero {@code fileId} deletes only while the path is still that file. */
  void delete(String path, boolean recursive, boolean strataOnly, long fileId) throws StrataException {
    StrataPath p = StrataPath.of(path);
    try (PathGuard.Held held = p.isRoot() ? () -> { } : guard.hold("Deleting " + path, p)) {
      deleteHeld(p, path, recursive, strataOnly, fileId);
    }
    flush.run();
  }

  /** {@link #delete}'s work, with its path held in {@link #guard}: from its UFS delete to its tree change. */
  private void deleteHeld(StrataPath p, String path, boolean recursive, boolean strataOnly, long fileId)
      throws StrataException {
    if (!p.isRoot()) {
      for (MountTable.MountInfo m : mounts.mountsAtOrUnder(p)) {
        throw new FailedPreconditionException("Cannot delete " + path + ": " + (m.path().equals(p.toString())
            ? "it is a mount point" : m.path() + " inside it is a mount point") + "; unmount it instead");
      }
      sync.ensure(p, -1);
      FileInfo f = tree.getStatus(p);
      if (fileId != 0 && f.id() != fileId) {
        throw new FailedPreconditionException("Cannot delete " + path + ": it is no longer inode " + fileId
            + " (now " + f.id() + ")"); // checked before the UFS copy goes, as the tree checks it after
      }
      if (f.directory() && f.childCount() > 0 && !recursive) {
        throw new DirectoryNotEmptyException("Cannot delete " + path + ": the directory is not empty ("
            + f.childCount() + " entries) and the delete is not recursive");
      }
      MountTable.Resolution r = mounts.resolve(p);
      // A file the UFS does not hold (not persisted) has nothing there to delete; a directory may.
      if (!strataOnly && r != null && (f.directory() || f.persisted())) {
        mounts.checkWritable(p, "delete");
        try {
          sync.client(r).delete(r.ufsUri(), recursive);
        } catch (IOException e) {
          throw new FailedPreconditionException("Cannot delete " + path + ": the under file system refused to "
              + "delete " + r.ufsUri() + ": " + e.getMessage(), e);
        }
      }
    }
    // Under the commit lock, so a commit that already found the file cannot add a block after its
    // blocks were removed.
    synchronized (commitLock) {
      removeBlocks.accept(tree.delete(p, recursive, List.of(), fileId));
    }
  }

  /** Renames in Strata and, when the source exists in the UFS, there too (within one mount only). */
  void rename(String src, String dst) throws StrataException {
    StrataPath s = StrataPath.of(src);
    StrataPath d = StrataPath.of(dst);
    try (PathGuard.Held held = s.isRoot() || d.isRoot() ? () -> { }
        : guard.hold("Renaming " + src + " to " + dst, s, d)) {
      renameHeld(s, d, src, dst);
    }
    flush.run();
  }

  /** {@link #rename}'s work, with both paths held in {@link #guard}: from its UFS rename to its tree change. */
  private void renameHeld(StrataPath s, StrataPath d, String src, String dst) throws StrataException {
    if (!d.isRoot()) {
      UfsTempNames.refuseUserName(dst, d.name());
    }
    if (!s.isRoot() && !d.isRoot()) {
      for (MountTable.MountInfo m : mounts.mountsAtOrUnder(s)) {
        throw new FailedPreconditionException("Cannot rename " + src + ": " + (m.path().equals(s.toString())
            ? "it is a mount point" : m.path() + " inside it is a mount point"));
      }
      sync.ensure(s, -1);
      sync.ensure(d.parent(), -1);
      sync.ensure(d, -1);
    }
    // Refused in Strata before anything moves in the UFS (a missing destination parent used to be made
    // there first); what the UFS rename needed is undone if the tree refuses after all.
    tree.checkRename(s, d);
    MountTable.Resolution rs = s.isRoot() ? null : mounts.resolve(s);
    MountTable.Resolution rd = d.isRoot() ? null : mounts.resolve(d);
    boolean movedInUfs = false;
    UfsDirsCreated madeInUfs = null;
    FileInfo source = s.isRoot() ? null : tree.lookupOrNull(s);
    // Only what the UFS may hold moves there: a directory, or a persisted file.
    if (rs != null && rd != null && source != null && (source.directory() || source.persisted())
        && tree.lookupOrNull(d) == null && !d.isUnder(s)) {
      if (!rs.mount().path().equals(rd.mount().path())) {
        throw new FailedPreconditionException("Cannot rename " + src + " to " + dst + ": they are in different "
            + "mounts (" + rs.mount().path() + " and " + rd.mount().path() + ")");
      }
      mounts.checkWritable(s, "rename");
      UnderFileSystem u = sync.client(rs);
      try {
        if (u.getStatus(rs.ufsUri()) != null) {
          if (u.getStatus(rd.ufsUri()) != null) {
            throw new AlreadyExistsException("Cannot rename " + src + " to " + dst + ": " + rd.ufsUri()
                + " exists in the under file system");
          }
          madeInUfs = UfsDirsCreated.mkdirs(u, UfsManager.parent(rd.ufsUri()));
          if (!u.rename(rs.ufsUri(), rd.ufsUri())) {
            madeInUfs.undo();
            throw new UnavailableException("Cannot rename " + rs.ufsUri() + " to " + rd.ufsUri()
                + " in the under file system");
          }
          movedInUfs = true;
        }
      } catch (StrataException e) {
        throw e;
      } catch (IOException e) {
        throw MetadataSync.unavailable(rs, e);
      }
    }
    try {
      tree.rename(s, d);
    } catch (StrataException e) {
      if (movedInUfs) {
        try {
          sync.client(rs).rename(rd.ufsUri(), rs.ufsUri());
        } catch (IOException undo) {
          LOG.error("Renaming {} back to {} after a failed rename failed: {}", rd.ufsUri(), rs.ufsUri(), undo.toString());
        }
        madeInUfs.undo();
      }
      throw e;
    }
  }
}
