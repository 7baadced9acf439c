package io.strata.worker.store;

/**
 * A held read or write lock on one block, from {@link BlockLockManager}; {@link #close} releases it.
 *
 * <p>Thread-safety: not owned by a thread. Any thread may close it (a gRPC stream may end on another
 * thread than the one that opened it), and closing more than once, from any threads, releases it once.
 */
public interface BlockLock extends AutoCloseable {
  /** The block this lock is on. */
  long blockId();

  /** Releases the lock; later calls do nothing. */
  @Override
  void close();
}
