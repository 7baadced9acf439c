package io.strata.master.file;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.DirectoryNotEmptyException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import io.strata.master.journal.JournalEntry;
import io.strata.master.journal.JournalSink;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * The namespace: a tree of directories and files under {@code /}, held in memory. This class makes its
 * changes (create, complete, mkdir, delete, rename, set attribute, journal replay), each under the
 * exclusive side of the tree's lock and journaled in apply order; its queries, under the shared side, are
 * in {@link InodeTreeReads}. Every operation is atomic; callers get immutable {@link FileInfo} snapshots,
 * never inodes. Paths arrive validated ({@link StrataPath}).
 *
 * <p>Thread-safe. Time comes from the injected clock.
 */
public final class InodeTree extends InodeTreeReads {
  public static final String DEFAULT_OWNER = Inode.DEFAULT_OWNER;
  public static final String DEFAULT_GROUP = Inode.DEFAULT_GROUP;

  private final Clock clock;
  private final JournalSink journal;

  public InodeTree(Clock clock) {
    this(clock, JournalSink.NONE);
  }

  /** A tree that records every change in {@code journal}, under its lock, in apply order. */
  public InodeTree(Clock clock, JournalSink journal) {
    super(new InodeDirectory(0, "", null, clock.millis(), DEFAULT_OWNER, DEFAULT_GROUP, 0755), clock.millis());
    this.clock = clock;
    this.journal = journal;
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
        next = new InodeDirectory(index.newId(), part, dir, now, owner, owner, 0755);
        stamp(next);
        index.addDirectory((InodeDirectory) next);
        dir.children.put(part, next);
        dir.modificationTimeMs = now;
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
    String who = Inode.ownerOrDefault(owner);
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
      InodeFile file = new InodeFile(index.newId(), path.name(), parent, now, who, who, mode == 0 ? 0644 : mode,
          blockSize);
      file.writeType = writeType;
      stamp(file);
      parent.children.put(file.name, file);
      parent.modificationTimeMs = now;
      index.addFile(file);
      if (InodeIndex.isPinned(parent)) {
        index.pinsMayHaveChanged();
      }
      entries.add(new JournalEntry.CreateFile(file.id, path.toString(), blockSize, file.mode, now, writeType.name(),
          who, who));
      return InodeViews.snapshot(file, path.toString());
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
      check.check(InodeViews.snapshot(file, path.toString()), length);
      file.length = length;
      file.complete = true;
      file.modificationTimeMs = clock.millis();
      file.ufsMtimeMs = ufsMtimeMs;
      index.setPersistence(file, persistence);
      List<JournalEntry> entries = new ArrayList<>(2);
      entries.add(new JournalEntry.CompleteFile(file.id, length, file.modificationTimeMs, persistence.name(),
          ufsMtimeMs));
      if (persistence == PersistenceState.PERSISTED) {
        InodeAttributes.markAncestorsPersisted(file, entries);
      }
      journal.append(entries);
      return InodeViews.snapshot(file, path.toString());
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
   * operation (a mount's AddMount: its caller holds the commit lock, so a checkpoint sees the mount table with it).
   */
  public FileInfo createDirectory(StrataPath path, boolean recursive, boolean allowExists, int mode,
      PersistenceState persistence, List<JournalEntry> extra) throws StrataException {
    return createDirectory(path, recursive, allowExists, mode, persistence, extra, "");
  }

  /** As above, owned by {@code owner} (see {@link #createFile(StrataPath, long, boolean, int, WriteType, String)}). */
  public FileInfo createDirectory(StrataPath path, boolean recursive, boolean allowExists, int mode,
      PersistenceState persistence, List<JournalEntry> extra, String owner) throws StrataException {
    return createDirectory(path, recursive, allowExists, false, mode, persistence, extra, owner);
  }

  /**
   * A mount point at {@code path}, with the mount's {@code extra} entries journaled in the same operation: a new
   * directory, or the empty one there. Checked under the tree's lock, so a file written into the directory after the
   * mount's own look at it (while it probed the UFS) refuses the mount, rather than be hidden under it.
   */
  public FileInfo createMountPoint(StrataPath path, List<JournalEntry> extra) throws StrataException {
    return createDirectory(path, false, true, true, 0755, PersistenceState.PERSISTED, extra, "");
  }

  private FileInfo createDirectory(StrataPath path, boolean recursive, boolean allowExists, boolean onlyEmpty,
      int mode, PersistenceState persistence, List<JournalEntry> extra, String owner) throws StrataException {
    String who = Inode.ownerOrDefault(owner);
    List<JournalEntry> entries = new ArrayList<>(1 + extra.size());
    lock.writeLock().lock();
    try {
      if (path.isRoot()) {
        if (allowExists) {
          return InodeViews.snapshot(root, "/");
        }
        throw new AlreadyExistsException("Cannot create directory /: it exists");
      }
      InodeDirectory parent = parentFor(path, recursive, "create directory", entries, who);
      Inode existing = parent.children.get(path.name());
      if (existing != null) {
        if (onlyEmpty && existing instanceof InodeDirectory d && !d.children.isEmpty()) {
          throw new FailedPreconditionException("Cannot mount at " + path + ": it is not an empty directory now ("
              + d.children.size() + " entries were made in it meanwhile)");
        }
        if (existing.isDirectory() && allowExists) {
          entries.addAll(extra);
          return InodeViews.snapshot(existing, path.toString());
        }
        throw new AlreadyExistsException("Cannot create directory " + path + ": a "
            + (existing.isDirectory() ? "directory" : "file") + " with that path exists");
      }
      long now = clock.millis();
      InodeDirectory dir = new InodeDirectory(index.newId(), path.name(), parent, now, who, who,
          mode == 0 ? 0755 : mode);
      dir.persistence = persistence;
      stamp(dir);
      index.addDirectory(dir);
      parent.children.put(dir.name, dir);
      parent.modificationTimeMs = now;
      entries.add(new JournalEntry.Mkdir(dir.id, path.toString(), dir.mode, now, persistence.name(), who, who));
      entries.addAll(extra);
      return InodeViews.snapshot(dir, path.toString());
    } finally {
      journalAndUnlock(entries);
    }
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
    return delete(path, recursive, extra, expectedId, null);
  }

  /**
   * As {@link #delete(StrataPath, boolean, List)}; {@code everyFile} checks each file at or under the path first,
   * under the same lock as the delete, so no file created or renamed in between escapes the check (a refusal,
   * thrown, deletes nothing).
   */
  public List<Long> delete(StrataPath path, boolean recursive, List<JournalEntry> extra, AttributeCheck everyFile)
      throws StrataException {
    return delete(path, recursive, extra, 0, everyFile);
  }

  private List<Long> delete(StrataPath path, boolean recursive, List<JournalEntry> extra, long expectedId,
      AttributeCheck everyFile) throws StrataException {
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
      if (everyFile != null) {
        List<FileInfo> files = new ArrayList<>();
        InodeIndex.collectFiles(inode, f -> files.add(InodeViews.snapshot(f, InodeViews.pathOf(f))));
        for (FileInfo f : files) {
          everyFile.check(f);
        }
      }
      if (inode instanceof InodeDirectory && !((InodeDirectory) inode).children.isEmpty() && !recursive) {
        throw new DirectoryNotEmptyException("Cannot delete " + path + ": the directory is not empty ("
            + ((InodeDirectory) inode).children.size() + " entries) and the delete is not recursive");
      }
      List<Long> removedFiles = new ArrayList<>();
      index.removeSubtree(inode, removedFiles);
      inode.parent.children.remove(inode.name);
      index.childLeft(inode.parent);
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
      for (SubtreeWalk w : walks) {
        w.moved(inode);
      }
      long now = clock.millis();
      inode.parent.children.remove(inode.name);
      index.childLeft(inode.parent);
      stamp(inode);
      inode.parent.modificationTimeMs = now;
      inode.name = dst.name();
      inode.parent = dstParent;
      dstParent.children.put(inode.name, inode);
      dstParent.modificationTimeMs = now;
      index.pinsMayHaveChanged();
      index.renamed(inode);
      journal.append(List.of(new JournalEntry.Rename(src.toString(), dst.toString(), now)));
    } finally {
      lock.writeLock().unlock();
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
      check.check(InodeViews.snapshot(inode, path.toString()));
      JournalEntry.SetAttribute a = new JournalEntry.SetAttribute(inode.id, pinned, ttlMs,
          ttlAction == null ? null : ttlAction.name(), persistence == null ? null : persistence.name(), ufsMtimeMs);
      InodeAttributes.apply(index, inode, a);
      List<JournalEntry> entries = new ArrayList<>(2);
      entries.add(a);
      if (persistence == PersistenceState.PERSISTED) {
        InodeAttributes.markAncestorsPersisted(inode, entries);
      }
      journal.append(entries);
      return InodeViews.snapshot(inode, path.toString());
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
      InodeAttributes.applyTree(index, inode, a);
      journal.append(List.of(a));
      return InodeViews.snapshot(inode, path.toString());
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
      InodeFile f = index.file(fileId);
      if (f == null) {
        return null;
      }
      path = InodeViews.pathOf(f);
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

  long now() {
    return clock.millis();
  }

  /** The tree's indexes, for {@link UfsMerge} (write lock held). */
  InodeIndex index() {
    return index;
  }

  /** Marks {@code inode} changed now. Write lock held. */
  void stamp(Inode inode) {
    index.stamp(inode);
  }

  InodeDirectory root() {
    return root;
  }

  // ---- recovery (see InodeTreeRecovery) ----

  /**
   * Applies a journaled change during replay (no journaling, times and ids from the entry). Returns the
   * ids of files a Delete removed, empty otherwise.
   */
  public List<Long> apply(JournalEntry entry) throws StrataException {
    lock.writeLock().lock();
    try {
      return InodeTreeRecovery.apply(root, index, entry);
    } finally {
      lock.writeLock().unlock();
    }
  }

}
