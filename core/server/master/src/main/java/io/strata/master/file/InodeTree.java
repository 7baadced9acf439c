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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final InodeDirectory root;
  private final Map<Long, InodeFile> filesById = new HashMap<>();
  private long nextId = 1;
  private long fileCount;
  private long directoryCount = 1;

  public InodeTree(Clock clock) {
    this(clock, JournalSink.NONE);
  }

  /** A tree that records every change in {@code journal}, under its lock, in apply order. */
  public InodeTree(Clock clock, JournalSink journal) {
    this.clock = clock;
    this.journal = journal;
    this.root = new InodeDirectory(0, "", null, clock.millis(), DEFAULT_OWNER, DEFAULT_GROUP, 0755);
  }

  // ---- lookups (lock held by caller) ----

  private Inode lookup(StrataPath path) {
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
   * entries go to {@code entries}, which the caller journals as one operation with its own entry.
   */
  private InodeDirectory parentFor(StrataPath path, boolean recursive, String op, List<JournalEntry> entries)
      throws StrataException {
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
        next = new InodeDirectory(nextId++, part, dir, now, DEFAULT_OWNER, DEFAULT_GROUP, 0755);
        dir.children.put(part, next);
        dir.modificationTimeMs = now;
        directoryCount++;
        entries.add(new JournalEntry.Mkdir(next.id, walked.toString(), 0755, now));
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

  private static FileInfo snapshot(Inode inode, String path) {
    if (inode instanceof InodeDirectory) {
      InodeDirectory d = (InodeDirectory) inode;
      return new FileInfo(d.id, path, d.name, true, 0, 0, true, d.creationTimeMs, d.modificationTimeMs,
          d.owner, d.group, d.mode, d.children.size());
    }
    InodeFile f = (InodeFile) inode;
    return new FileInfo(f.id, path, f.name, false, f.length, f.blockSize, f.complete, f.creationTimeMs,
        f.modificationTimeMs, f.owner, f.group, f.mode, 0);
  }

  private static String childPath(String parent, String name) {
    return parent.equals("/") ? "/" + name : parent + "/" + name;
  }

  // ---- operations ----

  public FileInfo createFile(StrataPath path, long blockSize, boolean recursive, int mode) throws StrataException {
    List<JournalEntry> entries = new ArrayList<>(1);
    lock.writeLock().lock();
    try {
      if (path.isRoot()) {
        throw new AlreadyExistsException("Cannot create file /: the root directory exists");
      }
      InodeDirectory parent = parentFor(path, recursive, "create file", entries);
      Inode existing = parent.children.get(path.name());
      if (existing != null) {
        throw new AlreadyExistsException("Cannot create file " + path + ": a "
            + (existing.isDirectory() ? "directory" : "file") + " with that path exists");
      }
      long now = clock.millis();
      InodeFile file = new InodeFile(nextId++, path.name(), parent, now, DEFAULT_OWNER, DEFAULT_GROUP,
          mode == 0 ? 0644 : mode, blockSize);
      parent.children.put(file.name, file);
      parent.modificationTimeMs = now;
      filesById.put(file.id, file);
      fileCount++;
      entries.add(new JournalEntry.CreateFile(file.id, path.toString(), blockSize, file.mode, now));
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
      journal.append(List.of(new JournalEntry.CompleteFile(file.id, length, file.modificationTimeMs)));
      return snapshot(file, path.toString());
    } finally {
      lock.writeLock().unlock();
    }
  }

  public FileInfo createDirectory(StrataPath path, boolean recursive, boolean allowExists, int mode)
      throws StrataException {
    List<JournalEntry> entries = new ArrayList<>(1);
    lock.writeLock().lock();
    try {
      if (path.isRoot()) {
        if (allowExists) {
          return snapshot(root, "/");
        }
        throw new AlreadyExistsException("Cannot create directory /: it exists");
      }
      InodeDirectory parent = parentFor(path, recursive, "create directory", entries);
      Inode existing = parent.children.get(path.name());
      if (existing != null) {
        if (existing.isDirectory() && allowExists) {
          return snapshot(existing, path.toString());
        }
        throw new AlreadyExistsException("Cannot create directory " + path + ": a "
            + (existing.isDirectory() ? "directory" : "file") + " with that path exists");
      }
      long now = clock.millis();
      InodeDirectory dir = new InodeDirectory(nextId++, path.name(), parent, now, DEFAULT_OWNER, DEFAULT_GROUP,
          mode == 0 ? 0755 : mode);
      parent.children.put(dir.name, dir);
      parent.modificationTimeMs = now;
      directoryCount++;
      entries.add(new JournalEntry.Mkdir(dir.id, path.toString(), dir.mode, now));
      return snapshot(dir, path.toString());
    } finally {
      journalAndUnlock(entries);
    }
  }

  /**
   * Journals what an operation changed (also when it failed after creating parents: they exist in memory)
   * as one operation, then releases the write lock.
   */
  private void journalAndUnlock(List<JournalEntry> entries) {
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

  /** Deletes path and everything under it; returns the ids of the files removed. */
  public List<Long> delete(StrataPath path, boolean recursive) throws StrataException {
    lock.writeLock().lock();
    try {
      if (path.isRoot()) {
        throw new InvalidArgumentException("Cannot delete /: the root directory cannot be deleted");
      }
      Inode inode = require(path);
      if (inode instanceof InodeDirectory && !((InodeDirectory) inode).children.isEmpty() && !recursive) {
        throw new DirectoryNotEmptyException("Cannot delete " + path + ": the directory is not empty ("
            + ((InodeDirectory) inode).children.size() + " entries) and the delete is not recursive");
      }
      List<Long> removedFiles = new ArrayList<>();
      removeSubtree(inode, removedFiles);
      inode.parent.children.remove(inode.name);
      inode.parent.modificationTimeMs = clock.millis();
      journal.append(List.of(new JournalEntry.Delete(path.toString(), inode.parent.modificationTimeMs)));
      return removedFiles;
    } finally {
      lock.writeLock().unlock();
    }
  }

  private void removeSubtree(Inode top, List<Long> removedFiles) {
    List<Inode> stack = new ArrayList<>();
    stack.add(top);
    while (!stack.isEmpty()) {
      Inode inode = stack.remove(stack.size() - 1);
      if (inode instanceof InodeDirectory) {
        stack.addAll(((InodeDirectory) inode).children.values());
        directoryCount--;
      } else {
        filesById.remove(inode.id);
        removedFiles.add(inode.id);
        fileCount--;
      }
    }
  }

  public void rename(StrataPath src, StrataPath dst) throws StrataException {
    lock.writeLock().lock();
    try {
      if (src.isRoot()) {
        throw new InvalidArgumentException("Cannot rename /: the root directory cannot be moved");
      }
      if (dst.isRoot()) {
        throw new AlreadyExistsException("Cannot rename " + src + " to /: the root directory exists");
      }
      Inode inode = require(src);
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
      long now = clock.millis();
      inode.parent.children.remove(inode.name);
      inode.parent.modificationTimeMs = now;
      inode.name = dst.name();
      inode.parent = dstParent;
      dstParent.children.put(inode.name, inode);
      dstParent.modificationTimeMs = now;
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
        InodeDirectory d = new InodeDirectory(m.id(), p.name(), parent, m.timeMs(), DEFAULT_OWNER, DEFAULT_GROUP,
            m.mode());
        parent.children.put(d.name, d);
        parent.modificationTimeMs = m.timeMs();
        directoryCount++;
        nextId = Math.max(nextId, m.id() + 1);
      } else if (entry instanceof JournalEntry.CreateFile c) {
        StrataPath p = StrataPath.of(c.path());
        InodeDirectory parent = (InodeDirectory) require(p.parent());
        InodeFile f = new InodeFile(c.id(), p.name(), parent, c.timeMs(), DEFAULT_OWNER, DEFAULT_GROUP, c.mode(),
            c.blockSize());
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
      } else if (entry instanceof JournalEntry.Delete d) {
        Inode inode = require(StrataPath.of(d.path()));
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
      } else if (entry instanceof JournalEntry.NextInodeId n) {
        nextId = Math.max(nextId, n.nextId());
      } else if (entry instanceof JournalEntry.DirectoryModified m) {
        require(StrataPath.of(m.path())).modificationTimeMs = m.timeMs();
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
      // Last, once nothing re-created under them can move them again.
      List<JournalEntry> dirTimes = new ArrayList<>();
      dirTimes.add(new JournalEntry.DirectoryModified("/", root.modificationTimeMs));
      List<Inode> stack = new ArrayList<>(root.children.values());
      java.util.Collections.reverse(stack);
      while (!stack.isEmpty()) {
        Inode inode = stack.remove(stack.size() - 1);
        String path = pathOf(inode);
        if (inode instanceof InodeDirectory d) {
          out.add(new JournalEntry.Mkdir(d.id, path, d.mode, d.creationTimeMs));
          dirTimes.add(new JournalEntry.DirectoryModified(path, d.modificationTimeMs));
          List<Inode> kids = new ArrayList<>(d.children.values());
          java.util.Collections.reverse(kids);
          stack.addAll(kids);
        } else {
          InodeFile f = (InodeFile) inode;
          out.add(new JournalEntry.CreateFile(f.id, path, f.blockSize, f.mode, f.creationTimeMs));
          if (f.complete) {
            out.add(new JournalEntry.CompleteFile(f.id, f.length, f.modificationTimeMs));
          }
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
