package io.strata.master.file;

import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import io.strata.master.journal.JournalEntry;
import io.strata.server.ufs.UfsStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Applies what an under file system says to the {@link InodeTree}: paths loaded from the UFS, a persisted
 * inode re-checked against its UFS entry, a directory's UFS listing merged in. The rule throughout: an
 * inode whose data the UFS holds (PERSISTED, and everything under it too) may be replaced or removed by
 * what the UFS says; an inode with data only Strata has is never touched. Each call is one journaled
 * operation under the tree's write lock; the UFS I/O is the caller's ({@link MetadataSync}), done before,
 * outside the lock, and what changed meanwhile is re-checked here.
 *
 * <p>Thread-safe (the tree's lock); stateless itself.
 */
final class UfsMerge {
  /** What a listing merge did: the files it removed, and whether its listing was too old to finish. */
  record Merged(List<Long> removedFiles, boolean stale) {}

  private final InodeTree tree;

  UfsMerge(InodeTree tree) {
    this.tree = tree;
  }

  /** When the inode at path was last compared with the UFS (0: never, -1: no such inode). */
  public long lastUfsSync(StrataPath path) {
    tree.lock.readLock().lock();
    try {
      Inode i = tree.lookup(path);
      return i == null ? -1 : i.lastUfsSyncMs;
    } finally {
      tree.lock.readLock().unlock();
    }
  }

  /** When the directory's UFS listing was last merged in (0: never, -1: no such directory). */
  public long lastListingSync(StrataPath path) {
    tree.lock.readLock().lock();
    try {
      Inode i = tree.lookup(path);
      return i instanceof InodeDirectory d ? d.childrenSyncMs : -1;
    } finally {
      tree.lock.readLock().unlock();
    }
  }

  /** True when the directory's UFS listing has been merged in at least once. */
  public boolean childrenLoaded(StrataPath path) {
    tree.lock.readLock().lock();
    try {
      Inode i = tree.lookup(path);
      return i instanceof InodeDirectory d && d.childrenLoaded;
    } finally {
      tree.lock.readLock().unlock();
    }
  }


  /**
   * Adds what the UFS holds along {@code path}: {@code statuses.get(k)} describes the k-th component at
   * or below the first one the tree lacks ({@code firstMissing} components exist already). Missing
   * directories become PERSISTED directories, a missing file a complete PERSISTED file of
   * {@code blockSize} blocks. One journaled operation; components that appeared meanwhile are kept. The
   * statuses were read when the tree's change sequence was {@code since}: a directory a child left after
   * that may have lost this very path, so nothing is added under it and null is returned (look again).
   */
  public FileInfo addFromUfs(StrataPath path, int firstMissing, List<UfsStatus> statuses, long blockSize,
      long since) throws StrataException {
    List<JournalEntry> entries = new ArrayList<>();
    tree.lock.writeLock().lock();
    try {
      Inode cur = tree.root();
      StrataPath walked = StrataPath.ROOT;
      List<String> parts = path.components();
      for (int k = 0; k < parts.size(); k++) {
        if (!(cur instanceof InodeDirectory dir)) {
          throw new NotFoundException("Path " + path + " does not exist: " + walked + " is a file");
        }
        String part = parts.get(k);
        walked = walked.child(part);
        Inode next = dir.children.get(part);
        if (next == null) {
          int idx = k - firstMissing;
          if (idx < 0 || idx >= statuses.size()) {
            throw new NotFoundException("Path " + path + " does not exist");
          }
          if (dir.removedSeq > since) {
            return null; // the view is stale: the caller looks again
          }
          next = addUfsChild(dir, walked, statuses.get(idx), blockSize, entries);
          keepTime(dir, walked.parent(), entries);
        }
        cur = next;
      }
      return InodeViews.snapshot(cur, path.toString());
    } finally {
      tree.journalAndUnlock(entries);
    }
  }


  /** True when nothing at or under {@code inode} exists only in Strata (so the UFS view may replace it). */
  private static boolean allPersisted(Inode inode) {
    return !anyOf(inode, i -> i instanceof InodeFile f && (f.persistence != PersistenceState.PERSISTED || !f.complete));
  }

  /** True when something at or under {@code inode} changed after change sequence {@code since}. */
  private static boolean changedSince(Inode inode, long since) {
    return anyOf(inode, i -> i.changedSeq > since || (i instanceof InodeDirectory d && d.removedSeq > since));
  }

  private static boolean anyOf(Inode top, java.util.function.Predicate<Inode> test) {
    List<Inode> stack = new ArrayList<>();
    stack.add(top);
    while (!stack.isEmpty()) {
      Inode cur = stack.remove(stack.size() - 1);
      if (test.test(cur)) {
        return true;
      }
      if (cur instanceof InodeDirectory d) {
        stack.addAll(d.children.values());
      }
    }
    return false;
  }

  /** True when the UFS entry no longer matches a persisted inode (type, or a file's length, mtime or fingerprint). */
  private static boolean changed(Inode inode, UfsStatus s) {
    if (inode.isDirectory() != s.directory()) {
      return true;
    }
    if (inode instanceof InodeFile f) {
      return f.length != s.length() || (f.ufsMtimeMs != 0 && s.modificationTimeMs() != 0
          && f.ufsMtimeMs != s.modificationTimeMs()) || UfsStatus.contentTagsDiffer(f.ufsContentTag, s.contentTag());
    }
    return false;
  }

  /**
   * Merges one UFS entry at {@code path} (null: the UFS has nothing there) into the tree: a persisted
   * inode that is gone or changed in the UFS is removed (and a changed one added again as the UFS has it);
   * inodes holding data only Strata has are never touched, nor inodes that changed after change sequence
   * {@code since}, when {@code ufs} was read (the next sync judges them). Returns the ids of files removed.
   */
  public List<Long> syncPath(StrataPath path, UfsStatus ufs, long blockSize, long since) throws StrataException {
    List<JournalEntry> entries = new ArrayList<>();
    List<Long> removed = new ArrayList<>();
    tree.lock.writeLock().lock();
    try {
      Inode inode = tree.lookup(path);
      if (inode == null || inode.parent == null || changedSince(inode, since)) {
        return removed;
      }
      inode.lastUfsSyncMs = tree.now();
      if (ufs != null && !changed(inode, ufs)) {
        return removed;
      }
      if (inode.persistence != PersistenceState.PERSISTED || !allPersisted(inode)) {
        return removed;
      }
      InodeDirectory parent = inode.parent;
      tree.index().removeSubtree(inode, removed);
      parent.children.remove(inode.name);
      tree.index().childLeft(parent);
      entries.add(new JournalEntry.Delete(path.toString(), parent.modificationTimeMs));
      if (ufs != null) {
        addUfsChild(parent, path, ufs, blockSize, entries);
        keepTime(parent, path.parent(), entries);
      }
      return removed;
    } finally {
      tree.journalAndUnlock(entries);
    }
  }

  /**
   * Merges a UFS directory listing ({@code listing} null: the directory is gone from the UFS) into the
   * directory at {@code dir}: adds what Strata lacks, and syncs each persisted child as
   * {@link #syncPath} does. Children that are or hold mount points, or that a related change holds now ({@code keep}),
   * are left alone (removing a mount point would leave a mount without its inode, which could then be neither
   * unmounted nor mounted again); a new name left alone leaves the directory not marked loaded. The listing was
   * taken at change sequence {@code since}: children changed after it are not judged by it, and nothing
   * is added when a child left the directory after it (the listing may still show it); the directory is
   * then not marked loaded, so the next listing looks again. Otherwise it is marked loaded. One journaled
   * operation.
   */
  public Merged mergeListing(StrataPath dir, List<UfsStatus> listing, long blockSize,
      java.util.function.Predicate<StrataPath> keep, long since) throws StrataException {
    List<JournalEntry> entries = new ArrayList<>();
    List<Long> removed = new ArrayList<>();
    tree.lock.writeLock().lock();
    try {
      Inode inode = tree.lookup(dir);
      if (!(inode instanceof InodeDirectory d)) {
        return new Merged(removed, false);
      }
      long now = tree.now();
      boolean stale = false;
      Map<String, UfsStatus> byName = new LinkedHashMap<>();
      if (listing != null) {
        for (UfsStatus s : listing) {
          byName.put(s.name(), s);
        }
      }
      for (Inode child : new ArrayList<>(d.children.values())) {
        StrataPath childPath = dir.child(child.name);
        if (keep.test(childPath)) {
          continue;
        }
        UfsStatus s = byName.remove(child.name);
        child.lastUfsSyncMs = now;
        if (s != null && !changed(child, s)) {
          continue;
        }
        if (child.persistence != PersistenceState.PERSISTED || !allPersisted(child)) {
          continue;
        }
        if (changedSince(child, since)) {
          stale = true;
          continue;
        }
        tree.index().removeSubtree(child, removed);
        d.children.remove(child.name);
        tree.index().childLeft(d);
        entries.add(new JournalEntry.Delete(childPath.toString(), d.modificationTimeMs));
        if (s != null) {
          addUfsChild(d, childPath, s, blockSize, entries);
        }
      }
      for (UfsStatus s : byName.values()) {
        if (d.removedSeq > since) {
          stale = true;
          break;
        }
        StrataPath childPath;
        try {
          childPath = dir.child(s.name());
        } catch (StrataException e) {
          continue; // a UFS name Strata cannot hold (too long, control characters)
        }
        if (!d.children.containsKey(s.name())) {
          if (keep.test(childPath)) {
            stale = true; // left alone for now (a related change is under way): looked at again next listing
            continue;
          }
          addUfsChild(d, childPath, s, blockSize, entries);
        }
      }
      if (!entries.isEmpty()) {
        keepTime(d, dir, entries);
      }
      if (!stale) {
        d.childrenLoaded = true;
        d.childrenSyncMs = now;
      }
      return new Merged(removed, stale);
    } finally {
      tree.journalAndUnlock(entries);
    }
  }

  /**
   * Journals {@code dir}'s modification time as it is, after children loaded from the UFS: loading them does not
   * modify the directory, but replaying a CreateFile or Mkdir sets its parent's time to the entry's, so without this
   * a replayed (or standby) namespace shows another time than the leader's.
   */
  private static void keepTime(InodeDirectory dir, StrataPath dirPath, List<JournalEntry> entries) {
    entries.add(new JournalEntry.DirectoryModified(dirPath.toString(), dir.modificationTimeMs));
  }

  /**
   * Adds a child as the UFS describes it (a PERSISTED directory, or a complete PERSISTED file of
   * {@code blockSize} blocks) under {@code dir}, its entries going to {@code entries}. Write lock held.
   */
  private Inode addUfsChild(InodeDirectory dir, StrataPath path, UfsStatus s, long blockSize,
      List<JournalEntry> entries) {
    InodeIndex index = tree.index();
    long now = tree.now();
    long mtime = s.modificationTimeMs() > 0 ? s.modificationTimeMs() : now;
    Inode child;
    if (s.directory()) {
      InodeDirectory d = new InodeDirectory(index.newId(), path.name(), dir, now, Inode.ownerOrDefault(s.owner()),
          Inode.groupOrDefault(s.group()), s.mode() == 0 ? 0755 : s.mode());
      d.persistence = PersistenceState.PERSISTED;
      index.addDirectory(d);
      entries.add(new JournalEntry.Mkdir(d.id, path.toString(), d.mode, now, PersistenceState.PERSISTED.name(),
          d.owner, d.group));
      child = d;
    } else {
      // Created (for TTLs) when Strata learned of it; modified when the UFS says.
      InodeFile f = new InodeFile(index.newId(), path.name(), dir, now, Inode.ownerOrDefault(s.owner()),
          Inode.groupOrDefault(s.group()), s.mode() == 0 ? 0644 : s.mode(), blockSize);
      f.modificationTimeMs = mtime;
      f.length = s.length();
      f.complete = true;
      f.ufsMtimeMs = s.modificationTimeMs();
      index.contentTag(f, s.contentTag());
      f.persistence = PersistenceState.PERSISTED;
      index.addFile(f);
      entries.add(new JournalEntry.CreateFile(f.id, path.toString(), blockSize, f.mode, now,
          WriteType.MUST_CACHE.name(), f.owner, f.group));
      entries.add(new JournalEntry.CompleteFile(f.id, f.length, mtime, PersistenceState.PERSISTED.name(),
          f.ufsMtimeMs, f.ufsContentTag));
      child = f;
    }
    child.lastUfsSyncMs = now;
    index.stamp(child);
    dir.children.put(path.name(), child);
    if (InodeIndex.isPinned(dir)) {
      index.pinsMayHaveChanged();
    }
    return child;
  }
}
