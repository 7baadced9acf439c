package io.strata.master.file;

import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.path.StrataPath;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Keeps the changes that change the under file system from overlapping on related paths: deletes, renames, and the
 * placing of a file's UFS copy (a CACHE_THROUGH complete's, a persist's). Each holds its paths (a delete its own, a
 * rename its source and destination, a placement its file's) from before its UFS call until its tree change is
 * made; a change with a path equal to, under or above a held one waits until that one is done. Without it a delete
 * and a rename of one file could both be answered OK with the file left in Strata and its bytes gone from the UFS
 * (the delete removed the UFS copy, the rename then moved only the inode), or a deleted file's copy left in the UFS
 * to come back at the next listing. Changes of unrelated paths never wait for each other.
 *
 * <p>Thread-safe. It is held across the UFS call of the change that holds it, by design (it orders changes of
 * related paths); a change waits for it with no other lock held (it is taken before any of the master's locks),
 * for at most {@link #WAIT_MS}, then fails UNAVAILABLE naming what it waited for. A waiter holds a handler thread,
 * so at most {@link #WAITERS_MAX} wait at once and one more fails UNAVAILABLE at once: one slow change of a
 * directory cannot take every handler thread (and with them heartbeats and commits).
 */
final class PathGuard {
  /** The longest a change waits for a change of a related path (a slow UFS call: an S3 rename copies). */
  static final long WAIT_MS = TimeUnit.SECONDS.toMillis(30);
  /** Most changes waiting at once. */
  static final int WAITERS_MAX = 32;

  private final List<List<StrataPath>> held = new ArrayList<>();
  /** The thread holding each held change (by identity), so {@link #busy} does not count a caller's own. */
  private final java.util.Map<List<StrataPath>, Thread> owners = new java.util.IdentityHashMap<>();
  /** The paths of the changes waiting now: {@link #tryHold} yields to them, so they are not starved. */
  private final List<List<StrataPath>> waiters = new ArrayList<>();
  private int waiting;

  /** Held paths, released by {@link #close}. */
  interface Held extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Waits until none of {@code paths} is related to a held path, nor to one a change that came before this one waits
   * for (first come, first served among related changes: a stream of changes under a directory cannot keep a change
   * of the directory waiting), then holds them.
   */
  Held hold(String change, StrataPath... paths) throws StrataException {
    return hold(change, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS), paths);
  }

  /** As {@link #hold(String, StrataPath...)}, waiting until {@code deadline} ({@link System#nanoTime}) at most. */
  Held hold(String change, long deadline, StrataPath... paths) throws StrataException {
    List<StrataPath> mine = List.of(paths);
    synchronized (this) {
      List<StrataPath> blocking = conflict(mine);
      if (blocking == null) {
        blocking = related(mine, waiters);
      }
      if (blocking != null) {
        if (waiting >= WAITERS_MAX) {
          throw new UnavailableException(change + ": a change of " + blocking + " is in progress and " + waiting
              + " changes wait already; retry");
        }
        waiting++;
        waiters.add(mine);
        try {
          for (; blocking != null; blocking = blockingWaiter(mine)) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
              throw new UnavailableException(change + ": a change of " + blocking + " is still in progress; "
                  + "retry");
            }
            try {
              TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new UnavailableException(change + ": interrupted waiting for a change of " + blocking);
            }
          }
        } finally {
          waiting--;
          waiters.removeIf(w -> w == mine);
          notifyAll(); // a change that waited behind this one may go now
        }
      }
      held.add(mine);
      owners.put(mine, Thread.currentThread());
    }
    return () -> release(mine);
  }

  /**
   * Holds {@code paths} when none is related to a held path or to one a change waits for, without waiting; null
   * otherwise (for a caller that tries again later rather than hold its thread; yielding to waiters, many such
   * callers on paths under a directory cannot keep a delete or rename of the directory waiting).
   */
  synchronized Held tryHold(StrataPath... paths) {
    List<StrataPath> mine = List.of(paths);
    if (conflict(mine) != null || related(mine, waiters) != null) {
      return null;
    }
    held.add(mine);
    owners.put(mine, Thread.currentThread());
    return () -> release(mine);
  }

  private synchronized void release(List<StrataPath> mine) {
    held.removeIf(h -> h == mine);
    owners.remove(mine);
    notifyAll();
  }

  /**
   * Whether a change of another thread holds a path related to {@code path} now (the metadata sync leaves such paths
   * alone; a change's own loads, on its own thread, go on). A leaf: may be asked under the tree's lock, as it takes no
   * other lock.
   */
  synchronized boolean busy(StrataPath path) {
    for (List<StrataPath> h : held) {
      if (owners.get(h) != Thread.currentThread() && related(List.of(path), List.of(h)) != null) {
        return true;
      }
    }
    return false;
  }

  /** Changes waiting now (tests). */
  synchronized int waiting() {
    return waiting;
  }

  /** Changes holding paths now (tests). */
  synchronized int size() {
    return held.size();
  }

  /** A held change, or a change waiting ahead of {@code mine}, with a path related to one of its, or null. */
  private List<StrataPath> blockingWaiter(List<StrataPath> mine) {
    List<StrataPath> c = conflict(mine);
    if (c != null) {
      return c;
    }
    for (List<StrataPath> w : waiters) {
      if (w == mine) {
        return null; // only those that came first
      }
      if (related(mine, List.of(w)) != null) {
        return w;
      }
    }
    return null;
  }

  /** A held change with a path related to one of {@code mine}, or null. */
  private List<StrataPath> conflict(List<StrataPath> mine) {
    return related(mine, held);
  }

  /** A change among {@code changes} with a path related to one of {@code mine}, or null. */
  private static List<StrataPath> related(List<StrataPath> mine, List<List<StrataPath>> changes) {
    for (List<StrataPath> other : changes) {
      for (StrataPath a : mine) {
        for (StrataPath b : other) {
          if (a.equals(b) || a.isUnder(b) || b.isUnder(a)) {
            return other;
          }
        }
      }
    }
    return null;
  }
}
