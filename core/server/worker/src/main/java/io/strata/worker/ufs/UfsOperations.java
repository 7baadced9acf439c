package io.strata.worker.ufs;

import io.strata.common.exception.StrataException;

/**
 * What the worker's data service asks of its under file system and caching layer, in domain terms.
 * Implementations are thread-safe; every method returns quickly except {@link #openFileWrite}, which
 * makes one master RPC and one UFS create.
 */
public interface UfsOperations {
  /**
   * Serves a read of a block this worker does not hold from the under file system: uncached when
   * {@code noCache}, else loading it into the store while streaming the range. Returns at once; the
   * outcome reaches {@code sink}.
   */
  void readThrough(long blockId, long offset, long length, boolean noCache, ReadSink sink);

  /**
   * Serves a read from the under file system uncached, whether or not this worker holds the block (a reader
   * found this worker's copy corrupt). Returns at once; the outcome reaches {@code sink}.
   */
  void readUfsOnly(long blockId, long offset, long length, ReadSink sink);

  /** Starts writing the under file system copy of file {@code fileId}, at the place the master names. */
  UfsFileWrite openFileWrite(long fileId) throws StrataException;

  /**
   * Where the master would have several files' UFS copies written, asked in one call (see
   * {@link MasterClient#ufsWriteTargets}); a file left out is opened alone. Blocks for the call.
   */
  default java.util.Map<Long, MasterClient.UfsTarget> ufsWriteTargets(java.util.List<Long> fileIds)
      throws StrataException {
    return java.util.Map.of();
  }

  /**
   * Runs {@code write}'s {@link UfsFileWrite#abort} (UFS I/O: a close and a delete) on the UFS pool, for a caller
   * that must not do UFS I/O itself (the idle watch's timer thread); false, and nothing done, when the pool refuses
   * it (its queue is full, or it is stopping).
   */
  default boolean abortInBackground(UfsFileWrite write) {
    write.abort();
    return true;
  }

  /** As {@link #openFileWrite(long)}, at {@code target}, which the master named for this file already. */
  default UfsFileWrite openFileWrite(long fileId, MasterClient.UfsTarget target) throws StrataException {
    return openFileWrite(fileId);
  }

  /**
   * Tells the master again, in the background, that this worker holds block {@code blockId} (a client
   * read a copy the master did not list); failures are only logged.
   */
  void announce(long blockId);

  /** Queues a background cache of a block; false when the queue is full. */
  boolean cacheBlock(long blockId) throws StrataException;
}
