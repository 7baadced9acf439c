package io.strata.master.file;

import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import io.strata.master.journal.JournalEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The namespace's reads: every query of the tree and its index, each under the shared side of
 * {@link #lock}, answering immutable {@link FileInfo} snapshots. {@link InodeTree} adds the changes (under
 * the exclusive side, journaled); this half holds the state both share (the root, the index and the lock)
 * so that a reader of the namespace's queries need not read its changes.
 *
 * <p>Thread-safe.
 */
abstract class InodeTreeReads {
  /**
   * Guards every inode and the {@link InodeIndex}; {@link UfsMerge} takes it too. The master's lock order
   * (docs/ARCHITECTURE.md, "Concurrency"), outermost first: MasterProcess monitor, FileSystemMaster's
   * commit lock, this lock, the BlockMaster monitor, then the leaves (MountTable, PersistScheduler,
   * LeaseManager, RequestIdTable, Journal monitors). Never held across a UFS call, an RPC or a wait for
   * the journal: changes append their entries under it and the caller waits for them after releasing it.
   */
  final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  /** Ids, counts, the persist queue, pins, TTLs and the change sequence; under {@link #lock}. */
  final InodeIndex index;

  final InodeDirectory root;
  /** The walks under way ({@link SubtreeWalk}): a rename tells each before it moves an inode. */
  final java.util.Set<SubtreeWalk> walks = java.util.concurrent.ConcurrentHashMap.newKeySet();

  InodeTreeReads(InodeDirectory root, long nowMs) {
    this.root = root;
    this.index = new InodeIndex(root, nowMs);
  }

  /** {@code query} under the shared lock. */
  final <T> T read(java.util.function.Supplier<T> query) {
    lock.readLock().lock();
    try {
      return query.get();
    } finally {
      lock.readLock().unlock();
    }
  }

  // ---- lookups (lock held by caller) ----

  Inode lookup(StrataPath path) {
    return root.find(path);
  }

  Inode require(StrataPath path) throws StrataException {
    return root.require(path);
  }

