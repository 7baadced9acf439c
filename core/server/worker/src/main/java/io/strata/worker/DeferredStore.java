package io.strata.worker;

import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.worker.store.BlockStore;
import java.io.IOException;
import java.util.List;

/**
 * The block store as the data service sees it while the worker starts: calls that arrive before the
 * real store opens get UNAVAILABLE. Thread-safe (the delegate is set once, volatile).
 */
final class DeferredStore implements BlockStore {
  private volatile BlockStore delegate;

  void set(BlockStore store) {
    this.delegate = store;
  }

  private BlockStore store() throws UnavailableException {
    BlockStore s = delegate;
    if (s == null) {
      throw new UnavailableException("The worker is still starting");
    }
    return s;
  }

  @Override
  public TempBlock createTemp(long blockId, long maxLength) throws StrataException {
    return store().createTemp(blockId, maxLength);
  }

  @Override
  public TempBlock createReserved(long blockId, long maxLength, long waitMs) throws StrataException {
    return store().createReserved(blockId, maxLength, waitMs);
  }

  @Override
  public TempBlock reserved(long blockId) throws StrataException {
    return store().reserved(blockId);
  }

  @Override
  public void markEvictable(java.util.Collection<Long> blockIds) {
    BlockStore s = delegate;
    if (s != null) {
      s.markEvictable(blockIds);
    }
  }

  @Override
  public long awaitedBytes() {
    BlockStore s = delegate;
    return s == null ? 0 : s.awaitedBytes();
  }

  @Override
  public BlockMeta commit(TempBlock temp) throws IOException {
    return store().commit(temp);
  }

  @Override
  public void abort(TempBlock temp) {
    BlockStore s = delegate;
    if (s != null) {
      s.abort(temp);
    }
  }

  @Override
  public void abortWritesOf(java.util.Collection<Long> fileIds) {
    BlockStore s = delegate;
    if (s != null) {
      s.abortWritesOf(fileIds);
    }
  }

  @Override
  public BlockMeta get(long blockId) throws StrataException {
    return store().get(blockId);
  }

  @Override
  public ReadHandle openForRead(long blockId, boolean promote) throws IOException {
    return store().openForRead(blockId, promote);
  }

  @Override
  public void pin(long blockId) {
    BlockStore s = delegate;
    if (s != null) {
      s.pin(blockId);
    }
  }

  @Override
  public void unpin(long blockId) {
    BlockStore s = delegate;
    if (s != null) {
      s.unpin(blockId);
    }
  }

  @Override
  public List<DirReport> dirReports() {
    BlockStore s = delegate;
    return s == null ? List.of() : s.dirReports();
  }

  @Override
  public boolean remove(long blockId) throws IOException {
    return store().remove(blockId);
  }

  @Override
  public List<BlockMeta> committedBlocks() {
    BlockStore s = delegate;
    return s == null ? List.of() : s.committedBlocks();
  }

  @Override
  public long capacityBytes() {
    BlockStore s = delegate;
    return s == null ? 0 : s.capacityBytes();
  }

  @Override
  public long usedBytes() {
    BlockStore s = delegate;
    return s == null ? 0 : s.usedBytes();
  }
}
