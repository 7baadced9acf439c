package io.strata.worker;

import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.BlockInfoProto;
import io.strata.proto.BlockLocationProto;
import io.strata.proto.BlockMasterWorkerServiceGrpc;
import io.strata.proto.BlockReportProto;
import io.strata.proto.CommitBlockRequest;
import io.strata.proto.GetBlockSourceRequest;
import io.strata.proto.GetBlockSourceResponse;
import io.strata.proto.GetUfsWriteTargetRequest;
import io.strata.proto.GetUfsWriteTargetResponse;
import io.strata.proto.PersistCommandProto;
import io.strata.proto.PersistResultProto;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.StorageDirProto;
import io.strata.proto.WorkerAddressProto;
import io.strata.proto.WorkerHeartbeatRequest;
import io.strata.proto.WorkerHeartbeatResponse;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.StoreEvents;
import io.strata.worker.ufs.MasterClient;
import io.strata.worker.ufs.WorkerUfs;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's side of the master protocol: registers with a full block report and its storage dirs,
 * heartbeats capacity, usage and per-dir state with the blocks removed, lost or moved since the last
 * beat, removes the blocks the master tells it to, commits new blocks, and registers again when the
 * master says it does not know this worker (a master restart, or this worker was marked lost). It is
 * also the store's {@link StoreEvents} sink: changes queue here until the next heartbeat.
 *
 * <p>Heartbeats also carry the pin list version the worker holds and the outcomes of finished persist
 * commands (kept until a heartbeat carrying them succeeds); the replies carry new persist commands
 * (handed to the UFS layer, which ignores a file already in hand) and, when the version changed, the
 * pinned file ids ({@link Pins}). As the worker's {@link MasterClient} it answers where a block comes from
 * and where a UFS file is written. This is the one place the master protocol's protos meet worker types.
 *
 * <p>Thread-safe: {@link #tick()} runs on the worker's one heartbeat thread; {@link #commitBlock} and the
 * {@link MasterClient} calls on RPC and worker executor threads; events from any store thread. The
 * pending changes are guarded by this object's monitor; a heartbeat and block commits exclude each other
 * (a read-write lock), so what a heartbeat reports and asks never crosses a commit in flight.
 */
final class MasterSync implements StoreEvents, MasterClient {
  private static final Logger LOG = LoggerFactory.getLogger(MasterSync.class);

  private final io.strata.common.master.MasterConnection master;
  private final WorkerAddress address;
  private final long rpcTimeoutMs;
  private final long startTimeMs;
  private final Runnable onAllDirsFailed;
  private volatile BlockStore store;
  private volatile WorkerUfs ufs;
  private final Pins pins = new Pins();
  /**
   * Heartbeats (write) exclude block commits (read): a commit never overlaps a heartbeat, so a commit
   * that re-adds a block (cached again after a removal) is never undone by the removal of the old copy
   * reported in a heartbeat already on its way, and a removal the master asks for is never older than a
   * commit the worker already made.
   */
  private final java.util.concurrent.locks.ReentrantReadWriteLock beat =
      new java.util.concurrent.locks.ReentrantReadWriteLock();
  /** Blocks whose removal the master asked for and that are not gone yet (a reader may delay it). */
  private final java.util.Set<Long> removing = java.util.concurrent.ConcurrentHashMap.newKeySet();
  /** Orders announcements against the start of removals: a block being removed is never announced. */
  private final Object removalLock = new Object();
  private volatile long workerId = -1;
  /** Shown with the calls that return mount credentials; from the last registration. */
  private volatile String workerToken = "";
  private final List<Long> removed = new ArrayList<>();
  private final Map<Long, BlockReportProto> moved = new LinkedHashMap<>();
  private boolean loggedUnreachable;

  MasterSync(io.strata.common.master.MasterConnection master, WorkerAddress address, long rpcTimeoutMs, Clock clock,
      Runnable onAllDirsFailed) {
    this.master = master;
    this.address = address;
    this.rpcTimeoutMs = rpcTimeoutMs;
    this.startTimeMs = clock.millis();
    this.onAllDirsFailed = onAllDirsFailed;
  }

  void attach(BlockStore store, WorkerUfs ufs) {
    this.store = store;
    this.ufs = ufs;
  }

  /** The pin list this worker holds. */
  Pins pins() {
    return pins;
  }

  /** A call to the leading master, following failovers within the retry window. */
  private <T> T call(java.util.function.Function<BlockMasterWorkerServiceGrpc.BlockMasterWorkerServiceBlockingStub, T> c)
      throws StrataException {
    return master.call(ch -> c.apply(BlockMasterWorkerServiceGrpc.newBlockingStub(ch)
        .withDeadlineAfter(rpcTimeoutMs, TimeUnit.MILLISECONDS)));
  }

  @Override
  public long workerId() {
    return workerId;
  }

  boolean isRegistered() {
    return workerId >= 0;
  }

  /** One heartbeat (or registration) round; never throws. */
  void tick() {
    try {
      beat.writeLock().lock();
      try {
        if (workerId < 0) {
          register();
        } else {
          heartbeat();
        }
      } finally {
        beat.writeLock().unlock();
      }
      if (loggedUnreachable) {
        LOG.info("Master reachable again");
        loggedUnreachable = false;
      }
    } catch (StrataException e) {
      if (!loggedUnreachable) {
        LOG.warn("Cannot reach the master ({}): {}; retrying every heartbeat", master.describe(), e.getMessage());
        loggedUnreachable = true;
      }
    } catch (RuntimeException e) {
      LOG.error("Heartbeat round failed", e);
    }
  }

  private List<StorageDirProto> dirs() {
    List<StorageDirProto> out = new ArrayList<>();
    for (BlockStore.DirReport d : store.dirReports()) {
      out.add(StorageDirProto.newBuilder().setTier(d.tier()).setTierOrdinal(d.tierOrdinal()).setPath(d.path())
          .setGood(d.good()).setCapacityBytes(d.capacityBytes()).setUsedBytes(d.usedBytes())
          .setLostBlocks(d.lostBlocks()).build());
    }
    return out;
  }

  private void register() throws StrataException {
    // Changes queued so far are part of the full report below.
    synchronized (this) {
      removed.clear();
      moved.clear();
    }
    RegisterWorkerRequest.Builder req = RegisterWorkerRequest.newBuilder()
        .setAddress(WorkerAddressProto.newBuilder().setHost(address.host()).setRpcPort(address.rpcPort())
            .setNode(address.identity().node()).setRack(address.identity().rack()))
        .setCapacityBytes(store.capacityBytes()).setUsedBytes(store.usedBytes()).setStartTimeMs(startTimeMs)
        .addAllDirs(dirs());
    for (BlockStore.BlockMeta b : store.committedBlocks()) {
      req.addBlocks(BlockReportProto.newBuilder().setBlockId(b.blockId()).setLength(b.length()).setTier(b.tier()));
    }
    RegisterWorkerRequest built = req.build();
    io.strata.proto.RegisterWorkerResponse registered = call(s -> s.registerWorker(built));
    workerToken = registered.getWorkerToken();
    workerId = registered.getWorkerId();
    LOG.info("Registered with the master as worker {} ({} blocks reported)", workerId, req.getBlocksCount());
  }

  private void heartbeat() throws StrataException {
    List<Long> gone;
    List<BlockReportProto> changed;
    synchronized (this) {
      gone = new ArrayList<>(removed);
      changed = new ArrayList<>(moved.values());
    }
    WorkerUfs u = ufs;
    List<PersistResult> results = u == null ? List.of() : u.persistResults();
    WorkerHeartbeatRequest.Builder b = WorkerHeartbeatRequest.newBuilder().setWorkerId(workerId)
        .setCapacityBytes(store.capacityBytes()).setUsedBytes(store.usedBytes())
        .addAllRemovedBlockIds(gone).addAllAddedBlocks(changed).addAllDirs(dirs()).setPinVersion(pins.version());
    for (PersistResult r : results) {
      b.addPersistResults(PersistResultProto.newBuilder().setFileId(r.fileId()).setOk(r.ok())
          .setError(r.error() == null ? "" : r.error()).setLength(r.length()));
    }
    WorkerHeartbeatRequest hb = b.build();
    WorkerHeartbeatResponse res = call(s -> s.heartbeat(hb));
    synchronized (this) {
      for (Long r : gone) {
        removed.remove(r); // the first occurrence: later events of the same block stay queued
      }
      for (BlockReportProto r : changed) {
        moved.remove(r.getBlockId(), r);
      }
    }
    if (res.getCommand() == WorkerHeartbeatResponse.Command.REGISTER) {
      // A master that does not know this worker did not take the persist results: they go again.
      LOG.info("The master does not know worker {}: registering again", workerId);
      workerId = -1;
      register();
      return;
    }
    if (u != null) {
      u.acknowledgePersistResults(results);
    }
    for (long id : res.getRemoveBlockIdsList()) {
      synchronized (removalLock) {
        removing.add(id);
      }
      try {
        if (!store.remove(id)) {
          blockRemoved(id); // already gone: confirm, so the master stops asking
        }
      } catch (java.io.IOException e) {
        removing.remove(id);
        LOG.warn("Cannot remove block {}: {}", id, e.toString());
      }
    }
    if (res.getAbandonedFileIdsCount() > 0) {
      store.abortWritesOf(res.getAbandonedFileIdsList()); // files whose writers lost their leases
    }
    if (res.getPinsIncluded()) {
      pins.update(res.getPinVersion(), res.getPinnedFileIdsList(), store);
    }
    if (u != null) {
      for (PersistCommandProto p : res.getPersistList()) {
        u.persist(persistCommand(p));
      }
    }
  }

  private static PersistCommand persistCommand(PersistCommandProto p) {
    List<BlockInfo> blocks = new ArrayList<>(p.getBlocksCount());
    for (BlockInfoProto b : p.getBlocksList()) {
      blocks.add(new BlockInfo(b.getBlockId(), b.getLength(), locations(b.getLocationsList())));
    }
    return new PersistCommand(p.getFileId(), new UfsTarget(p.getUfsUri(), p.getUfsOptionsMap()), blocks);
  }

  private static List<Location> locations(List<BlockLocationProto> ls) {
    List<Location> out = new ArrayList<>(ls.size());
    for (BlockLocationProto l : ls) {
      out.add(new Location(l.getWorkerId(), new WorkerAddress(l.getAddress().getHost(), l.getAddress().getRpcPort())));
    }
    return out;
  }

  @Override
  public BlockSource blockSource(long blockId) throws StrataException {
    GetBlockSourceRequest req = GetBlockSourceRequest.newBuilder().setBlockId(blockId)
        .setWorkerId(workerId).setWorkerToken(workerToken).build();
    GetBlockSourceResponse res = call(s -> s.getBlockSource(req));
    UfsSource ufsSource = null;
    if (res.hasUfs()) {
      ufsSource = new UfsSource(res.getUfs().getUfsUri(), res.getUfs().getUfsOptionsMap(), res.getUfs().getOffset(),
          res.getUfs().getFileLength());
    }
    return new BlockSource(blockId, res.getLength(), locations(res.getLocationsList()), ufsSource);
  }

  @Override
  public UfsTarget ufsWriteTarget(long fileId) throws StrataException {
    GetUfsWriteTargetRequest req = GetUfsWriteTargetRequest.newBuilder().setFileId(fileId)
        .setWorkerId(workerId).setWorkerToken(workerToken).build();
    GetUfsWriteTargetResponse res = call(s -> s.getUfsWriteTarget(req));
    return new UfsTarget(res.getUfsUri(), res.getUfsOptionsMap());
  }

  @Override
  public synchronized void blockRemoved(long blockId) {
    removed.add(blockId);
    moved.remove(blockId);
    removing.remove(blockId);
  }

  @Override
  public void announce(long blockId, long length, String tier) throws StrataException {
    beat.readLock().lock(); // before removalLock, as heartbeats take them
    try {
      synchronized (removalLock) {
        if (!removing.contains(blockId)) {
          commitAtMaster(blockId, length, tier);
        }
      }
    } finally {
      beat.readLock().unlock();
    }
  }

  @Override
  public synchronized void blockMoved(long blockId, long length, String tier) {
    moved.put(blockId, BlockReportProto.newBuilder().setBlockId(blockId).setLength(length).setTier(tier).build());
  }

  @Override
  public synchronized void dirFailed(String path, List<Long> lostBlocks) {
    for (long id : lostBlocks) {
      blockRemoved(id);
    }
  }

  @Override
  public void allDirsFailed() {
    onAllDirsFailed.run();
  }

  /** Tells the master this worker holds a new block (pinned when its file is); throws the master's error. */
  @Override
  public void commitBlock(long blockId, long length, String tier) throws StrataException {
    beat.readLock().lock();
    try {
      commitAtMaster(blockId, length, tier);
    } finally {
      beat.readLock().unlock();
    }
  }

  private void commitAtMaster(long blockId, long length, String tier) throws StrataException {
    long id = workerId;
    if (id < 0) {
      throw new UnavailableException("This worker is not registered with the master yet; retry shortly");
    }
    CommitBlockRequest req = CommitBlockRequest.newBuilder().setWorkerId(id).setBlockId(blockId).setLength(length)
        .setTier(tier).build();
    call(s -> s.commitBlock(req));
    synchronized (this) {
      // This copy supersedes a removal of an older one not yet reported: reporting it would drop this one.
      removed.removeIf(r -> r == blockId);
    }
    pins.committed(blockId, store);
  }
}
