package io.strata.master.file;

import io.strata.common.time.Deadlines;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The bookkeeping the {@link InodeTree} keeps beside its inodes: inodes by id, the id counter, file and
 * directory counts, files waiting for the persist scheduler, inodes with a TTL and pinned inodes, the pin
 * list's version, and the change sequence the UFS merge judges old views by. Every change to an inode's
 * membership (created, removed, persistence, pin, TTL) goes through here, so the indexes never disagree
 * with the tree.
 *
 * <p>Not thread-safe on its own: guarded by the tree's lock (read for queries, write for changes), which
 * every caller holds.
 */
final class InodeIndex {
  private final InodeDirectory root;
  private final Map<Long, InodeFile> filesById = new HashMap<>();
  /** Directories by id (attribute changes and their replay find directories by id). */
  private final Map<Long, InodeDirectory> dirsById = new HashMap<>();
  private long nextId = 1;
  private long fileCount;
  private long directoryCount = 1;
  /** Complete files waiting for the persist scheduler, by id (so the scheduler can scan it a batch at a time). */
  private final java.util.NavigableSet<Long> toPersist = new java.util.TreeSet<>();
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
  /** Whether any file here ever had a UFS content tag ({@link #contentTag}); until one has, a rename clears none. */
  private boolean contentTagged;

  InodeIndex(InodeDirectory root, long nowMs) {
    this.root = root;
    this.pinVersion = Math.max(1, nowMs) * 1024;
  }

  // ---- UFS content tags ----

  /** Records {@code f}'s UFS content tag (an object store's ETag; "" when its UFS has none). */
  void contentTag(InodeFile f, String tag) {
    f.ufsContentTag = tag;
    contentTagged |= !tag.isEmpty();
  }

  /**
   * {@code moved} was renamed (live or in replay, alike): its files' UFS content tags are dropped, as a rename in an
   * object store is a copy whose ETag may differ from the source's (S3 multipart uploads, SSE-KMS), which would
   * otherwise read as a change made outside Strata. Their length and mtime still decide. A walk of the subtree, only
   * once some file was ever tagged (object-store mounts); a cluster without them never walks.
   */
  void renamed(Inode moved) {
    if (!contentTagged) {
      return;
    }
    java.util.ArrayDeque<Inode> todo = new java.util.ArrayDeque<>();
    todo.push(moved);
    while (!todo.isEmpty()) {
      Inode i = todo.pop();
      if (i instanceof InodeFile f) {
        f.ufsContentTag = "";
      } else if (i instanceof InodeDirectory d) {
        d.children.values().forEach(todo::push);
      }
    }
  }

  // ---- ids and membership ----

  long newId() {
    return nextId++;
  }

  long nextId() {
    return nextId;
  }

  /** Replay: ids up to {@code next} (exclusive) are taken. */
  void idsTakenBelow(long next) {
    nextId = Math.max(nextId, next);
  }

  void addFile(InodeFile f) {
    filesById.put(f.id, f);
    fileCount++;
  }

  void addDirectory(InodeDirectory d) {
    dirsById.put(d.id, d);
    directoryCount++;
  }

  InodeFile file(long id) {
    return filesById.get(id);
  }

  Iterable<InodeFile> files() {
    return filesById.values();
  }

  Inode byId(long id) {
    if (id == root.id) {
      return root;
    }
    Inode f = filesById.get(id);
    return f != null ? f : dirsById.get(id);
  }

  /** Forgets {@code top} and everything under it; the removed files' ids go to {@code removedFiles}. */
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

  long fileCount() {
    return fileCount;
  }

  long directoryCount() {
    return directoryCount;
  }

  // ---- persistence, pins, TTLs ----

  void setPersistence(Inode inode, PersistenceState state) {
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

  void setPinned(Inode inode, boolean pinned) {
    if (pinned == inode.pinned) {
      return;
    }
    inode.pinned = pinned;
    if (pinned) {
      pinnedInodes.put(inode.id, inode);
    } else {
      pinnedInodes.remove(inode.id);
    }
    pinVersion++;
  }

  void setTtl(Inode inode, long ttlMs) {
    inode.ttlMs = ttlMs;
    if (ttlMs >= 0) {
      withTtl.put(inode.id, inode);
    } else {
      withTtl.remove(inode.id);
    }
  }

  /** The set of pinned files may have changed (a rename, a new file under a pinned directory). */
  void pinsMayHaveChanged() {
    pinVersion++;
  }

  long pinVersion() {
    return pinVersion;
  }

  List<Long> filesToPersist() {
    return new ArrayList<>(toPersist);
  }

  /** At most {@code limit} ids of files waiting to be persisted, in id order after {@code afterId}. */
  List<Long> filesToPersistAfter(long afterId, int limit) {
    List<Long> out = new ArrayList<>(Math.min(limit, 64));
    for (java.util.Iterator<Long> it = toPersist.tailSet(afterId, false).iterator(); it.hasNext() && out.size() < limit; ) {
      out.add(it.next());
    }
    return out;
  }

  /** Which of {@code ids} are files waiting to be persisted. */
  Set<Long> toPersistAmong(java.util.Collection<Long> ids) {
    Set<Long> out = new HashSet<>();
    for (long id : ids) {
      if (toPersist.contains(id)) {
        out.add(id);
      }
    }
    return out;
  }

  /** Ids of files pinned themselves or through a pinned directory. */
  List<Long> pinnedFileIds() {
    Set<Long> out = new HashSet<>();
    for (Inode top : pinnedInodes.values()) {
      collectFiles(top, f -> out.add(f.id));
    }
    return new ArrayList<>(out);
  }

  /** Snapshots of the inodes whose TTL ran out at {@code nowMs}. */
  List<FileInfo> expired(long nowMs) {
    List<FileInfo> out = new ArrayList<>();
    for (Inode i : withTtl.values()) {
      if (ttlRanOut(i.creationTimeMs, i.ttlMs, nowMs)) {
        out.add(InodeViews.snapshot(i, InodeViews.pathOf(i)));
      }
    }
    return out;
  }

  /**
   * Whether a TTL of {@code ttlMs} (-1: none) counted from {@code creationTimeMs} ran out at {@code nowMs}.
   * The expiry saturates, so a TTL of {@code Long.MAX_VALUE} ("never") never runs out.
   */
  static boolean ttlRanOut(long creationTimeMs, long ttlMs, long nowMs) {
    return ttlMs >= 0 && Deadlines.reachedMillis(nowMs, Deadlines.plusMillis(creationTimeMs, ttlMs));
  }

  static boolean isPinned(Inode inode) {
    for (Inode i = inode; i != null; i = i.parent) {
      if (i.pinned) {
        return true;
      }
    }
    return false;
  }

  static void collectFiles(Inode top, Consumer<InodeFile> sink) {
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

  // ---- change sequence (see UfsMerge) ----

  /** Marks {@code inode} changed now. */
  void stamp(Inode inode) {
    inode.changedSeq = ++changeSeq;
  }

  /** Marks that a child of {@code dir} left it now. */
  void childLeft(InodeDirectory dir) {
    dir.removedSeq = ++changeSeq;
  }

  long changeSeq() {
    return changeSeq;
  }
}
