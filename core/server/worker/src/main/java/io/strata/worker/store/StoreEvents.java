package io.strata.worker.store;

import java.util.List;

/**
 * What the block store tells its worker, to pass on to the master in the next heartbeat. Called from
 * whatever thread changed the store (writers, the reserver, the aligner); implementations must be
 * thread-safe and quick (no I/O).
 */
public interface StoreEvents {
  /** A block left this worker: evicted out of the last tier, or removed on request. */
  void blockRemoved(long blockId);

  /** A block moved to another tier. */
  void blockMoved(long blockId, long length, String tier);

  /** A storage dir failed; its blocks are lost. */
  void dirFailed(String path, List<Long> lostBlocks);

  /** Every storage dir has failed: the worker cannot serve. */
  void allDirsFailed();

  /** Events that go nowhere (tests of the store alone). */
  StoreEvents NONE = new StoreEvents() {
    @Override
    public void blockRemoved(long blockId) {}

    @Override
    public void blockMoved(long blockId, long length, String tier) {}

    @Override
    public void dirFailed(String path, List<Long> lostBlocks) {}

    @Override
    public void allDirsFailed() {}
  };
}
