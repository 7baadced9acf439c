package io.strata.worker.ufs;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.worker.store.BlockStore;
import io.strata.worker.ufs.MasterClient.BlockSource;
import io.strata.worker.ufs.MasterClient.Location;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Caches blocks in the background when asked (passive caching, fs load). A request for a block already
 * cached, queued, being cached or being loaded from the UFS is accepted without new work; otherwise it
 * goes to the bounded async-cache executor, whose full queue refuses it (accepted = false, the caller
 * may ask again later). A task asks the master where the block is: it copies it from another live
 * worker the master names (never any other address), trying each in turn, else loads it from the UFS
 * through the {@link UfsBlockLoader}, else gives up with a log line. A copy is committed locally and at
 * the master like a written block.
 *
 * <p>Thread-safe: {@link #submit} from any thread, returns at once; tasks run on the injected executor.
 */
final class AsyncCacheManager {
  private static final Logger LOG = LoggerFactory.getLogger(AsyncCacheManager.class);

  /** What one cache task did. */
  enum Result { ALREADY_CACHED, FROM_WORKER, FROM_UFS, BUSY, NO_SOURCE }

  private final BlockStore store;
  private final MasterClient master;
  private final PeerClient peers;
  private final UfsBlockLoader loader;
  private final Executor executor;
  private final Set<Long> pending = ConcurrentHashMap.newKeySet();

  /** {@code executor} must refuse work when its queue is full: that bound is the request queue's. */
  AsyncCacheManager(BlockStore store, MasterClient master, PeerClient peers, UfsBlockLoader loader,
      Executor executor) {
    this.store = store;
    this.master = master;
    this.peers = peers;
    this.loader = loader;
    this.executor = executor;
  }

  /** Queues a background cache of {@code blockId}; false when the queue is full. */
  boolean submit(long blockId) throws StrataException {
    if (inStore(blockId) || loader.isLoading(blockId)) {
      return true;
    }
    if (!pending.add(blockId)) {
      return true;
    }
    try {
      executor.execute(() -> {
        try {
          Result r = cacheNow(blockId);
          LOG.debug("Async cache of block {}: {}", blockId, r);
        } catch (StrataException | RuntimeException e) {
          LOG.warn("Cannot cache block {}: {}", blockId, e.getMessage());
        } finally {
          pending.remove(blockId);
        }
      });
      return true;
    } catch (RejectedExecutionException e) {
      pending.remove(blockId);
      return false;
    }
  }

  /** Requests queued or running. */
  int pending() {
    return pending.size();
  }

  /** Caches {@code blockId} now, on the calling thread. */
  Result cacheNow(long blockId) throws StrataException {
    if (inStore(blockId)) {
      return Result.ALREADY_CACHED;
    }
    BlockSource src = master.blockSource(blockId);
    if (src.length() == 0) {
      return Result.NO_SOURCE; // an empty block holds nothing to cache
    }
    long self = master.workerId();
    for (Location loc : src.locations()) {
      if (loc.workerId() == self) {
        continue;
      }
      try {
        return copyFromPeer(src, loc) ? Result.FROM_WORKER : Result.BUSY;
      } catch (StrataException e) {
        LOG.info("Copying block {} from worker {} failed: {}; trying the next source", blockId, loc.address(),
            e.getMessage());
      }
    }
    if (src.ufs() != null) {
      return loader.cache(src) ? Result.FROM_UFS : Result.BUSY;
    }
    LOG.info("Cannot cache block {}: no other live worker holds it and its file is not persisted", blockId);
    return Result.NO_SOURCE;
  }

  /** False when the block is already here or another writer is filling it. */
  private boolean copyFromPeer(BlockSource src, Location loc) throws StrataException {
    BlockStore.TempBlock temp;
    try {
      temp = store.createTemp(src.blockId(), src.length());
    } catch (AlreadyExistsException e) {
      return false;
    }
    try {
      peers.read(loc.address(), src.blockId(), src.length(), temp::append);
    } catch (StrataException | RuntimeException e) {
      store.abort(temp);
      if (e instanceof io.strata.common.exception.CorruptBlockException c) {
        CorruptReports.report(master, src.blockId(), loc.address(), c);
      }
      throw e;
    }
    try {
      LocalCommit.commit(store, master, temp);
      if (src.ufs() != null) {
        store.markEvictable(java.util.List.of(src.blockId())); // the file is persisted
      }
    } catch (java.io.IOException e) {
      throw UfsErrors.wrap("Committing block " + src.blockId() + " copied from worker " + loc.address(), e);
    }
    return true;
  }

  private boolean inStore(long blockId) throws StrataException {
    try {
      store.get(blockId);
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }
}
