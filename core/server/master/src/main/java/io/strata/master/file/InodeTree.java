package io.strata.master.file;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.DirectoryNotEmptyException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import io.strata.common.time.Deadlines;
import io.strata.master.journal.JournalEntry;
import io.strata.master.journal.JournalSink;
import java.time.Clock;
import java.util.ArrayList;
import io.strata.server.ufs.UfsStatus;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The namespace: a tree of directories and files under {@code /}, held in memory. Every operation takes
 * the tree's lock (shared for reads, exclusive for changes), so each is atomic; callers get immutable
 * {@link FileInfo} snapshots, never inodes. Paths arrive validated ({@link StrataPath}).
 *
 * <p>Thread-safe. Time comes from the injected clock.
 */
public final class InodeTree {
  public static final String DEFAULT_OWNER = "strata";
  public static final String DEFAULT_GROUP = "strata";

  private final Clock clock;
  private final JournalSink journal;
  /**
   * Guards every inode; {@link UfsMerge} takes it too. Lock order: after the file system master's commit
   * lock, before the block master's monitor and the journal's (docs/ARCHITECTURE.md, "Concurrency");
   * never held across a UFS call or a journal flush.
   */
  final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final InodeDirectory root;
  private final Map<Long, InodeFile> filesById = new HashMap<>();
  /** Directories by id (attribute changes and their replay find directories by id). */
  private final Map<Long, InodeDirectory> dirsById = new HashMap<>();
  private long nextId = 1;
  private long fileCount;
  private long directoryCount = 1;
  /** Complete files waiting for the persist scheduler. */
  private final Set<Long> toPersist = new HashSet<>();
  /** Inodes with a TTL, and pinned inodes, by id (the TTL checker and the pin list read them). */
  private final Map<Long, Inode> withTtl = new HashMap<>();
  private final Map<Long, Inode> pinnedInodes = new HashMap<>();
  /**
   * Moves whenever the set of pinned files may have changed. Starts from the clock, so a restarted or new
   * leading master never hands out a version an old one used for another list (workers keep theirs).
   */
  private long pinVersion;
  /** Counts the changes a UFS view taken outside the lock may have missed (see {@link UfsMerge}). */
  private long changeSeq;

  public InodeTree(Clock clock) {
    this(clock, JournalSink.NONE);
  }

  /** A tree that records every change in {@code journal}, under its lock, in apply order. */
  public InodeTree(Clock clock, JournalSink journal) {
    this.clock = clock;
    this.journal = journal;
    this.root = new InodeDirectory(0, "", null, clock.millis(), DEFAULT_OWNER, DEFAULT_GROUP, 0755);
    this.pinVersion = Math.max(1, clock.millis()) * 1024;
  }

  // ---- lookups (lock held by caller) ----

