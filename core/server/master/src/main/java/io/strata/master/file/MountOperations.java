package io.strata.master.file;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.PermissionDeniedException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.path.StrataPath;
import io.strata.master.journal.JournalEntry;
import io.strata.server.ufs.UfsManager;
import io.strata.server.ufs.UfsStatus;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mounting and unmounting under file systems: the rules a mount point and its UFS must meet (the
 * {@link MountGuard}'s, then those checked against the tree, the mount table and the UFS itself), then
 * one journaled operation that creates the mount point and records the mount (or deletes what Strata
 * holds under it and the mount). The file system master owns it and delegates to it.
 *
 * <p>Thread-safe: the tree and the mount table are; the commit lock orders an unmount against block
 * commits, as a delete does.
 */
final class MountOperations {
  private static final Logger LOG = LoggerFactory.getLogger(MountOperations.class);

  /** Makes the journal's appended entries durable (the master's flush). */
  @FunctionalInterface
  interface Flush {
    void run() throws StrataException;
  }

  /** Persisted files whose PERSISTED entry is not durable yet: their blocks are not let go of. */
  private final PersistedUnflushed unflushed;
  private final InodeTree tree;
  private final MountTable mounts;
  private final MetadataSync sync;
  private final UfsConfig conf;
  private final Object commitLock;
  private final Consumer<List<Long>> removeBlocks;
  private final Flush flush;
  /** The storage dirs registered workers reported (a mount may not overlap them). */
  private final Supplier<List<String>> workerDirs;
  private volatile MountGuard guard = MountGuard.NONE;

  MountOperations(InodeTree tree, MountTable mounts, MetadataSync sync, UfsConfig conf, Object commitLock,
      Consumer<List<Long>> removeBlocks, Flush flush, Supplier<List<String>> workerDirs,
      PersistedUnflushed unflushed) {
    this.unflushed = unflushed;
    this.tree = tree;
    this.mounts = mounts;
    this.sync = sync;
    this.conf = conf;
    this.commitLock = commitLock;
    this.removeBlocks = removeBlocks;
    this.flush = flush;
    this.workerDirs = workerDirs;
  }

  /** The rules a mount must meet beyond the namespace's (Strata's own dirs, unsafe options). */
  void setGuard(MountGuard guard) {
    this.guard = guard;
  }

  /**
   * Mounts {@code ufsUri} at {@code path}: its name must not be one of Strata's temporary UFS names, and the
   * {@link MountGuard}'s rules come first; the path must not be a mount point already nor hold anything
   * but an empty directory; its parent must exist; the UFS must be reachable, an existing directory, and
   * overlap no other mount's UFS.
   */
  void mount(String path, String ufsUri, boolean readOnly, boolean shared, Map<String, String> options)
      throws StrataException {
    StrataPath p = StrataPath.of(path);
    if (!p.isRoot()) {
      UfsTempNames.refuseUserName(path, p.name());
    }
    if (conf == null) {
      throw new FailedPreconditionException("Cannot mount at " + path + ": this master has no under file systems");
    }
    guard.checkMount(path, ufsUri, UfsManager.normalize(ufsUri, conf.home()), options, workerDirs.get());
    if (p.isRoot()) {
      throw new InvalidArgumentException("Cannot mount at /: the root mount comes from "
          + "strata.master.mount.table.root.ufs");
    }
    String uri = UfsManager.normalize(ufsUri, conf.home());
    if (!conf.allowedMountUris().isEmpty()
        && conf.allowedMountUris().stream().noneMatch(allowed -> allowedUnder(uri, allowed))) {
      throw new PermissionDeniedException("Cannot mount " + uri + " at " + path + ": mounts are limited to "
          + conf.allowedMountUris() + " (strata.master.mount.allowed.uris)");
    }
    checkNotMounted(p, uri, path);
    sync.ensure(p.parent(), -1);
    FileInfo parent = tree.lookupOrNull(p.parent());
    if (parent == null) {
      throw new NotFoundException("Cannot mount at " + path + ": parent directory " + p.parent() + " does not exist");
    }
    if (!parent.directory()) {
      throw new FailedPreconditionException("Cannot mount at " + path + ": " + p.parent() + " is a file");
    }
    sync.ensure(p, -1);
    FileInfo existing = tree.lookupOrNull(p);
    if (existing != null) {
      sync.syncDirectory(p, -1);
      existing = tree.lookupOrNull(p);
      if (existing != null && (!existing.directory() || existing.childCount() > 0)) {
        throw new FailedPreconditionException("Cannot mount at " + path + ": it exists and is not an empty "
            + "directory (" + (existing.directory() ? existing.childCount() + " entries" : "a file") + ")");
      }
    }
    checkUfsDirectory(uri, options);
    JournalEntry.AddMount entry = new JournalEntry.AddMount(p.toString(), uri, readOnly, shared, options);
    synchronized (commitLock) {
      // Under the commit lock, which a checkpoint holds while it reads the tree and the mount table: the journaled
      // AddMount and the table's entry are never seen apart (a checkpoint between them dropped the mount). And
      // checked again here, so two mounts at once of one path, or of overlapping dirs, cannot both pass.
      checkNotMounted(p, uri, path);
      tree.createMountPoint(p, List.of(entry)); // refuses a directory filled while the UFS was probed
      mounts.add(new MountTable.MountInfo(p.toString(), uri, readOnly, shared, options));
    }
    flush.run();
    LOG.info("Mounted {} at {} (read-only {}, shared {})", uri, path, readOnly, shared);
  }

  /**
   * Whether {@code uri} lies under the allowed root {@code allowed}: as URIs, and for local dirs also as real paths, so
   * a symbolic link inside an allowed dir does not lead a mount out of it.
   */
  private static boolean allowedUnder(String uri, String allowed) {
    if (!UfsManager.isUnder(uri, allowed)) {
      return false;
    }
    if (!uri.startsWith("file:") || !allowed.startsWith("file:")) {
      return true;
    }
    try {
      return MountGuard.real(java.nio.file.Path.of(java.net.URI.create(uri)))
          .startsWith(MountGuard.real(java.nio.file.Path.of(java.net.URI.create(allowed))));
    } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException e) {
      return false; // not a local path this check can read: not allowed
    }
  }

  /** Refuses a mount at a mount point, or of a UFS dir that overlaps a mounted one. */
  private void checkNotMounted(StrataPath p, String uri, String path) throws StrataException {
    MountTable.MountInfo existingMount = mounts.get(p.toString());
    if (existingMount != null) {
      throw new AlreadyExistsException("Cannot mount " + uri + " at " + path + ": " + path + " is already the mount "
          + "point of " + existingMount.ufsUri());
    }
    MountTable.MountInfo overlap = mounts.overlapping(uri);
    if (overlap != null) {
      throw new FailedPreconditionException("Cannot mount " + uri + " at " + path + ": it overlaps " + overlap.ufsUri()
          + ", mounted at " + overlap.path() + " (a UFS dir may be mounted once, and not inside another mount)");
    }
  }

  /** The UFS at {@code uri} answers, within the mount check timeout, that it is a directory. */
  private void checkUfsDirectory(String uri, Map<String, String> options) throws StrataException {
    boolean wasOpen = conf.manager().isOpen(uri, options);
    UfsStatus s;
    try {
      // Its own pool and a timeout that stops it; a client opened for a refused probe is closed.
      s = conf.manager().probe(uri, options, conf.mountCheckTimeout());
    } catch (java.io.InterruptedIOException e) {
      throw new UnavailableException("Cannot mount " + uri + ": " + e.getMessage() + " ("
          + "strata.master.mount.check.timeout)");
    } catch (StrataException e) {
      throw e;
    } catch (IOException e) {
      throw new UnavailableException("Cannot mount " + uri + ": the under file system is unreachable or refused: "
          + e, e);
    }
    if ((s == null || !s.directory()) && !wasOpen) {
      conf.manager().discard(uri, options); // a refused mount keeps no client
    }
    if (s == null) {
      // Not NotFound: that names the Strata path (its parent missing), where this is the UFS side's state.
      throw new FailedPreconditionException("Cannot mount " + uri + ": it does not exist in the under file system");
    }
    if (!s.directory()) {
      throw new FailedPreconditionException("Cannot mount " + uri + ": it is a file, not a directory");
    }
  }

  /**
   * Removes the mount at {@code path} and what Strata holds under it (the UFS keeps its data). Refused,
   * changing nothing, while a file under it is being written or not persisted: its blocks are then the only
   * copy of its bytes (as free refuses); persist or delete such files first.
   */
  void unmount(String path) throws StrataException {
    StrataPath p = StrataPath.of(path);
    if (p.isRoot()) {
      throw new InvalidArgumentException("Cannot unmount /: the root mount comes from the configuration");
    }
    if (!mounts.isMountPoint(p.toString())) {
      throw new FailedPreconditionException("Cannot unmount " + path + ": it is not a mount point");
    }
    for (MountTable.MountInfo m : mounts.mountsAtOrUnder(p)) {
      if (!m.path().equals(p.toString())) {
        throw new FailedPreconditionException("Cannot unmount " + path + ": " + m.path()
            + " is mounted inside it; unmount that first");
      }
    }
    synchronized (commitLock) {
      // Checked under the tree's lock with the delete (and the commit lock, so no block commit slips in between): a
      // file created under the mount or renamed into it meanwhile is checked too, never deleted unchecked.
      List<Long> removed = tree.delete(p, true, List.of(new JournalEntry.DeleteMount(p.toString())), f -> {
        if (!f.complete() || !unflushed.persisted(f)) {
          throw new FailedPreconditionException("Cannot unmount " + path + ": " + f.path() + " is "
              + (f.complete() ? f.persistence() : "being written") + ", so Strata holds the only copy of its bytes; "
              + "persist it (fs persist) or delete it first");
        }
      });
      removeBlocks.accept(removed);
      mounts.remove(p.toString());
    }
    flush.run();
    LOG.info("Unmounted {}", path);
  }
}
