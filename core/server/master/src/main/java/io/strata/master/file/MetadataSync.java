package io.strata.master.file;

import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.path.StrataPath;
import io.strata.server.ufs.UfsManager;
import io.strata.server.ufs.UfsStatus;
import io.strata.server.ufs.UnderFileSystem;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Brings the under file system's view into the namespace: a path Strata lacks is looked up in the UFS and
 * loaded on first access (getStatus, listStatus, create); a directory's UFS listing is merged in once,
 * and again whenever the caller's sync interval says the last look is too old (0: every call; -1: never
 * re-check what is loaded). Only inodes whose data the UFS holds (PERSISTED) are ever replaced or removed
 * by what the UFS says; data only Strata has is never touched.
 *
 * <p>UFS I/O happens here, outside the tree's lock; the tree applies each result atomically and re-checks
 * what changed meanwhile. A path related to one a delete, rename or placement holds in the {@link PathGuard} (its
 * UFS call under way: an object store's rename copies for a long time) is neither loaded, judged nor removed: the UFS
 * shows it half-changed. Its directory is then not marked loaded, so the next listing looks again. Thread-safe.
 */
final class MetadataSync {
  private final InodeTree tree;
  private final UfsMerge merge;
  private final MountTable mounts;
  private final UfsManager ufs;
  private final Clock clock;
  private final long blockSize;
  private final Consumer<List<Long>> filesRemoved;
  /** {@code FileSystemMaster}'s commit lock, taken around removals (lock order: it, then the tree's). */
  private final Object commitLock;
  /** Asked (its monitor a leaf, taken under the tree's lock too) whether a change of a related path is under way. */
  private final PathGuard guard;

  MetadataSync(InodeTree tree, MountTable mounts, UfsManager ufs, Clock clock, long blockSize,
      Object commitLock, Consumer<List<Long>> filesRemoved, PathGuard guard) {
    this.commitLock = commitLock;
    this.guard = guard;
    this.tree = tree;
    this.merge = new UfsMerge(tree);
    this.mounts = mounts;
    this.ufs = ufs;
    this.clock = clock;
    this.blockSize = blockSize;
    this.filesRemoved = filesRemoved;
  }

  /**
   * The UFS client for a resolved path, for the master's short calls only (a status, a listing, a mkdir, a rename, a
   * delete, an empty create closed at once): each runs right after this get, which marks the client used, so
   * {@link UfsManager} closes it to make room no sooner than strata.ufs.client.idle.timeout (10 min) later. A stream
   * kept open would need {@link UfsManager#acquire}.
   */
  UnderFileSystem client(MountTable.Resolution r) throws UnavailableException {
    try {
      return ufs.get(r.ufsUri(), r.mount().options());
    } catch (IOException e) {
      throw new UnavailableException("The under file system " + r.mount().ufsUri() + " (mounted at "
          + r.mount().path() + ") cannot be opened: " + e.getMessage(), e);
    }
  }

  /** The UFS status at a resolved path, or null. */
  UfsStatus status(MountTable.Resolution r) throws UnavailableException {
    try {
      return client(r).getStatus(r.ufsUri());
    } catch (IOException e) {
      throw unavailable(r, e);
    }
  }

  static UnavailableException unavailable(MountTable.Resolution r, IOException e) {
    return new UnavailableException("The under file system at " + r.ufsUri() + " failed: " + e.getMessage(), e);
  }

  /**
   * Makes the tree's view of {@code path} current: loads it from the UFS when Strata lacks it, or re-checks
   * it when it is persisted and its last check is older than {@code intervalMs} (negative: never).
   */
  void ensure(StrataPath path, long intervalMs) throws StrataException {
    if (mounts.isEmpty()) {
      return;
    }
    FileInfo existing = tree.lookupOrNull(path);
    if (existing == null) {
      load(path);
      return;
    }
    // A path that is or holds a mount point is never synced away (its UFS is not where the mount's files are).
    if (intervalMs < 0 || path.isRoot() || !mounts.mountsAtOrUnder(path).isEmpty() || !existing.persisted()
        || guard.busy(path)) {
      return;
    }
    if (intervalMs > 0 && clock.millis() - merge.lastUfsSync(path) < intervalMs) {
      return;
    }
    MountTable.Resolution r = mounts.resolve(path);
    if (r == null) {
      return;
    }
    long since = tree.changeSeq();
    UfsStatus seen = visible(status(r)); // the UFS call: no lock held
    // Under the commit lock, as a delete: a commit that found the file cannot add a block after its removal.
    synchronized (commitLock) {
      filesRemoved.accept(merge.syncPath(path, seen, blockSize, since));
    }
  }

  private static UfsStatus visible(UfsStatus s) {
    return s == null || UfsTempNames.isTemp(s.name()) ? null : s;
  }

  /** Loads {@code path} and its missing parents from the UFS; does nothing when the UFS lacks it. */
  /** Tries to look again when a UFS view turned out older than a change it could have missed. */
  private static final int STALE_RETRIES = 3;

  private void load(StrataPath path) throws StrataException {
    for (int attempt = 0; attempt < STALE_RETRIES && !loadOnce(path); attempt++) {
      // a delete or rename raced the UFS look: look again
    }
  }

  /** False when the UFS view was stale and nothing was applied. */
  private boolean loadOnce(StrataPath path) throws StrataException {
    long since = tree.changeSeq();
    FileInfo deepest = tree.deepestExisting(path);
    if (!deepest.directory()) {
      return true;
    }
    MountTable.Resolution target = mounts.resolve(path);
    if (target == null || UfsTempNames.isTemp(path.name()) || guard.busy(path)) {
      return true; // nothing to load, or not now: a rename or delete of a related path is moving it in the UFS
    }
    UfsStatus leaf = status(target);
    if (leaf == null) {
      return true;
    }
    int firstMissing = StrataPath.of(deepest.path()).depth();
    List<UfsStatus> statuses = new ArrayList<>();
    StrataPath p = StrataPath.ROOT;
    List<String> parts = path.components();
    for (int k = 0; k < parts.size() - 1; k++) {
      p = p.child(parts.get(k));
      if (k < firstMissing) {
        continue;
      }
      MountTable.Resolution r = mounts.resolve(p);
      UfsStatus s = r == null ? null : status(r);
      if (s == null || !s.directory()) {
        return true;
      }
      statuses.add(s);
    }
    statuses.add(leaf);
    try {
      return merge.addFromUfs(path, firstMissing, statuses, blockSize, since) != null;
    } catch (io.strata.common.exception.NotFoundException e) {
      return true; // a parent turned into a file meanwhile: nothing to load
    }
  }

  /**
   * Merges the UFS listing of directory {@code dir} when it was never merged, or when the last merge is
   * older than {@code intervalMs} (0: always; negative: only the first time).
   */
  void syncDirectory(StrataPath dir, long intervalMs) throws StrataException {
    for (int attempt = 0; attempt < STALE_RETRIES; attempt++) {
      if (syncDirectoryOnce(dir, intervalMs)) {
        return;
      }
    }
  }

  /** False when the listing was stale (a child left meanwhile) and the merge should be tried again. */
  private boolean syncDirectoryOnce(StrataPath dir, long intervalMs) throws StrataException {
    if (mounts.isEmpty()) {
      return true;
    }
    if (merge.childrenLoaded(dir)) {
      if (intervalMs < 0) {
        return true;
      }
      if (intervalMs > 0 && clock.millis() - merge.lastListingSync(dir) < intervalMs) {
        return true;
      }
    }
    FileInfo d = tree.lookupOrNull(dir);
    if (d == null || !d.directory()) {
      return true;
    }
    MountTable.Resolution r = mounts.resolve(dir);
    if (r == null) {
      return true;
    }
    long since = tree.changeSeq();
    List<UfsStatus> listing;
    try {
      listing = client(r).listStatus(r.ufsUri());
    } catch (IOException e) {
      throw unavailable(r, e);
    }
    if (listing != null) {
      listing.removeIf(s -> UfsTempNames.isTemp(s.name()));
    }
    UfsMerge.Merged merged;
    synchronized (commitLock) { // as above: the files the listing no longer has go with their blocks
      merged = merge.mergeListing(dir, listing, blockSize,
          p -> !mounts.mountsAtOrUnder(p).isEmpty() || guard.busy(p), since);
      filesRemoved.accept(merged.removedFiles());
    }
    return !merged.stale();
  }
}
