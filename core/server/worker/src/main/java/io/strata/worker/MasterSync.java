package io.strata.worker;

import io.strata.common.exception.StrataException;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.BlockMasterWorkerServiceGrpc;
import io.strata.proto.BlockReportProto;
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
 * pinned file ids ({@link Pins}). As the worker's {@link MasterClient} it commits blocks, and asks where a block
 * comes from and where a UFS file is written through {@link MasterQueries}. These two classes are where the master
 * protocol's protos meet worker types.
 *
 * <p>Thread-safe: {@link #tick()} runs on the worker's one heartbeat thread, the removals its replies ask for on
 * the removal lanes ({@link MasterOrderedRemovals}); {@link #commitBlock} and the
 * {@link MasterClient} calls on RPC and worker executor threads; events from any store thread. One lock:
 * this object's monitor guards the pending changes ({@link QueuedChanges}, {@link PendingReport}), the beat and
 * commit bookkeeping of its {@link MasterCommits} and that of its {@link MasterOrderedRemovals} (these have no lock of
 * their own, and are handed this object as theirs); it is a leaf (nothing else is taken while it is held) and never
 * held across an RPC or a store call. Heartbeats and commits run concurrently; what a heartbeat reports and what its
 * reply asks are reconciled with the commits that overlapped it (see docs/ARCHITECTURE.md, "Worker master sync"):
 * <ul>
 *   <li>A commit drops the queued, unsent removals of its block (they are of an older copy). A commit that
 *       overlapped a beat (registration or heartbeat) is re-announced in the next heartbeat's added
 *       blocks, so a removal of the old copy that reached the master after the commit, or a registration
 *       that replaced this worker's locations, cannot leave the new copy unknown there.
 *   <li>A removal the reply asks for is skipped when a commit of that block overlapped the beat (the
 *       master may have asked before it saw the commit); the master asks again in the next reply if it
 *       still wants it gone.
 *   <li>Removal events carry a sequence number, so a heartbeat's success clears exactly the events it
 *       carried, never a later removal of the same block ({@link QueuedChanges}).
 *   <li>The removals a reply asks for run on a thread per storage dir ({@link MasterOrderedRemovals}), never on the
 *       heartbeat thread: an unlink on a dying disk may hang, and heartbeats must go on meanwhile, or the master
 *       declares this worker lost. One removal per block is queued or running at a time (the master asks every beat
 *       until it hears the block removed), so the queue holds at most the blocks the master asked for; a commit of
 *       the block, or the block leaving the store otherwise, before a queued removal runs makes it moot (the master
 *       asks again if it still wants the block gone).
 *   <li>Moved (or re-announced) blocks are looked up in the store when a heartbeat is built, as the blocks a
 *       registration could not carry are: one the store no longer holds is not sent, and one it holds is sent as
 *       it is now. An addition waits for a removal of its block queued before it, so the master (which applies a
 *       beat's removals before its additions) never takes the removal after the addition.
 *   <li>A failed dir's lost blocks are reported removed, except those the store holds again (a move's whole copy
 *       kept in a good dir when its source dir failed in the middle of the move). Whether it holds them is asked
 *       again once the losses are queued, since that adoption, and its announcement, may cross this report: a block
 *       held by then has its loss taken back if still unsent, and is announced again.
 * </ul>
 */
final class MasterSync implements StoreEvents, MasterClient {
  private static final Logger LOG = LoggerFactory.getLogger(MasterSync.class);

  private final io.strata.common.master.MasterConnection master;
  private final WorkerAddress address;
  private final long rpcTimeoutMs;
  private final long startTimeMs;
  private final Runnable fatal;
  private volatile java.util.function.Consumer<java.util.Collection<Long>> onAbandoned = ids -> {};
  private volatile java.util.function.Consumer<java.util.Collection<Long>> onRecovered = ids -> {};
  private volatile java.util.function.Supplier<java.util.Collection<Long>> heldFiles = List::of;
  /** How often a heartbeat names the held files ({@link #heldFiles}); the heartbeat thread's bookkeeping below. */
  private volatile long heldCheckMs = 60_000;
  private long lastHeldCheckMs;
  private volatile BlockStore store;
  private volatile WorkerUfs ufs;
  private final Pins pins = new Pins();
  /** The removals the master asks for, run off the heartbeat thread; their bookkeeping guarded by this. */
  private final MasterOrderedRemovals removals;
  private volatile long workerId = -1;
  /** The last batch of evictable blocks applied (heartbeat thread only); a new registration starts at 0. */
  private long evictableSeq;
  /** Shown with the calls that return mount credentials; from the last registration. */
  private volatile String workerToken = "";
  /** The id and token of the current registration, read together by commits on other threads. */
  record Registration(long id, String token) {}
  private volatile Registration registration = new Registration(-1, "");
  /** The block commits at the master and their overlaps with the beats; their bookkeeping guarded by this. */
  private final MasterCommits commits;
  /** Removal events and blocks to announce, not yet carried by a successful heartbeat. Guarded by this. */
  private final QueuedChanges changes = new QueuedChanges();
  /** Committed blocks the last registration could not carry, sent in the heartbeats after it. Guarded by this. */
  private final PendingReport pending;
  private boolean loggedUnreachable;
  private final Clock clock;
  /** When the master last answered a heartbeat or registration (the start time before that). */
  private volatile long lastBeatMs;

  /** The cluster id kept with the stored blocks, sent with each registration. */
  private final ClusterIdFiles clusterIds;

  /** {@code strata.security.worker.secret} (empty: none). */
  private final String secret;

  MasterSync(io.strata.common.master.MasterConnection master, WorkerAddress address, long rpcTimeoutMs, Clock clock,
      Runnable fatal, String secret, long maxMessageBytes) {
    this.secret = secret;
    this.pending = new PendingReport(maxMessageBytes);
    this.master = master;
    this.address = address;
    this.rpcTimeoutMs = rpcTimeoutMs;
    this.batches = new MasterBatches(master, rpcTimeoutMs);
    this.queries = new MasterQueries(master, batches, rpcTimeoutMs, () -> registration);
    this.startTimeMs = clock.millis();
    this.clock = clock;
    this.lastBeatMs = startTimeMs;
    this.fatal = fatal;
    this.removals = new MasterOrderedRemovals(this, "worker-" + address.rpcPort() + "-removals", () -> store,
        this::blockRemoved);
    this.commits = new MasterCommits(this, batches, () -> store, this::storeHas, pins, changes, removals);
    this.clusterIds = new ClusterIdFiles(() -> {
      List<java.nio.file.Path> out = new ArrayList<>();
      for (BlockStore.DirReport d : store.dirReports()) {
        if (d.good()) {
          out.add(java.nio.file.Path.of(d.path()));
        }
      }
      return out;
    });
  }

  /** Also told of the files whose writers lost their leases, after the store aborted their blocks. */
  void onAbandoned(java.util.function.Consumer<java.util.Collection<Long>> listener) {
    this.onAbandoned = listener;
  }

  /** Told the files whose leases the master recovered (their writers went silent), as heartbeat replies name them. */
  void onRecovered(java.util.function.Consumer<java.util.Collection<Long>> listener) {
    this.onRecovered = listener;
  }

  /**
   * What names the files this worker keeps blocks of past the idle timeout (shuffle partitions), sent with
   * each registration; those the master says ended go to the {@link #onAbandoned} listener.
   */
  void heldFiles(java.util.function.Supplier<java.util.Collection<Long>> held, java.time.Duration checkEvery) {
    this.heldFiles = held;
    this.heldCheckMs = checkEvery.toMillis();
  }

  void attach(BlockStore store, WorkerUfs ufs) {
    this.store = store;
    this.ufs = ufs;
  }

  /** The pin list this worker holds. */
  Pins pins() {
    return pins;
  }

  /** Batched commits and UFS write targets (see {@link MasterBatches}). */
  private final MasterBatches batches;
  /** The questions the UFS layer and readers ask the master through this worker's registration. */
  private final MasterQueries queries;

  /** Batched calls sent so far: {commit batches, commits in them, target batches, targets in them}. */
  long[] batchCounts() {
    return batches.counts();
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

  /** Whether a round runs now: the scheduled rounds and those asked for early (a persist outcome ready) never overlap. */
  private final java.util.concurrent.atomic.AtomicBoolean ticking = new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * One heartbeat (or registration) round; never throws. No lock is held across its RPCs. Does nothing while another
   * round runs (that one, or the next scheduled, carries what this one would have).
   */
  void tick() {
    if (!ticking.compareAndSet(false, true)) {
      return;
    }
    try {
      round();
    } finally {
      ticking.set(false);
    }
  }

  private void round() {
    try {
      if (workerId >= 0 && !heartbeat()) {
        // A master that does not know this worker did not take the persist results: they go again.
        LOG.info("The master does not know worker {}: registering again", workerId);
        workerId = -1;
        registration = new Registration(-1, "");
      }
      if (workerId < 0) {
        register();
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
      changes.clear();
      commits.beginBeat();
    }
    try {
      registerCall();
    } finally {
      commits.endBeat();
    }
  }

  private void registerCall() throws StrataException {
    RegisterWorkerRequest.Builder req = RegisterWorkerRequest.newBuilder()
        .setAddress(WorkerAddressProto.newBuilder().setHost(address.host()).setRpcPort(address.rpcPort())
            .setNode(address.identity().node()).setRack(address.identity().rack())
            .setTransferPort(address.transferPort()).setWebPort(address.webPort()))
        .setCapacityBytes(store.capacityBytes()).setUsedBytes(store.usedBytes()).setStartTimeMs(startTimeMs)
        .addAllDirs(dirs()).addAllHeldFileIds(heldFiles.get()).setWorkerSecret(secret)
        .setClusterId(refusedUnlessOk(clusterIds::known));
    List<BlockReportProto> all = new ArrayList<>();
    for (BlockStore.BlockMeta b : store.committedBlocks()) {
      all.add(BlockReportProto.newBuilder().setBlockId(b.blockId()).setLength(b.length()).setTier(b.tier()).build());
    }
    synchronized (this) {
      req.addAllBlocks(pending.registering(all)); // the heartbeats after this registration carry the rest
    }
    int rest = all.size() - req.getBlocksCount();
    RegisterWorkerRequest built = req.build();
    evictableSeq = 0;
    io.strata.proto.RegisterWorkerResponse registered = refusedUnlessOk(() -> call(s -> s.registerWorker(built)));
    clusterIds.joined(registered.getClusterId());
    workerToken = registered.getWorkerToken();
    workerId = registered.getWorkerId();
    registration = new Registration(registered.getWorkerId(), registered.getWorkerToken());
    LOG.info("Registered with the master as worker {} ({} blocks reported{})", workerId, req.getBlocksCount(),
        rest == 0 ? "" : ", " + rest + " more to come with the next heartbeats");
    if (registered.getEndedFileIdsCount() > 0) {
      LOG.info("Letting go of the blocks of {} ended files the master named at registration",
          registered.getEndedFileIdsCount());
      letGo(registered.getEndedFileIdsList());
    }
  }

  private interface Step<T> {
    T run() throws StrataException;
  }

  /**
   * Runs a registration step; a refusal because the stored blocks belong to another cluster (or to several) stops
   * the worker (its fatal handler; WorkerMain exits) with the reason: retrying cannot help, and its blocks must not
   * be removed as unknown, nor served as a new file's.
   */
  private <T> T refusedUnlessOk(Step<T> step) throws StrataException {
    try {
      return step.run();
    } catch (io.strata.common.exception.FailedPreconditionException e) {
      LOG.error("This worker cannot join the cluster, and stops: {}", e.getMessage());
      fatal.run();
      throw e;
    }
  }

  /** Ends this worker's writes of files the master says ended: their temp blocks, held ones too. */
  private void letGo(List<Long> fileIds) {
    store.abortWritesOf(fileIds);
    onAbandoned.accept(fileIds);
  }

  /** One heartbeat; false when the master does not know this worker (it must register again). */
  private boolean heartbeat() throws StrataException {
    QueuedChanges.Beat beat;
    List<BlockReportProto> late;
    synchronized (this) {
      // At most a message's worth of removals (a failed dir queues one per block it held); the rest go next beat.
      beat = changes.next(pending.perMessage());
      late = pending.peek(Math.max(0, pending.perMessage() - beat.changed().size()));
      commits.beginBeat();
    }
    try {
      return heartbeatCall(beat.gone(), beat.goneUpTo(), beat.changed(), late);
    } finally {
      commits.endBeat();
    }
  }

  private boolean heartbeatCall(List<Long> gone, long goneUpTo, List<BlockReportProto> changed,
      List<BlockReportProto> late) throws StrataException {
    // Moved blocks as the store holds them now, and those the registration could not carry, still here: looked up
    // outside the monitor. One removed since has its removal queued (sent in a later beat), or sent in this beat
    // before the added blocks, which the master applies after. A moved block the store no longer holds is not
    // sent: a move into a dir that failed right after, whose event came after the dir's report of its losses,
    // would otherwise list a lost block again.
    List<BlockReportProto> added = new ArrayList<>(changed.size() + late.size());
    for (BlockReportProto r : changed) {
      BlockReportProto now = held(r.getBlockId());
      if (now != null) {
        added.add(now);
      }
    }
    for (BlockReportProto r : late) {
      if (held(r.getBlockId()) != null) {
        added.add(r);
      }
    }
    WorkerUfs u = ufs;
    List<PersistResult> results = u == null ? List.of() : u.persistResults();
    WorkerHeartbeatRequest.Builder b = WorkerHeartbeatRequest.newBuilder().setWorkerId(workerId)
        .setWorkerToken(workerToken)
        .setCapacityBytes(store.capacityBytes()).setUsedBytes(store.usedBytes())
        .addAllRemovedBlockIds(gone).addAllAddedBlocks(added).addAllDirs(dirs()).setPinVersion(pins.version())
        .setAwaitedBytes(store.awaitedBytes()).setEvictableAckedSeq(evictableSeq);
    for (PersistResult r : results) {
      b.addPersistResults(PersistResultProto.newBuilder().setFileId(r.fileId()).setOk(r.ok())
          .setError(r.error() == null ? "" : r.error()).setLength(r.length())
          .setUfsUri(r.ufsUri() == null ? "" : r.ufsUri()));
    }
    long now = clock.millis();
    if (now - lastHeldCheckMs >= heldCheckMs) {
      // Blocks kept past the idle timeout whose files ended without this worker hearing (a missed drop, a driver
      // that died after its seal): named now and then, as at registration, and let go of when the master says so.
      b.addAllHeldFileIds(heldFiles.get());
      lastHeldCheckMs = now;
    }
    WorkerHeartbeatRequest hb = b.build();
    WorkerHeartbeatResponse res = call(s -> s.heartbeat(hb));
    synchronized (this) {
      changes.carried(goneUpTo, changed); // what this beat carried; later events stay queued
      if (res.getCommand() != WorkerHeartbeatResponse.Command.REGISTER) {
        pending.sent(late.size());
      }
    }
    if (res.getCommand() == WorkerHeartbeatResponse.Command.REGISTER) {
      return false;
    }
    if (u != null) {
      u.acknowledgePersistResults(results);
    }
    if (res.getEvictableBlockIdsCount() > 0) {
      store.markEvictable(res.getEvictableBlockIdsList()); // their files are persisted now
    }
    evictableSeq = res.getEvictableSeq(); // acknowledged in the next heartbeat
    for (long id : res.getRemoveBlockIdsList()) {
      synchronized (this) {
        if (commits.overlapped(id)) {
          LOG.debug("Not removing block {}: a commit of it overlapped the heartbeat; the master asks again", id);
          continue;
        }
        if (!removals.ask(id)) {
          continue; // queued or running already (a moot one still queued is wanted again)
        }
      }
      removals.start(id);
    }
    if (res.getAbandonedFileIdsCount() > 0) {
      letGo(res.getAbandonedFileIdsList()); // files whose writers lost their leases
      try {
        onRecovered.accept(res.getAbandonedFileIdsList()); // and their under file system writes (handed off)
      } catch (RuntimeException e) {
        LOG.warn("Ending the under file system writes of recovered files failed: {}", e.toString());
      }
    }
    if (res.getEndedFileIdsCount() > 0) {
      LOG.info("Letting go of the blocks of {} ended files the master named", res.getEndedFileIdsCount());
      letGo(res.getEndedFileIdsList());
    }
    if (res.getPinsIncluded()) {
      pins.update(res.getPinVersion(), res.getPinnedFileIdsList(), store);
    }
    if (u != null) {
      for (PersistCommandProto p : res.getPersistList()) {
        u.persist(MasterQueries.persistCommand(p));
      }
    }
    lastBeatMs = clock.millis();
    return true;
  }

  /** Master-ordered removals queued or running now (tests). */
  int removalsQueued() {
    return removals.queued();
  }

  /** Stops the removal lanes (a removal under way finishes on its own; queued ones are dropped). */
  void close() {
    removals.close();
  }

  /** Milliseconds since the master last answered a heartbeat (since the start, before the first). */
  long heartbeatAgeMs() {
    return Math.max(0, clock.millis() - lastBeatMs);
  }

  @Override
  public BlockSource blockSource(long blockId) throws StrataException {
    return queries.blockSource(blockId);
  }

  @Override
  public boolean reportCorrupt(long blockId, WorkerAddress holder, long offset, String reason)
      throws StrataException {
    return queries.reportCorrupt(blockId, holder, offset, reason);
  }

  @Override
  public Map<Long, UfsTarget> ufsWriteTargets(List<Long> fileIds) throws StrataException {
    return queries.ufsWriteTargets(fileIds);
  }

  @Override
  public UfsTarget ufsWriteTarget(long fileId) throws StrataException {
    return queries.ufsWriteTarget(fileId);
  }

  @Override
  public synchronized void blockRemoved(long blockId) {
    lost(blockId);
  }

  /** The block left the store: its removal is queued, and a master-ordered one is moot. The event's sequence number. */
  private long lost(long blockId) {
    removals.gone(blockId);
    return changes.removed(blockId);
  }

  @Override
  public void announce(long blockId, long length, String tier) throws StrataException {
    commitAtMaster(blockId, length, tier, true, "");
  }

  @Override
  public synchronized void blockMoved(long blockId, long length, String tier) {
    changes.announce(blockId, length, tier);
  }

  @Override
  public void dirFailed(String path, List<Long> lostBlocks) {
    // A block the store holds again by now (a move's whole copy kept in another dir, announced as moved) is not
    // reported removed: this event may come after that announcement, and would take it back. Asked before the
    // leaf monitor.
    List<Long> gone = new ArrayList<>(lostBlocks.size());
    for (long id : lostBlocks) {
      if (store == null || !storeHas(id)) {
        gone.add(id);
      }
    }
    Map<Long, Long> lossSeq = new java.util.HashMap<>();
    synchronized (this) {
      for (long id : gone) {
        lossSeq.put(id, lost(id));
      }
    }
    if (store == null) {
      return;
    }
    // Such an adoption may also have crossed the look-up above: the block held when looked up, its announcement made
    // before this monitor was taken, which the loss just queued would cancel (and, sent in a later beat than the
    // announcement, would undo at the master). Asked again now that the losses are queued: an adoption after this
    // look-up announces itself after them.
    List<BlockReportProto> back = new ArrayList<>();
    for (long id : gone) {
      BlockReportProto now = held(id);
      if (now != null) {
        back.add(now);
      }
    }
    if (!back.isEmpty()) {
      synchronized (this) {
        for (BlockReportProto r : back) {
          // Its loss, unless a heartbeat carried it already; announced again (looked up again when sent).
          changes.takeBack(lossSeq.get(r.getBlockId()), r);
        }
      }
    }
  }

  @Override
  public void allDirsFailed() {
    fatal.run();
  }

  /** Tells the master this worker holds a new block (pinned when its file is); throws the master's error. */
  @Override
  public void commitBlock(long blockId, long length, String tier) throws StrataException {
    commitAtMaster(blockId, length, tier, false, "");
  }

  /** A copy that replaces the copy of the worker at {@code replaces} ("host:port"; see {@link io.strata.worker.rpc.Committer}). */
  public void commitReplacing(long blockId, long length, String tier, String replaces) throws StrataException {
    commitAtMaster(blockId, length, tier, false, replaces);
  }

  /**
   * Commits at the master blocks committed in the store (a shuffle seal's), in batched calls sent on this thread, with
   * the bookkeeping of {@link #commitAtMaster} for each block and no lock held across the calls: per commit, in
   * order, null when the master took it, else why not.
   */
  public List<Exception> commitAll(List<io.strata.worker.rpc.Committer.Commit> toCommit) {
    Registration reg = registration;
    return commits.commitAll(reg.id(), reg.token(), toCommit);
  }

  /**
   * Commits at the master with no lock held across the RPC ({@link MasterCommits}). An announcement of a copy whose
   * removal is under way is skipped (it would re-announce what is going).
   */
  private void commitAtMaster(long blockId, long length, String tier, boolean announce, String replaces)
      throws StrataException {
    Registration reg = registration;
    commits.commit(reg.id(), reg.token(), blockId, length, tier, announce, replaces);
  }

  /** The block as the store holds it now, or null. Never under this monitor. */
  private BlockReportProto held(long blockId) {
    try {
      BlockStore.BlockMeta m = store.get(blockId);
      return BlockReportProto.newBuilder().setBlockId(blockId).setLength(m.length()).setTier(m.tier()).build();
    } catch (StrataException e) {
      return null;
    }
  }

  private boolean storeHas(long blockId) {
    try {
      store.get(blockId);
      return true;
    } catch (StrataException e) {
      return false;
    }
  }
}
