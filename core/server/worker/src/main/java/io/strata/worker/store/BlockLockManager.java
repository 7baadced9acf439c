package io.strata.worker.store;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Per-block read/write locks. Readers share a block and pin it: while any read lock is held, no writer
 * (eviction, move, removal) gets the block. A writer excludes readers and other writers.
 *
 * <p>Locks are not owned by threads, unlike {@link java.util.concurrent.locks.ReentrantReadWriteLock}'s
 * read lock: a streaming read may take its lock on one thread and release it on another, so each block's
 * state is a reader count and a writer flag, guarded by that block's monitor, with waiters parked by
 * {@code wait}/{@code notifyAll}. A thread may take several read locks on one block (each counts), but
 * one that holds a write lock and asks again for the same block, read or write, waits forever. There is no
 * writer preference, so a blocking {@link #writeLock} waits while readers keep arriving; eviction and
 * moves use {@link #tryWriteLock}, which never waits and so never holds readers back. Acquisition, like
 * {@link java.util.concurrent.locks.Lock#lock()}, is not interruptible: an interrupt that arrives while
 * waiting is kept and re-asserted once the lock is held.
 *
 * <p>Memory: the per-block entries live in a pool keyed by block id, with a reference count of threads
 * holding or waiting for the block's lock; an entry is created on first use and removed when its count
 * drops to 0, so the pool holds only blocks in use, never every block seen. The count is changed only
 * under the pool's monitor, so an entry is never handed out after it was removed.
 *
 * <p>Thread-safety: thread-safe. Lock order: the pool monitor and an entry's monitor are never held
 * together, except in {@link #isReadLocked}, which takes the entry inside the pool and is the only place
 * that nests them, so no cycle can form.
 */
public final class BlockLockManager {
  /** One block's lock state. {@code refs} is guarded by the pool; the rest by this entry's monitor. */
  private static final class Entry {
    int refs;
    int readers;
    boolean writer;
  }

  private final Map<Long, Entry> pool = new HashMap<>();

  public BlockLockManager() {}

  /** A read lock on {@code blockId}, waiting while a writer holds it. */
  public BlockLock readLock(long blockId) {
    Entry e = retain(blockId);
    boolean interrupted = false;
    synchronized (e) {
      while (e.writer) {
        try {
          e.wait();
        } catch (InterruptedException ie) {
          interrupted = true;
        }
      }
      e.readers++;
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return new Held(blockId, e, false);
  }

  /** A write lock on {@code blockId}, waiting while readers or another writer hold it. */
  public BlockLock writeLock(long blockId) {
    Entry e = retain(blockId);
    boolean interrupted = false;
    synchronized (e) {
      while (e.writer || e.readers > 0) {
        try {
          e.wait();
        } catch (InterruptedException ie) {
          interrupted = true;
        }
      }
      e.writer = true;
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return new Held(blockId, e, true);
  }

  /** A write lock on {@code blockId} if no one holds the block now, else empty; never waits. */
  public Optional<BlockLock> tryWriteLock(long blockId) {
    Entry e = retain(blockId);
    synchronized (e) {
      if (!e.writer && e.readers == 0) {
        e.writer = true;
        return Optional.of(new Held(blockId, e, true));
      }
    }
    release(blockId, e);
    return Optional.empty();
  }

  /** Whether some read lock on {@code blockId} is held now (a snapshot: it may change at once). */
  public boolean isReadLocked(long blockId) {
    synchronized (pool) {
      Entry e = pool.get(blockId);
      if (e == null) {
        return false;
      }
      synchronized (e) {
        return e.readers > 0;
      }
    }
  }

  /** Entries in the pool now: blocks locked or waited for. For tests of the memory bound. */
  public int poolSize() {
    synchronized (pool) {
      return pool.size();
    }
  }

  /** The entry for {@code blockId}, created if absent, counted as used by the caller. */
  private Entry retain(long blockId) {
    synchronized (pool) {
      Entry e = pool.computeIfAbsent(blockId, id -> new Entry());
      e.refs++;
      return e;
    }
  }

  private void release(long blockId, Entry e) {
    synchronized (pool) {
      if (--e.refs == 0) {
        pool.remove(blockId);
      }
    }
  }

  /** Holders plus waiters of {@code blockId}'s lock; 0 when it has no entry. For tests. */
  int refCount(long blockId) {
    synchronized (pool) {
      Entry e = pool.get(blockId);
      return e == null ? 0 : e.refs;
    }
  }

  private final class Held implements BlockLock {
    private final long blockId;
    private final Entry entry;
    private final boolean write;
    private final AtomicBoolean closed = new AtomicBoolean();

    Held(long blockId, Entry entry, boolean write) {
      this.blockId = blockId;
      this.entry = entry;
      this.write = write;
    }

    @Override
    public long blockId() {
      return blockId;
    }

    @Override
    public void close() {
      if (!closed.compareAndSet(false, true)) {
        return;
      }
      synchronized (entry) {
        if (write) {
          entry.writer = false;
          entry.notifyAll();
        } else if (--entry.readers == 0) {
          entry.notifyAll();
        }
      }
      release(blockId, entry);
    }

    @Override
    public String toString() {
      return (write ? "write" : "read") + " lock on block " + blockId + (closed.get() ? " (released)" : "");
    }
  }
}