  public FileInfo getStatus(StrataPath path) throws StrataException {
    lock.readLock().lock();
    try {
      return InodeViews.snapshot(require(path), path.toString());
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The file with this id, or null. */
  public FileInfo getFile(long fileId) {
    lock.readLock().lock();
    try {
      InodeFile f = index.file(fileId);
      return f == null ? null : InodeViews.snapshot(f, InodeViews.pathOf(f));
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Whether file {@code fileId} still exists at {@code path} (not deleted, not moved). */
  public boolean isFileAt(long fileId, String path) {
    FileInfo f = getFile(fileId);
    return f != null && f.path().equals(path);
  }

  public boolean exists(StrataPath path) {
    return read(() -> lookup(path) != null);
  }

  /**
   * Up to {@code limit} children of a directory whose names sort after {@code startAfter} (null: from the
   * first). For a file, the file itself (when startAfter is null). Each call holds the lock only for its
   * batch, so a huge directory is listed in pages without blocking writers for long.
   */
  public List<FileInfo> listBatch(StrataPath path, String startAfter, int limit) throws StrataException {
    lock.readLock().lock();
    try {
      Inode inode = require(path);
      if (!inode.isDirectory()) {
        return startAfter == null ? List.of(InodeViews.snapshot(inode, path.toString())) : List.of();
      }
      InodeDirectory dir = (InodeDirectory) inode;
      Map<String, Inode> tail = startAfter == null ? dir.children : dir.children.tailMap(startAfter, false);
      List<FileInfo> out = new ArrayList<>(Math.min(limit, tail.size()));
      String base = path.toString();
      for (Inode child : tail.values()) {
        if (out.size() >= limit) {
          break;
        }
        out.add(InodeViews.snapshot(child, InodeViews.childPath(base, child.name)));
      }
      return out;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * The children of the directory at {@code path} when they are at most {@code limit}, without waiting:
   * null when a writer holds the lock right now, the path is missing or no directory, it has more
   * children, or ({@code requireLoaded}) its under file system children were never merged in. For
   * answering a small listing on a transport thread.
   */
  public List<FileInfo> listSmallIfFree(StrataPath path, int limit, boolean requireLoaded) {
    if (!lock.readLock().tryLock()) {
      return null;
    }
    try {
      Inode inode = lookup(path);
      if (!(inode instanceof InodeDirectory dir) || dir.children.size() > limit
          || (requireLoaded && !dir.childrenLoaded)) {
        return null;
      }
      List<FileInfo> out = new ArrayList<>(dir.children.size());
      String base = path.toString();
      for (Inode child : dir.children.values()) {
        out.add(InodeViews.snapshot(child, InodeViews.childPath(base, child.name)));
      }
      return out;
    } finally {
      lock.readLock().unlock();
    }
  }

  public long fileCount() {
    return read(() -> index.fileCount());
  }

  public long directoryCount() {
    return read(() -> index.directoryCount());
  }

  /** Ids of complete files waiting to be persisted. */
  public List<Long> filesToPersist() {
    return read(() -> index.filesToPersist());
  }

  /** See {@link InodeIndex#filesToPersistAfter}: the persist queue a batch at a time. */
  public List<Long> filesToPersistAfter(long afterId, int limit) {
    return read(() -> index.filesToPersistAfter(afterId, limit));
  }

  /** Which of {@code ids} are files waiting to be persisted. */
  public java.util.Set<Long> toPersistAmong(java.util.Collection<Long> ids) {
    return read(() -> index.toPersistAmong(ids));
  }

  /** Ids of incomplete files (a new leader gives each a write lease). Scans every file. */
  public List<Long> incompleteFileIds() {
    lock.readLock().lock();
    try {
      List<Long> out = new ArrayList<>();
      for (InodeFile f : index.files()) {
        if (!f.complete) {
          out.add(f.id);
        }
      }
      return out;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Paths whose TTL ran out at {@code nowMs}, with their actions. */
  public List<FileInfo> expired(long nowMs) {
    return read(() -> index.expired(nowMs));
  }

  /** The pin list's version; it moves whenever the set of pinned files may have changed. */
  public long pinVersion() {
    return read(() -> index.pinVersion());
  }

  /** Whether file {@code fileId} is pinned now, itself or through a directory above it (false: gone, or not). */
  public boolean pinnedNow(long fileId) {
    return read(() -> {
      for (Inode i = index.byId(fileId); i != null; i = i.parent) {
        if (i.pinned) {
          return true;
        }
      }
      return false;
    });
  }

  /** Ids of files pinned themselves or through a pinned directory. */
  public List<Long> pinnedFileIds() {
    return read(() -> index.pinnedFileIds());
  }

  /** Snapshots of every file at or under {@code path} (the file itself for a file). */
  public List<FileInfo> filesUnder(StrataPath path) throws StrataException {
    lock.readLock().lock();
    try {
      List<FileInfo> out = new ArrayList<>();
      InodeIndex.collectFiles(require(path), f -> out.add(InodeViews.snapshot(f, InodeViews.pathOf(f))));
      return out;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Starts a walk over the files at or under {@code path}, taken a batch at a time with {@link #nextBatch} (see
   * {@link SubtreeWalk} for what it guarantees while the tree changes between batches); close it when done.
   */
  SubtreeWalk walk(StrataPath path) throws StrataException {
    lock.readLock().lock();
    try {
      SubtreeWalk w = new SubtreeWalk(require(path).id, walks);
      walks.add(w);
      return w;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The walk's next files, visiting at most {@code maxInodes} inodes under the read lock; empty once it is done. */
  List<SubtreeWalk.Visit> nextBatch(SubtreeWalk walk, int maxInodes) {
    return read(() -> walk.next(index.byId(walk.topId), maxInodes));
  }

  /** The path of inode {@code id}'s file, or null. */
  public String pathOfFile(long fileId) {
    lock.readLock().lock();
    try {
      InodeFile f = index.file(fileId);
      return f == null ? null : InodeViews.pathOf(f);
    } finally {
      lock.readLock().unlock();
    }
  }

  // ---- lookups for the UFS loader ----

  /** What the tree holds at a path, for the loader's decisions; null when nothing is there. */
  public FileInfo lookupOrNull(StrataPath path) {
    return read(() -> snapshotOrNull(path));
  }

  /**
   * As {@link #lookupOrNull}, but never waits: null also when a writer holds the lock right now (the
   * caller then asks again from a thread that may wait). For answering on a transport thread.
   */
  public FileInfo lookupIfFree(StrataPath path) {
    if (!lock.readLock().tryLock()) {
      return null;
    }
    try {
      return snapshotOrNull(path);
    } finally {
      lock.readLock().unlock();
    }
  }

  private FileInfo snapshotOrNull(StrataPath path) {
    Inode i = lookup(path);
    return i == null ? null : InodeViews.snapshot(i, path.toString());
  }

  /** The deepest existing ancestor-or-self of {@code path}. */
  public FileInfo deepestExisting(StrataPath path) {
    lock.readLock().lock();
    try {
      Inode cur = root;
      StrataPath walked = StrataPath.ROOT;
      for (String part : path.components()) {
        if (!(cur instanceof InodeDirectory d)) {
          break;
        }
        Inode next = d.children.get(part);
        if (next == null) {
          break;
        }
        cur = next;
        walked = InodeViews.childOf(walked, part);
      }
      return InodeViews.snapshot(cur, walked.toString());
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The change sequence so far: take it before a UFS look, hand it to {@link UfsMerge} after. */
  long changeSeq() {
    return read(() -> index.changeSeq());
  }

  /**
   * The entries that rebuild this tree, for a checkpoint. The caller holds whatever keeps the journal
   * sequence still; this takes the tree's read lock.
   */
  public List<JournalEntry> snapshotEntries() {
    return read(() -> InodeTreeRecovery.snapshotEntries(root, index));
  }

  public <T> T whileFrozen(java.util.function.Supplier<T> action) {
    return read(action);
  }
}
