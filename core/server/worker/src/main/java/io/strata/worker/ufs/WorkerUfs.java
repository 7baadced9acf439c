package io.strata.worker.ufs;

import io.strata.common.exception.StrataException;
import io.strata.server.ufs.UfsManager;
import io.strata.worker.store.BlockStore;
import io.strata.worker.ufs.MasterClient.PersistCommand;
import io.strata.worker.ufs.MasterClient.PersistResult;
import java.io.Closeable;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Executor;

/**
 * A worker's under file system and caching layer: read-through loads, UFS file writes, background
 * caching and persisting, over one store, one master client and one {@link UfsManager}. The worker
 * process creates the executors and the UFS manager and closes them; {@link #close()} closes only the
 * channels to other workers this layer opened.
 *
 * <p>Thread-safe.
 */
public final class WorkerUfs implements UfsOperations, Closeable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(WorkerUfs.class);

  /**
   * Tunables: the UFS read buffer (also the most bytes of a block held per read in flight), how long a
   * reader streamed straight from the UFS may take no data before the worker stops sending to it (a load never
   * waits for its reader), the largest gRPC message, and how
   * long a whole-block read from another worker may take.
   */
  public record Settings(int bufferBytes, long stallTimeoutMs, long maxMessageBytes, long peerReadTimeoutMs) {}

  private final BlockStore store;
  private final MasterClient master;
  private final UfsManager ufs;
  private final PeerClient peers;
  private final java.util.concurrent.atomic.LongAdder ufsBytesWritten = new java.util.concurrent.atomic.LongAdder();
  private final UfsBlockLoader loader;
  private final AsyncCacheManager cache;
  private final FilePersister persister;
  private final Executor ufsIo;

  /**
   * @param ufsIo runs read-through reads and loads
   * @param asyncCache runs background caching; it must refuse work when its queue is full
   * @param persist runs persist commands
   */
  public WorkerUfs(BlockStore store, MasterClient master, UfsManager ufs, Executor ufsIo, Executor asyncCache,
      Executor persist, Settings settings) {
    this.store = store;
    this.master = master;
    this.ufs = ufs;
    this.peers = new PeerClient(settings.maxMessageBytes(), settings.peerReadTimeoutMs());
    this.loader = new UfsBlockLoader(store, master, ufs, ufsIo, settings.bufferBytes(), settings.stallTimeoutMs());
    this.cache = new AsyncCacheManager(store, master, peers, loader, asyncCache);
    this.persister = new FilePersister(store, master, ufs, peers, persist);
    this.ufsIo = ufsIo;
  }

  @Override
  public void announce(long blockId) {
    try {
      ufsIo.execute(() -> {
        try {
          BlockStore.BlockMeta meta = store.get(blockId);
          master.announce(blockId, meta.length(), meta.tier());
        } catch (StrataException | RuntimeException e) {
          LOG.debug("Announcing block {} to the master failed: {}", blockId, e.toString());
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      LOG.debug("Announcing block {} skipped: the worker is closing", blockId);
    }
  }

  @Override
  public boolean abortInBackground(UfsFileWrite write) {
    try {
      ufsIo.execute(write::abort);
      return true;
    } catch (java.util.concurrent.RejectedExecutionException e) {
      return false;
    }
  }

  @Override
  public void readThrough(long blockId, long offset, long length, boolean noCache, ReadSink sink) {
    loader.read(blockId, offset, length, noCache, false, sink);
  }

  @Override
  public void readUfsOnly(long blockId, long offset, long length, ReadSink sink) {
    loader.read(blockId, offset, length, true, true, sink);
  }

  @Override
  public UfsFileWrite openFileWrite(long fileId) throws StrataException {
    return UfsFileWriter.open(master, ufs, fileId, ufsBytesWritten);
  }

  @Override
  public java.util.Map<Long, MasterClient.UfsTarget> ufsWriteTargets(java.util.List<Long> fileIds)
      throws StrataException {
    return master.ufsWriteTargets(fileIds);
  }

  @Override
  public UfsFileWrite openFileWrite(long fileId, MasterClient.UfsTarget target) throws StrataException {
    return UfsFileWriter.open(target, ufs, fileId, ufsBytesWritten);
  }

  @Override
  public boolean cacheBlock(long blockId) throws StrataException {
    return cache.submit(blockId);
  }

  /**
   * Starts a persist command from the master; false when it is dropped (that file is already in hand) or refused (the
   * persist queue is full: the master is told in the next heartbeat and sends it again).
   */
  public boolean persist(PersistCommand cmd) {
    return persister.submit(cmd);
  }

  /** Runs {@code action} (it must not block) each time a persist outcome is ready for the master. */
  public void onPersistResult(Runnable action) {
    persister.onResult = action;
  }

  /** Persist outcomes not yet delivered to the master. */
  public List<PersistResult> persistResults() {
    return persister.results();
  }

  /** Drops persist outcomes a successful heartbeat delivered. */
  public void acknowledgePersistResults(Collection<PersistResult> delivered) {
    persister.acknowledge(delivered);
  }

  /** Block reads from the under file system so far (one per load and per uncached stream). */
  public long ufsBlockReads() {
    return loader.ufsBlockReads();
  }

  /** Bytes read from under file systems so far (loads and uncached streams). */
  public long ufsBytesRead() {
    return loader.ufsBytesRead();
  }

  /** Bytes clients wrote to under file systems through this worker (CACHE_THROUGH, THROUGH) so far. */
  public long ufsBytesWritten() {
    return ufsBytesWritten.sum();
  }

  /** Bytes of the files this worker persisted (ASYNC_THROUGH) so far. */
  public long persistedBytes() {
    return persister.persistedBytes.sum();
  }

  /** Persists that failed on this worker so far (the master retries them). */
  public long persistFailures() {
    return persister.failures.sum();
  }

  /** Background cache requests queued or running. */
  public int asyncCachePending() {
    return cache.pending();
  }

  /** Persist commands refused so far because the persist queue was full (each one reported failed). */
  public long persistsRefused() {
    return persister.refused.sum();
  }

  /** Persist commands dropped so far because their file was already queued, being persisted, or reported on. */
  public long persistDuplicates() {
    return persister.duplicates.sum();
  }

  /** Files queued or being persisted now. */
  public int persistsActive() {
    return persister.active();
  }

  /** The store this layer fills. */
  BlockStore store() {
    return store;
  }

  @Override
  public void close() {
    peers.close();
  }
}
