package io.strata.master.file;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * A walk over the files at or under one inode, a bounded batch at a time, so that an operation on a huge subtree
 * (free, persist) holds the tree's lock only for a batch and never holds snapshots of the whole subtree at once.
 * Each batch visits at most a given number of inodes (files and directories) in pre-order, children in name order,
 * under the tree's read lock ({@link InodeTreeReads#nextBatch}); between batches the lock is let go and the walk
 * keeps only its position (the names from the top to the last inode visited) and the inodes to skip.
 *
 * <p>What a walk guarantees, whatever changes the tree between batches:
 * <ul>
 *   <li>A file at or under the top for the whole walk, at one path, is visited exactly once.
 *   <li>No file is visited twice. A rename of an inode the walk has visited (wholly, or a directory partly) puts it
 *       on the walk's skip list ({@link #moved}), so moving it ahead of the walk's position, or out and back in,
 *       does not bring it round again; the unvisited rest of a partly visited directory moved is then not visited.
 *   <li>A file created, deleted or moved during the walk is visited at most once, or not at all; each visit is a
 *       snapshot of the file as it was in that batch (the caller checks again what it acts on, by id).
 *   <li>The walk follows its top by id: renamed, it goes on where the top is now; deleted, the walk ends.
 * </ul>
 *
 * <p>Threading: one caller thread drives a walk. Its position is written by that thread under the tree's read
 * lock; its skip list by renames under the write lock, which {@link #moved} is called under; the lock orders the
 * two. A walk is on the tree's list of open walks from {@link InodeTreeReads#walk} until {@link #close}.
 */
final class SubtreeWalk implements AutoCloseable {
  /** A visited file: its snapshot, and whether it is pinned itself or through a directory above it. */
  record Visit(FileInfo file, boolean pinned) {}

  final long topId;
  private final Set<SubtreeWalk> registry;
  /** Names from the top to the last inode visited; null before the first batch. Tree lock held. */
  private List<String> position;
  /** Inodes moved after the walk visited them (or part of them): not visited again. Tree write lock held to add. */
  private final Set<Long> skip = new HashSet<>();
  private boolean done;
  /** The most file snapshots one batch held (tests check the bound). */
  private int largestBatch;

  SubtreeWalk(long topId, Set<SubtreeWalk> registry) {
    this.topId = topId;
    this.registry = registry;
  }

  /** Whether the walk has visited everything (or its top is gone). */
  boolean done() {
    return done;
  }

  /** The most files one batch handed out so far. */
  int largestBatch() {
    return largestBatch;
  }

  @Override
  public void close() {
    registry.remove(this);
  }

  /**
   * The next batch, visiting at most {@code maxInodes} inodes from the walk's position; {@code top} is the walk's
   * top inode as the tree has it now (null: gone). The tree's read lock is held.
   */
  List<Visit> next(Inode top, int maxInodes) {
    List<Visit> out = new ArrayList<>();
    if (done) {
      return out;
    }
    if (top == null) {
      done = true;
      return out;
    }
    if (!(top instanceof InodeDirectory dir)) {
      out.add(visit(top));
      done = true;
      largestBatch = Math.max(largestBatch, 1);
      return out;
    }
    Deque<Iterator<Inode>> levels = new ArrayDeque<>();
    List<String> at = new ArrayList<>(); // names of the directory whose children the innermost level iterates
    resume(dir, levels, at);
    int visited = 0;
    while (!levels.isEmpty()) {
      Iterator<Inode> it = levels.peek();
      if (!it.hasNext()) {
        levels.pop();
        if (!at.isEmpty()) {
          at.remove(at.size() - 1);
        }
        continue;
      }
      if (visited >= Math.max(1, maxInodes)) {
        break;
      }
      Inode child = it.next();
      visited++;
      position = new ArrayList<>(at);
      position.add(child.name);
      if (skip.contains(child.id)) {
        continue;
      }
      if (child instanceof InodeDirectory d) {
        levels.push(d.children.values().iterator());
        at.add(child.name);
      } else {
        out.add(visit(child));
      }
    }
    if (levels.isEmpty()) {
      done = true;
    }
    largestBatch = Math.max(largestBatch, out.size());
    return out;
  }

  /** Rebuilds the iterators that continue from {@link #position}, innermost first in {@code levels}. */
  private void resume(InodeDirectory top, Deque<Iterator<Inode>> levels, List<String> at) {
    if (position == null) {
      levels.push(top.children.values().iterator());
      return;
    }
    InodeDirectory dir = top;
    for (int i = 0; i < position.size(); i++) {
      String name = position.get(i);
      levels.push(dir.children.tailMap(name, false).values().iterator()); // the rest of this level
      Inode child = dir.children.get(name);
      if (!(child instanceof InodeDirectory d) || skip.contains(d.id)) {
        return; // a file, or gone, moved away or skipped: on after it at this level
      }
      at.add(name);
      if (i == position.size() - 1) {
        levels.push(d.children.values().iterator()); // entered last batch, its children not visited yet
        return;
      }
      dir = d;
    }
  }

  private static Visit visit(Inode file) {
    return new Visit(InodeViews.snapshot(file, InodeViews.pathOf(file)), InodeIndex.isPinned(file));
  }

  /**
   * {@code inode} is about to be renamed (tree write lock held): when it lies under the walk's top at or before the
   * walk's position in its order (visited, or a directory the walk is inside), it is skipped from now on.
   */
  void moved(Inode inode) {
    if (position == null || inode.id == topId) {
      return;
    }
    List<String> rel = new ArrayList<>();
    Inode i = inode;
    for (; i != null && i.id != topId; i = i.parent) {
      rel.add(i.name);
    }
    if (i == null) {
      return; // not under the top
    }
    java.util.Collections.reverse(rel);
    if (inode instanceof InodeDirectory && rel.equals(position)) {
      return; // entered last, none of its children visited yet: wherever it goes, they are visited once or not at all
    }
    if (notAfter(rel, position)) {
      skip.add(inode.id);
    }
  }

  /** Whether path {@code a} comes at or before {@code b} in the walk's order (pre-order, children by name). */
  static boolean notAfter(List<String> a, List<String> b) {
    for (int k = 0; k < Math.min(a.size(), b.size()); k++) {
      int c = a.get(k).compareTo(b.get(k));
      if (c != 0) {
        return c < 0;
      }
    }
    return a.size() <= b.size(); // equal, or a directory holding b
  }
}