  Inode lookup(StrataPath path) {
    Inode cur = root;
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

  private Inode require(StrataPath path) throws StrataException {
    Inode cur = root;
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

  /**
   * The directory that will hold {@code path}, creating missing ancestors when recursive; their Mkdir
   * entries go to {@code entries}, which the caller journals as one operation with its own entry. With
   * {@code entries} null it only checks, changing nothing (null when ancestors would be created).
   */
  private InodeDirectory parentFor(StrataPath path, boolean recursive, String op, List<JournalEntry> entries)
      throws StrataException {
    return parentFor(path, recursive, op, entries, DEFAULT_OWNER);
  }

  /** As above; the directories it creates belong to {@code owner} (group: the same name). */
  private InodeDirectory parentFor(StrataPath path, boolean recursive, String op, List<JournalEntry> entries,
      String owner) throws StrataException {
    StrataPath parentPath = path.parent();
    Inode cur = root;
    StrataPath walked = StrataPath.ROOT;
    long now = clock.millis();
    for (String part : parentPath.components()) {
      InodeDirectory dir = (InodeDirectory) cur;
      Inode next = dir.children.get(part);
      walked = walked.child(part);
      if (next == null) {
        if (!recursive) {
          throw new NotFoundException("Cannot " + op + " " + path + ": parent directory " + walked
              + " does not exist");
        }
        if (entries == null) {
          return null; // a check: everything from here down would be created
        }
        next = new InodeDirectory(nextId++, part, dir, now, owner, owner, 0755);
        stamp(next);
        dirsById.put(next.id, (InodeDirectory) next);
        dir.children.put(part, next);
        dir.modificationTimeMs = now;
        directoryCount++;
        entries.add(new JournalEntry.Mkdir(next.id, walked.toString(), 0755, now,
            PersistenceState.NOT_PERSISTED.name(), owner, owner));
      } else if (!next.isDirectory()) {
        throw new FailedPreconditionException("Cannot " + op + " " + path + ": " + walked
            + " is a file, not a directory");
      }
      cur = next;
    }
    return (InodeDirectory) cur;
  }

  private static String pathOf(Inode inode) {
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
        f.ttlAction, f.ufsMtimeMs, "", false, f.accessTimeMs);
  }

  private static String childPath(String parent, String name) {
    return parent.equals("/") ? "/" + name : parent + "/" + name;
  }

  // ---- operations ----

  public FileInfo createFile(StrataPath path, long blockSize, boolean recursive, int mode) throws StrataException {
    return createFile(path, blockSize, recursive, mode, WriteType.MUST_CACHE);
  }

  public FileInfo createFile(StrataPath path, long blockSize, boolean recursive, int mode, WriteType writeType)
      throws StrataException {
    return createFile(path, blockSize, recursive, mode, writeType, "");
  }

  /**
   * Creates an incomplete file owned by {@code owner} (group: the same name; "": the default owner), as are
   * the parents a recursive create makes.
   */
  public FileInfo createFile(StrataPath path, long blockSize, boolean recursive, int mode, WriteType writeType,
      String owner) throws StrataException {
    String who = ownerOrDefault(owner);
    List<JournalEntry> entries = new ArrayList<>(1);
    lock.writeLock().lock();
    try {
      if (path.isRoot()) {
        throw new AlreadyExistsException("Cannot create file /: the root directory exists");
      }
      InodeDirectory parent = parentFor(path, recursive, "create file", entries, who);
      Inode existing = parent.children.get(path.name());
      if (existing != null) {
        throw new AlreadyExistsException("Cannot create file " + path + ": a "
            + (existing.isDirectory() ? "directory" : "file") + " with that path exists");
      }
      long now = clock.millis();
      InodeFile file = new InodeFile(nextId++, path.name(), parent, now, who, who, mode == 0 ? 0644 : mode,
          blockSize);
      file.writeType = writeType;
      stamp(file);
      parent.children.put(file.name, file);
      parent.modificationTimeMs = now;
      filesById.put(file.id, file);
      fileCount++;
      if (isPinned(parent)) {
        pinVersion++;
      }
      entries.add(new JournalEntry.CreateFile(file.id, path.toString(), blockSize, file.mode, now, writeType.name(),
          who, who));
      return snapshot(file, path.toString());
    } finally {
      journalAndUnlock(entries);
    }
  }

  /** Validation of the file's blocks, done by the caller while the tree holds the file still. */
  @FunctionalInterface
  public interface CompletionCheck {
    void check(FileInfo file, long length) throws StrataException;
  }

  public FileInfo completeFile(StrataPath path, long fileId, long length, CompletionCheck check)
      throws StrataException {
    return completeFile(path, fileId, length, check, PersistenceState.NOT_PERSISTED, 0);
  }

  /** Completes a file with the persistence state its write type gives it (and the UFS mtime if persisted). */
  public FileInfo completeFile(StrataPath path, long fileId, long length, CompletionCheck check,
      PersistenceState persistence, long ufsMtimeMs) throws StrataException {
    lock.writeLock().lock();
    try {
      Inode inode = require(path);
      if (inode.isDirectory()) {
        throw new FailedPreconditionException("Cannot complete " + path + ": it is a directory");
      }
      InodeFile file = (InodeFile) inode;
      if (fileId != 0 && file.id != fileId) {
        throw new FailedPreconditionException("Cannot complete " + path + ": it is no longer the file that "
            + "was created (id " + fileId + ", now " + file.id + ")");
      }
      if (file.complete) {
        throw new FailedPreconditionException("Cannot complete " + path + ": it is already complete");
      }
      if (length < 0) {
        throw new InvalidArgumentException("Cannot complete " + path + " with negative length " + length);
      }
      check.check(snapshot(file, path.toString()), length);
      file.length = length;
      file.complete = true;
      file.modificationTimeMs = clock.millis();
      file.ufsMtimeMs = ufsMtimeMs;
      setPersistence(file, persistence);
      List<JournalEntry> entries = new ArrayList<>(2);
      entries.add(new JournalEntry.CompleteFile(file.id, length, file.modificationTimeMs, persistence.name(),
          ufsMtimeMs));
      if (persistence == PersistenceState.PERSISTED) {
        markAncestorsPersisted(file, entries);
      }
      journal.append(entries);
      return snapshot(file, path.toString());
    } finally {
      lock.writeLock().unlock();
    }
  }

  public FileInfo createDirectory(StrataPath path, boolean recursive, boolean allowExists, int mode)
      throws StrataException {
    return createDirectory(path, recursive, allowExists, mode, PersistenceState.NOT_PERSISTED, List.of());
  }

  /**
   * Creates a directory in the given persistence state; {@code extra} entries are journaled in the same
   * operation (a mount's AddMount), and {@code onCreated} runs under the lock once it exists.
   */
  public FileInfo createDirectory(StrataPath path, boolean recursive, boolean allowExists, int mode,
      PersistenceState persistence, List<JournalEntry> extra) throws StrataException {
    return createDirectory(path, recursive, allowExists, mode, persistence, extra, "");
  }

  /** As above, owned by {@code owner} (see {@link #createFile(StrataPath, long, boolean, int, WriteType, String)}). */
  public FileInfo createDirectory(StrataPath path, boolean recursive, boolean allowExists, int mode,
      PersistenceState persistence, List<JournalEntry> extra, String owner) throws StrataException {
    String who = ownerOrDefault(owner);
    List<JournalEntry> entries = new ArrayList<>(1 + extra.size());
    lock.writeLock().lock();
    try {
      if (path.isRoot()) {
        if (allowExists) {
          return snapshot(root, "/");
        }
        throw new AlreadyExistsException("Cannot create directory /: it exists");
      }
      InodeDirectory parent = parentFor(path, recursive, "create directory", entries, who);
      Inode existing = parent.children.get(path.name());
      if (existing != null) {
        if (existing.isDirectory() && allowExists) {
          entries.addAll(extra);
          return snapshot(existing, path.toString());
        }
        throw new AlreadyExistsException("Cannot create directory " + path + ": a "
            + (existing.isDirectory() ? "directory" : "file") + " with that path exists");
      }
      long now = clock.millis();
      InodeDirectory dir = new InodeDirectory(nextId++, path.name(), parent, now, who, who,
          mode == 0 ? 0755 : mode);
      dir.persistence = persistence;
      stamp(dir);
      dirsById.put(dir.id, dir);
      parent.children.put(dir.name, dir);
      parent.modificationTimeMs = now;
      directoryCount++;
      entries.add(new JournalEntry.Mkdir(dir.id, path.toString(), dir.mode, now, persistence.name(), who, who));
      entries.addAll(extra);
      return snapshot(dir, path.toString());
    } finally {
      journalAndUnlock(entries);
    }
  }

  private static String ownerOrDefault(String owner) {
    return owner == null || owner.isEmpty() ? DEFAULT_OWNER : owner;
  }

  private static String groupOrDefault(String group) {
    return group == null || group.isEmpty() ? DEFAULT_GROUP : group;
  }

  /**
   * Journals what an operation changed (also when it failed after creating parents: they exist in memory)
   * as one operation, then releases the write lock.
   */
  void journalAndUnlock(List<JournalEntry> entries) {
    try {
      if (!entries.isEmpty()) {
        journal.append(entries);
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  public FileInfo getStatus(StrataPath path) throws StrataException {
    lock.readLock().lock();
    try {
      return snapshot(require(path), path.toString());
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The file with this id, or null. */
  public FileInfo getFile(long fileId) {
    lock.readLock().lock();
    try {
      InodeFile f = filesById.get(fileId);
      return f == null ? null : snapshot(f, pathOf(f));
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
    lock.readLock().lock();
    try {
      return lookup(path) != null;
    } finally {
      lock.readLock().unlock();
    }
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
        return startAfter == null ? List.of(snapshot(inode, path.toString())) : List.of();
      }
      InodeDirectory dir = (InodeDirectory) inode;
      Map<String, Inode> tail = startAfter == null ? dir.children : dir.children.tailMap(startAfter, false);
      List<FileInfo> out = new ArrayList<>(Math.min(limit, tail.size()));
      String base = path.toString();
      for (Inode child : tail.values()) {
        if (out.size() >= limit) {
          break;
        }
        out.add(snapshot(child, childPath(base, child.name)));
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
        out.add(snapshot(child, childPath(base, child.name)));
      }
      return out;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Deletes path and everything under it; returns the ids of the files removed. */
  public List<Long> delete(StrataPath path, boolean recursive) throws StrataException {
    return delete(path, recursive, List.of());
  }

  /** Deletes, journaling {@code extra} entries in the same operation (an unmount's DeleteMount). */
  public List<Long> delete(StrataPath path, boolean recursive, List<JournalEntry> extra) throws StrataException {
    return delete(path, recursive, extra, 0);
  }

  /** As above; a non-zero {@code expectedId} deletes only while the path is still that inode. */
  public List<Long> delete(StrataPath path, boolean recursive, List<JournalEntry> extra, long expectedId)
      throws StrataException {
    lock.writeLock().lock();
    try {
      if (path.isRoot()) {
        throw new InvalidArgumentException("Cannot delete /: the root directory cannot be deleted");
      }
      Inode inode = require(path);
      if (expectedId != 0 && inode.id != expectedId) {
        throw new FailedPreconditionException("Cannot delete " + path + ": it is no longer inode " + expectedId
            + " (now " + inode.id + ")");
      }
      if (inode instanceof InodeDirectory && !((InodeDirectory) inode).children.isEmpty() && !recursive) {
        throw new DirectoryNotEmptyException("Cannot delete " + path + ": the directory is not empty ("
            + ((InodeDirectory) inode).children.size() + " entries) and the delete is not recursive");
      }
      List<Long> removedFiles = new ArrayList<>();
      removeSubtree(inode, removedFiles);
      inode.parent.children.remove(inode.name);
      inode.parent.removedSeq = ++changeSeq;
      inode.parent.modificationTimeMs = clock.millis();
      List<JournalEntry> entries = new ArrayList<>(1 + extra.size());
      entries.add(new JournalEntry.Delete(path.toString(), inode.parent.modificationTimeMs));
      entries.addAll(extra);
      journal.append(entries);
      return removedFiles;
    } finally {
      lock.writeLock().unlock();
    }
  }

  void removeSubtree(Inode top, List<Long> removedFiles) {
    List<Inode> stack = new ArrayList<>();
    stack.add(top);
    while (!stack.isEmpty()) {
      Inode inode = stack.remove(stack.size() - 1);
      if (inode instanceof InodeDirectory) {
        stack.addAll(((InodeDirectory) inode).children.values());
        directoryCount--;
        dirsById.remove(inode.id);
      } else {
        filesById.remove(inode.id);
        toPersist.remove(inode.id);
        removedFiles.add(inode.id);
        fileCount--;
      }
      withTtl.remove(inode.id);
      if (pinnedInodes.remove(inode.id) != null) {
        pinVersion++;
      }
    }
  }

  /**
   * Checks, changing nothing, that a create of {@code path} would find its parent (or, recursive, create
   * it): a caller that changes the UFS first asks this, so a refused create touches nothing there.
   */
  public void checkParent(StrataPath path, boolean recursive, String op) throws StrataException {
    lock.readLock().lock();
    try {
      if (!path.isRoot()) {
        parentFor(path, recursive, op, null);
      }
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Checks, changing nothing, that {@link #rename} would accept these paths now (see {@link #checkParent}). */
  public void checkRename(StrataPath src, StrataPath dst) throws StrataException {
    lock.readLock().lock();
    try {
      renameTarget(src, dst);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The directory {@code src} would move into; throws when the rename must be refused. Lock held. */
  private InodeDirectory renameTarget(StrataPath src, StrataPath dst) throws StrataException {
    if (src.isRoot()) {
      throw new InvalidArgumentException("Cannot rename /: the root directory cannot be moved");
    }
    if (dst.isRoot()) {
      throw new AlreadyExistsException("Cannot rename " + src + " to /: the root directory exists");
    }
    require(src);
    if (dst.isUnder(src)) {
      throw new InvalidArgumentException("Cannot rename " + src + " to " + dst
          + ": the destination lies inside the source");
    }
    Inode dstParentInode = lookup(dst.parent());
    if (dstParentInode == null) {
      throw new NotFoundException("Cannot rename " + src + " to " + dst + ": parent directory "
          + dst.parent() + " does not exist");
    }
    if (!dstParentInode.isDirectory()) {
      throw new FailedPreconditionException("Cannot rename " + src + " to " + dst + ": " + dst.parent()
          + " is a file, not a directory");
    }
    InodeDirectory dstParent = (InodeDirectory) dstParentInode;
    if (dstParent.children.containsKey(dst.name())) {
      throw new AlreadyExistsException("Cannot rename " + src + " to " + dst + ": the destination exists");
    }
    return dstParent;
  }

  public void rename(StrataPath src, StrataPath dst) throws StrataException {
    lock.writeLock().lock();
    try {
      InodeDirectory dstParent = renameTarget(src, dst);
      Inode inode = require(src);
      long now = clock.millis();
      inode.parent.children.remove(inode.name);
      inode.parent.removedSeq = ++changeSeq;
      stamp(inode);
      inode.parent.modificationTimeMs = now;
      inode.name = dst.name();
      inode.parent = dstParent;
      dstParent.children.put(inode.name, inode);
      dstParent.modificationTimeMs = now;
      pinVersion++;
      journal.append(List.of(new JournalEntry.Rename(src.toString(), dst.toString(), now)));
    } finally {
      lock.writeLock().unlock();
    }
  }

  public long fileCount() {
    lock.readLock().lock();
    try {
      return fileCount;
    } finally {
      lock.readLock().unlock();
    }
  }

  public long directoryCount() {
    lock.readLock().lock();
    try {
      return directoryCount;
    } finally {
      lock.readLock().unlock();
    }
  }

  // ---- attributes: persistence, pins, TTLs (lock held by caller) ----

  private Inode byId(long id) {
    if (id == root.id) {
      return root;
    }
    Inode f = filesById.get(id);
    return f != null ? f : dirsById.get(id);
  }

  private static boolean isPinned(Inode inode) {
    for (Inode i = inode; i != null; i = i.parent) {
      if (i.pinned) {
        return true;
      }
    }
    return false;
  }

  private void setPersistence(Inode inode, PersistenceState state) {
    inode.persistence = state;
    stamp(inode);
    if (inode instanceof InodeFile) {
      if (state == PersistenceState.TO_BE_PERSISTED) {
        toPersist.add(inode.id);
      } else {
        toPersist.remove(inode.id);
      }
    }
  }

  /** A persisted file's directories exist in the UFS too (the UFS made them): say so, journaled. */
  private void markAncestorsPersisted(Inode inode, List<JournalEntry> entries) {
    for (InodeDirectory d = inode.parent; d != null && d.parent != null; d = d.parent) {
      if (d.persistence == PersistenceState.PERSISTED) {
        return;
      }
      d.persistence = PersistenceState.PERSISTED;
      entries.add(new JournalEntry.SetAttribute(d.id, null, null, null, PersistenceState.PERSISTED.name(), null));
    }
  }

  private void applyAttributes(Inode inode, JournalEntry.SetAttribute a) {
    if (a.pinned() != null && a.pinned() != inode.pinned) {
      inode.pinned = a.pinned();
      if (inode.pinned) {
        pinnedInodes.put(inode.id, inode);
      } else {
        pinnedInodes.remove(inode.id);
      }
      pinVersion++;
    }
    if (a.ttlMs() != null) {
      inode.ttlMs = a.ttlMs();
      if (inode.ttlMs >= 0) {
        withTtl.put(inode.id, inode);
      } else {
        withTtl.remove(inode.id);
      }
    }
    if (a.ttlAction() != null) {
      inode.ttlAction = TtlAction.valueOf(a.ttlAction());
    }
    if (a.persistenceState() != null) {
      setPersistence(inode, PersistenceState.valueOf(a.persistenceState()));
    }
    if (a.ufsMtimeMs() != null && inode instanceof InodeFile f) {
      f.ufsMtimeMs = a.ufsMtimeMs();
    }
    if (a.owner() != null) {
      inode.owner = a.owner();
    }
    if (a.group() != null) {
      inode.group = a.group();
    }
    if (a.mode() != null) {
      inode.mode = a.mode();
    }
    if (a.modificationTimeMs() != null) {
      inode.modificationTimeMs = a.modificationTimeMs();
    }
    if (a.accessTimeMs() != null) {
      inode.accessTimeMs = a.accessTimeMs();
    }
  }

  /** {@link #applyAttributes} on {@code top} and, for a recursive change, on everything under it. */
  private void applyAttributesTree(Inode top, JournalEntry.SetAttribute a) {
    if (!a.recursive()) {
      applyAttributes(top, a);
      return;
    }
    List<Inode> stack = new ArrayList<>();
    stack.add(top);
    while (!stack.isEmpty()) {
      Inode cur = stack.remove(stack.size() - 1);
      applyAttributes(cur, a);
      if (cur instanceof InodeDirectory d) {
        stack.addAll(d.children.values());
      }
    }
  }

  /** A precondition on the inode an attribute change applies to, checked under the lock. */
  @FunctionalInterface
  public interface AttributeCheck {
    void check(FileInfo current) throws StrataException;
  }

  /**
   * Changes attributes of the inode at {@code path} (null fields unchanged) after {@code check} accepted
   * its current state; journaled. Returns the new snapshot.
   */
  public FileInfo setAttribute(StrataPath path, Boolean pinned, Long ttlMs, TtlAction ttlAction,
      PersistenceState persistence, Long ufsMtimeMs, AttributeCheck check) throws StrataException {
    lock.writeLock().lock();
    try {
      Inode inode = require(path);
      check.check(snapshot(inode, path.toString()));
      JournalEntry.SetAttribute a = new JournalEntry.SetAttribute(inode.id, pinned, ttlMs,
          ttlAction == null ? null : ttlAction.name(), persistence == null ? null : persistence.name(), ufsMtimeMs);
      applyAttributes(inode, a);
      List<JournalEntry> entries = new ArrayList<>(2);
      entries.add(a);
      if (persistence == PersistenceState.PERSISTED) {
        markAncestorsPersisted(inode, entries);
      }
      journal.append(entries);
      return snapshot(inode, path.toString());
    } finally {
      lock.writeLock().unlock();
    }
  }

  /**
   * Applies a client's attribute change (checked already, see {@link AttributeChange#checked}) to the inode at
   * {@code path} and, when recursive, to everything under it, as one journaled entry under the write lock
   * (which a recursive change holds for its whole walk). Returns the new snapshot of {@code path}.
   */
  public FileInfo setAttribute(StrataPath path, AttributeChange c) throws StrataException {
    lock.writeLock().lock();
    try {
      Inode inode = require(path);
      JournalEntry.SetAttribute a = new JournalEntry.SetAttribute(inode.id, c.pinned(), c.ttlMs(),
          c.ttlAction() == null ? null : c.ttlAction().name(), null, null, c.owner(), c.group(), c.mode(),
          c.modificationTimeMs(), c.accessTimeMs(), c.recursive() && inode.isDirectory());
      applyAttributesTree(inode, a);
      journal.append(List.of(a));
      return snapshot(inode, path.toString());
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** As {@link #setAttribute} for a file found by id; null when the file no longer exists. */
  public FileInfo setFileAttribute(long fileId, Boolean pinned, Long ttlMs, TtlAction ttlAction,
      PersistenceState persistence, Long ufsMtimeMs, AttributeCheck check) throws StrataException {
    String path;
    lock.readLock().lock();
    try {
      InodeFile f = filesById.get(fileId);
      if (f == null) {
        return null;
      }
      path = pathOf(f);
    } finally {
      lock.readLock().unlock();
    }
    try {
      return setAttribute(StrataPath.of(path), pinned, ttlMs, ttlAction, persistence, ufsMtimeMs, current -> {
        if (current.id() != fileId) {
          throw new NotFoundException("File " + fileId + " moved while its attributes were being set");
        }
        check.check(current);
      });
    } catch (NotFoundException e) {
      return null;
    }
  }

  /** Ids of complete files waiting to be persisted. */
  public List<Long> filesToPersist() {
    lock.readLock().lock();
    try {
      return new ArrayList<>(toPersist);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Ids of incomplete files (a new leader gives each a write lease). Scans every file. */
  public List<Long> incompleteFileIds() {
    lock.readLock().lock();
    try {
      List<Long> out = new ArrayList<>();
      for (InodeFile f : filesById.values()) {
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
    lock.readLock().lock();
    try {
      List<FileInfo> out = new ArrayList<>();
      for (Inode i : withTtl.values()) {
        if (ttlRanOut(i.creationTimeMs, i.ttlMs, nowMs)) {
          out.add(snapshot(i, pathOf(i)));
        }
      }
      return out;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Whether a TTL of {@code ttlMs} (-1: none) counted from {@code creationTimeMs} ran out at {@code nowMs}.
   * The expiry saturates, so a TTL of {@code Long.MAX_VALUE} ("never") never runs out.
   */
  static boolean ttlRanOut(long creationTimeMs, long ttlMs, long nowMs) {
    return ttlMs >= 0 && Deadlines.reachedMillis(nowMs, Deadlines.plusMillis(creationTimeMs, ttlMs));
  }

  /** The pin list's version; it moves whenever the set of pinned files may have changed. */
  public long pinVersion() {
    lock.readLock().lock();
    try {
      return pinVersion;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Ids of files pinned themselves or through a pinned directory. */
  public List<Long> pinnedFileIds() {
    lock.readLock().lock();
    try {
      Set<Long> out = new HashSet<>();
      for (Inode top : pinnedInodes.values()) {
        collectFiles(top, f -> out.add(f.id));
      }
      return new ArrayList<>(out);
    } finally {
      lock.readLock().unlock();
    }
  }

  private static void collectFiles(Inode top, java.util.function.Consumer<InodeFile> sink) {
    List<Inode> stack = new ArrayList<>();
    stack.add(top);
    while (!stack.isEmpty()) {
      Inode cur = stack.remove(stack.size() - 1);
      if (cur instanceof InodeDirectory d) {
        stack.addAll(d.children.values());
      } else {
        sink.accept((InodeFile) cur);
      }
    }
  }

  /** Snapshots of every file at or under {@code path} (the file itself for a file). */
  public List<FileInfo> filesUnder(StrataPath path) throws StrataException {
    lock.readLock().lock();
    try {
      List<FileInfo> out = new ArrayList<>();
      collectFiles(require(path), f -> out.add(snapshot(f, pathOf(f))));
      return out;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The path of inode {@code id}'s file, or null. */
  public String pathOfFile(long fileId) {
    lock.readLock().lock();
    try {
      InodeFile f = filesById.get(fileId);
      return f == null ? null : pathOf(f);
    } finally {
      lock.readLock().unlock();
    }
  }

  // ---- lookups for the UFS loader ----

  /** What the tree holds at a path, for the loader's decisions; null when nothing is there. */
  public FileInfo lookupOrNull(StrataPath path) {
    lock.readLock().lock();
    try {
      Inode i = lookup(path);
      return i == null ? null : snapshot(i, path.toString());
    } finally {
      lock.readLock().unlock();
    }
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
      Inode i = lookup(path);
      return i == null ? null : snapshot(i, path.toString());
    } finally {
      lock.readLock().unlock();
    }
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
        walked = childOf(walked, part);
      }
      return snapshot(cur, walked.toString());
    } finally {
      lock.readLock().unlock();
    }
  }

  static StrataPath childOf(StrataPath p, String name) {
    try {
      return p.child(name);
    } catch (StrataException e) {
      throw new IllegalStateException("A name in the tree is not a valid path component: " + name, e);
    }
  }

  /**
   * Adds a child as the UFS describes it (a PERSISTED directory, or a complete PERSISTED file of
   * {@code blockSize} blocks) under {@code dir}, its entries going to {@code entries}. Write lock held.
   */
  Inode addUfsChild(InodeDirectory dir, StrataPath path, UfsStatus s, long blockSize,
      List<JournalEntry> entries) {
    long now = clock.millis();
    long mtime = s.modificationTimeMs() > 0 ? s.modificationTimeMs() : now;
    Inode child;
    if (s.directory()) {
      InodeDirectory d = new InodeDirectory(nextId++, path.name(), dir, now, ownerOrDefault(s.owner()),
          groupOrDefault(s.group()), s.mode() == 0 ? 0755 : s.mode());
      d.persistence = PersistenceState.PERSISTED;
      dirsById.put(d.id, d);
      directoryCount++;
      entries.add(new JournalEntry.Mkdir(d.id, path.toString(), d.mode, now, PersistenceState.PERSISTED.name(),
          d.owner, d.group));
      child = d;
    } else {
      // Created (for TTLs) when Strata learned of it; modified when the UFS says.
      InodeFile f = new InodeFile(nextId++, path.name(), dir, now, ownerOrDefault(s.owner()),
          groupOrDefault(s.group()), s.mode() == 0 ? 0644 : s.mode(), blockSize);
      f.modificationTimeMs = mtime;
      f.length = s.length();
      f.complete = true;
      f.ufsMtimeMs = s.modificationTimeMs();
      f.persistence = PersistenceState.PERSISTED;
      filesById.put(f.id, f);
      fileCount++;
      entries.add(new JournalEntry.CreateFile(f.id, path.toString(), blockSize, f.mode, now,
          WriteType.MUST_CACHE.name(), f.owner, f.group));
      entries.add(new JournalEntry.CompleteFile(f.id, f.length, mtime, PersistenceState.PERSISTED.name(),
          f.ufsMtimeMs));
      child = f;
    }
    child.lastUfsSyncMs = now;
    stamp(child);
    dir.children.put(path.name(), child);
    if (isPinned(dir)) {
      pinVersion++;
    }
    return child;
  }

  long now() {
    return clock.millis();
  }

  /** Marks {@code inode} changed now. Write lock held. */
  void stamp(Inode inode) {
    inode.changedSeq = ++changeSeq;
  }

  /** The change sequence so far: take it before a UFS look, hand it to {@link UfsMerge} after. */
  long changeSeq() {
    lock.readLock().lock();
    try {
      return changeSeq;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Marks that a child of {@code dir} left it now. Write lock held. */
  void childLeft(InodeDirectory dir) {
    dir.removedSeq = ++changeSeq;
  }

  InodeDirectory root() {
    return root;
  }

  // ---- recovery ----

  /**
   * Applies a journaled change during replay (no journaling, times and ids from the entry). Returns the
   * ids of files a Delete removed, empty otherwise.
   */
  public List<Long> apply(JournalEntry entry) throws StrataException {
    lock.writeLock().lock();
    try {
      if (entry instanceof JournalEntry.Mkdir m) {
        StrataPath p = StrataPath.of(m.path());
        InodeDirectory parent = (InodeDirectory) require(p.parent());
        InodeDirectory d = new InodeDirectory(m.id(), p.name(), parent, m.timeMs(), ownerOrDefault(m.owner()),
            groupOrDefault(m.group()), m.mode());
        d.persistence = PersistenceState.parse(m.persistenceState());
        dirsById.put(d.id, d);
        parent.children.put(d.name, d);
        parent.modificationTimeMs = m.timeMs();
        directoryCount++;
        nextId = Math.max(nextId, m.id() + 1);
      } else if (entry instanceof JournalEntry.CreateFile c) {
        StrataPath p = StrataPath.of(c.path());
        InodeDirectory parent = (InodeDirectory) require(p.parent());
        InodeFile f = new InodeFile(c.id(), p.name(), parent, c.timeMs(), ownerOrDefault(c.owner()),
            groupOrDefault(c.group()), c.mode(), c.blockSize());
        f.writeType = WriteType.parse(c.writeType());
        parent.children.put(f.name, f);
        parent.modificationTimeMs = c.timeMs();
        filesById.put(f.id, f);
        fileCount++;
        nextId = Math.max(nextId, c.id() + 1);
      } else if (entry instanceof JournalEntry.CompleteFile c) {
        InodeFile f = filesById.get(c.id());
        if (f == null) {
          throw new NotFoundException("Journal completes file id " + c.id() + ", which does not exist");
        }
        f.length = c.length();
        f.complete = true;
        f.modificationTimeMs = c.timeMs();
        f.ufsMtimeMs = c.ufsMtimeMs();
        setPersistence(f, PersistenceState.parse(c.persistenceState()));
      } else if (entry instanceof JournalEntry.Delete d) {
        Inode inode = require(StrataPath.of(d.path()));
        if (inode.parent == null) {
          throw new InvalidArgumentException("Journal deletes the root directory");
        }
        List<Long> removed = new ArrayList<>();
        removeSubtree(inode, removed);
        inode.parent.children.remove(inode.name);
        inode.parent.modificationTimeMs = d.timeMs();
        return removed;
      } else if (entry instanceof JournalEntry.Rename r) {
        StrataPath dst = StrataPath.of(r.dst());
        Inode inode = require(StrataPath.of(r.src()));
        InodeDirectory dstParent = (InodeDirectory) require(dst.parent());
        inode.parent.children.remove(inode.name);
        inode.parent.modificationTimeMs = r.timeMs();
        inode.name = dst.name();
        inode.parent = dstParent;
        dstParent.children.put(inode.name, inode);
        dstParent.modificationTimeMs = r.timeMs();
        pinVersion++;
      } else if (entry instanceof JournalEntry.NextInodeId n) {
        nextId = Math.max(nextId, n.nextId());
      } else if (entry instanceof JournalEntry.DirectoryModified m) {
        require(StrataPath.of(m.path())).modificationTimeMs = m.timeMs();
      } else if (entry instanceof JournalEntry.SetAttribute a) {
        Inode inode = byId(a.id());
        if (inode == null) {
          throw new NotFoundException("Journal sets attributes of inode " + a.id() + ", which does not exist");
        }
        applyAttributesTree(inode, a);
      }
      return List.of();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /**
   * The entries that rebuild this tree (the id counter, parents before children, then directory times),
   * for a checkpoint. The caller holds whatever keeps the journal sequence still; this takes the tree's
   * read lock.
   */
  public List<JournalEntry> snapshotEntries() {
    lock.readLock().lock();
    try {
      List<JournalEntry> out = new ArrayList<>();
      out.add(new JournalEntry.NextInodeId(nextId));
      if (!root.owner.equals(DEFAULT_OWNER) || !root.group.equals(DEFAULT_GROUP) || root.mode != 0755
          || root.accessTimeMs != root.creationTimeMs || root.pinned || root.ttlMs >= 0) {
        // The root is in no Mkdir entry: its own attributes.
        out.add(new JournalEntry.SetAttribute(root.id, root.pinned ? Boolean.TRUE : null,
            root.ttlMs >= 0 ? root.ttlMs : null, root.ttlMs >= 0 ? root.ttlAction.name() : null, null, null,
            root.owner, root.group, root.mode, null, root.accessTimeMs, false));
      }
      // Last, once nothing re-created under them can move them again.
      List<JournalEntry> dirTimes = new ArrayList<>();
      dirTimes.add(new JournalEntry.DirectoryModified("/", root.modificationTimeMs));
      List<Inode> stack = new ArrayList<>(root.children.values());
      java.util.Collections.reverse(stack);
      while (!stack.isEmpty()) {
        Inode inode = stack.remove(stack.size() - 1);
        String path = pathOf(inode);
        if (inode instanceof InodeDirectory d) {
          out.add(new JournalEntry.Mkdir(d.id, path, d.mode, d.creationTimeMs, d.persistence.name(), d.owner,
              d.group));
          dirTimes.add(new JournalEntry.DirectoryModified(path, d.modificationTimeMs));
          List<Inode> kids = new ArrayList<>(d.children.values());
          java.util.Collections.reverse(kids);
          stack.addAll(kids);
        } else {
          InodeFile f = (InodeFile) inode;
          out.add(new JournalEntry.CreateFile(f.id, path, f.blockSize, f.mode, f.creationTimeMs,
              f.writeType.name(), f.owner, f.group));
          if (f.complete) {
            out.add(new JournalEntry.CompleteFile(f.id, f.length, f.modificationTimeMs, f.persistence.name(),
                f.ufsMtimeMs));
          }
        }
        // Times no other entry carries: the access time once set, an incomplete file's modification time.
        Long atime = inode.accessTimeMs != inode.creationTimeMs ? inode.accessTimeMs : null;
        Long mtime = inode instanceof InodeFile f && !f.complete && f.modificationTimeMs != f.creationTimeMs
            ? f.modificationTimeMs : null;
        if (inode.pinned || inode.ttlMs >= 0 || atime != null || mtime != null) {
          out.add(new JournalEntry.SetAttribute(inode.id, inode.pinned ? Boolean.TRUE : null,
              inode.ttlMs >= 0 ? inode.ttlMs : null, inode.ttlMs >= 0 ? inode.ttlAction.name() : null, null, null,
              null, null, null, mtime, atime, false));
        }
      }
      out.addAll(dirTimes);
      return out;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Runs {@code action} while no tree change can happen (checkpoints read a consistent sequence). */
  public <T> T whileFrozen(java.util.function.Supplier<T> action) {
    lock.readLock().lock();
    try {
      return action.get();
    } finally {
      lock.readLock().unlock();
    }
  }
}
