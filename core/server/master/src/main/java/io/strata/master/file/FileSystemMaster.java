package io.strata.master.file;

import io.strata.common.conf.StrataConf;
import io.strata.common.exception.StrataException;
import io.strata.common.time.ElapsedClock;
import io.strata.master.MasterKeys;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.BlockReport;
import io.strata.master.block.BlockState;
import io.strata.master.block.StorageDirState;
import io.strata.master.file.MasterReplies.BlockSource;
import io.strata.master.file.MasterReplies.FreeResult;
import io.strata.master.file.MasterReplies.PersistResult;
import io.strata.master.file.MasterReplies.UfsTarget;
import io.strata.master.file.MasterReplies.WorkerReply;
import io.strata.master.journal.Journal;
import io.strata.master.journal.JournalEntry;
import io.strata.master.journal.JournalSink;
import io.strata.server.ufs.UfsManager;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's domain facade for clients and workers: it builds the parts and hands each call to the one
 * that owns it: namespace changes ({@link NamespaceChanges}), their retries by request id
 * ({@link NamespaceRetries}) and reads ({@link NamespaceReads}) on the {@link InodeTree}, file completion
 * and block commits ({@link FileCompletion}), the worker protocol ({@link WorkerProtocol}), the block
 * master's questions about files ({@link TreeFileLookup}), mounts ({@link MountOperations}), leases
 * ({@link LeaseRecovery}), cache policies ({@link CachePolicies}) and persistence ({@link PersistScheduler}),
 * journal replay and checkpoints ({@link MasterRecovery}). Together they keep the rules that join the
 * namespace, the {@link BlockMaster} and the under file systems (a file completes only when all its blocks
 * are committed with the right lengths, and, written through, once its UFS copy is in place; a deleted
 * file's blocks are removed from workers and its UFS copy deleted; a complete file accepts no new blocks
 * unless it is persisted, when workers may cache its blocks again). Of its own it keeps only the journal
 * flush that every call waits for before it answers (a batch of creates or completes shares one).
 *
 * <p>UFS calls are made outside the tree's lock, before the namespace change they precede (a delete
 * deletes the UFS copy first, so a failure changes nothing in Strata). Without a {@link UfsConfig} (unit
 * tests of the namespace) there is no mount and nothing is ever persisted. Thread-safe; lock order at
 * {@link #commitLock}.
 */
public final class FileSystemMaster {
  private static final Logger LOG = LoggerFactory.getLogger(FileSystemMaster.class);

  private final InodeTree tree;
  private final BlockMaster blocks;
  /**
   * Orders block commits against the complete, delete, free, unmount, lease recovery, UFS-sync removal
   * and checkpoint of the same file; shared by the parts that do those. Lock order (docs/ARCHITECTURE.md,
   * "Concurrency"): this, then the tree's lock, then the block master's monitor, then the leaves (mount
   * table, persist scheduler, leases, request ids, journal). Never held across an RPC, a UFS call or a
   * wait for the journal.
   */
  private final Object commitLock = new Object();
  /** Appended to by the tree and block commits; null when running without a journal (unit tests). */
  private final Journal journal;
  private final MountTable mounts = new MountTable();
  private final PersistScheduler persister;
  private final MountOperations mountOps;
  private final CachePolicies policies;
  /**
   * Temporary UFS names this master handed out to workers writing a file through, by file id (each journaled before it
   * is handed out; those of an earlier leader are {@link MasterLeftovers}' replayed targets).
   */
  private final Map<Long, String> ufsWriteTargets = new ConcurrentHashMap<>();
  /** Orphaned UFS temp copies and dead shuffle drivers' files, deleted on the lease thread. */
  private final MasterLeftovers leftovers;
  /** Write leases of incomplete files and their recovery. */
  private final LeaseRecovery leaseRecovery;
  /** The tree's journal sink: tags the operations of calls with request ids, and answers their retries. */
  private final IdempotentCalls calls;
  private final NamespaceChanges changes;
  private final NamespaceRetries retries;
  private final NamespaceReads reads;
  private final FileCompletion completion;
  private final WorkerProtocol workers;
  /** Replay of journal entries and checkpoints of the whole state. */
  private final MasterRecovery recovery;
  private final WalkBatches batches = new WalkBatches();

  public FileSystemMaster(Clock clock, Duration workerTimeout, long maxBlockSize) {
    this(clock, workerTimeout, maxBlockSize, null);
  }

  /** A master whose every change is journaled; replay with {@link #replay} before serving. */
  public FileSystemMaster(Clock clock, Duration workerTimeout, long maxBlockSize, Journal journal) {
    this(clock, workerTimeout, maxBlockSize, journal, null);
  }

  /** With under file systems: {@code ufs} names the root mount and the clients. */
  public FileSystemMaster(Clock clock, Duration workerTimeout, long maxBlockSize, Journal journal, UfsConfig ufs) {
    this.journal = journal;
    StrataConf defaults = StrataConf.defaults();
    this.calls = new IdempotentCalls(journal == null ? JournalSink.NONE : journal, clock,
        new RequestIdTable(defaults.get(MasterKeys.REQUEST_IDS_PER_CLIENT_MAX),
            defaults.get(MasterKeys.REQUEST_IDS_MAX), defaults.get(MasterKeys.REQUEST_IDS_RETENTION)));
    this.tree = new InodeTree(clock, calls);
    Clock elapsed = ElapsedClock.of(clock); // leases and worker liveness measure silence on it
    this.blocks = new BlockMaster(elapsed, workerTimeout, new TreeFileLookup(tree));
    if (ufs != null && ufs.rootMount() != null) {
      mounts.add(ufs.rootMount());
    }
    UfsManager manager = ufs == null ? new UfsManager() : ufs.manager();
    PathGuard guard = new PathGuard(); // one for every change that moves or clears UFS paths
    MetadataSync sync = new MetadataSync(tree, mounts, manager, clock, ufs == null ? 64L << 20 : ufs.blockSize(),
        commitLock, this::removeBlocksOf, guard);
    PersistedUnflushed unflushed = new PersistedUnflushed(); // one for everything that lets persisted blocks go
    this.persister = ufs == null ? null : new PersistScheduler(tree, blocks, mounts, sync, this::blocksOf,
        this::syncQuietly, clock, ufs, guard, unflushed, batches);
    this.workers = new WorkerProtocol(tree, blocks, mounts, sync, persister, new WorkerAccess(), ufsWriteTargets,
        unflushed, commitLock, this::journalCaughtUpBriefly, journal == null ? JournalSink.NONE : journal, this::sync,
        this::targetReplaced);
    this.mountOps = new MountOperations(tree, mounts, sync, ufs, commitLock, this::removeBlocksOf, this::sync,
        workers::storageDirs, unflushed);
    // Leases and worker liveness measure silence: on a clock an NTP step cannot move (tests' clocks as they are).
    this.leaseRecovery = new LeaseRecovery(tree, mounts, sync, elapsed, commitLock,
        this::removeBlocksOf, this::sync, ufsWriteTargets, guard);
    this.leftovers = new MasterLeftovers(mounts, sync, elapsed, leaseRecovery::timeout,
        new MasterLeftovers.Namespace() {
          @Override
          public boolean exists(String path) throws StrataException {
            return FileSystemMaster.this.exists(path);
          }

          @Override
          public void deleteRecursively(String path) throws StrataException {
            delete(path, true, false);
          }

          @Override
          public void mkdirs(String path) throws StrataException {
            createDirectory(path, true, true, 0755);
          }

          @Override
          public List<String> children(String path) throws StrataException {
            List<String> names = new ArrayList<>();
            if (exists(path)) {
              listStatus(path, false, 1000, batch -> batch.forEach(f -> names.add(
                  f.path().substring(f.path().lastIndexOf('/') + 1))));
            }
            return names;
          }
        }, journal == null ? JournalSink.NONE : journal);
    leaseRecovery.onShuffleAppEnded(leftovers::shuffleAppEnded);
    this.policies = new CachePolicies(tree, blocks, mounts, sync, clock, commitLock, this::sync,
        (path, recursive, inodeId) -> delete(path, recursive, false, inodeId), unflushed,
        journal == null ? JournalSink.NONE : journal, batches);
    this.changes = new NamespaceChanges(tree, mounts, sync, leaseRecovery, commitLock, this::removeBlocksOf,
        this::sync, maxBlockSize, guard);
    this.reads = new NamespaceReads(tree, blocks, mounts, sync);
    this.completion = new FileCompletion(tree, blocks, mounts, sync, commitLock, ufsWriteTargets, journal,
        this::sync, guard, unflushed, leftovers::fileEnded);
    this.retries = new NamespaceRetries(calls, leaseRecovery, tree, mounts, this::sync);
    this.recovery = new MasterRecovery(tree, blocks, mounts, calls, journal, commitLock, leftovers, ufsWriteTargets);
  }

  /** Waits until the changes made so far are durable; an RPC calls it before it answers. */
  private void sync() throws StrataException {
    if (journal != null) {
      journal.flush();
    }
  }

  /**
   * Whether everything the journal holds so far is durable, waiting for it at most {@link #HEARTBEAT_FLUSH_WAIT_MS}
   * and never writing on this thread (a worker's heartbeat must not wait on a slow disk: it would be marked lost).
   */
  private boolean journalCaughtUpBriefly() {
    return journal == null || journal.awaitFlushedBriefly(journal.appendedSequence(), HEARTBEAT_FLUSH_WAIT_MS);
  }

  /** The longest a heartbeat waits for the journal before it sends its removals in a later reply instead. */
  static final long HEARTBEAT_FLUSH_WAIT_MS = 250;

  /** Flushes the journal; false (logged) when it could not be. */
  private boolean syncQuietly() {
    try {
      sync();
      return true;
    } catch (StrataException e) {
      LOG.error("The journal could not be flushed: {}", e.getMessage());
      return false;
    }
  }

  /** A new write target of file {@code id} replaced {@code replaced} (the leftovers exist once the master is built). */
  private void targetReplaced(Long id, String replaced) {
    leftovers.targetReplaced(id, replaced);
  }

  private void removeBlocksOf(List<Long> fileIds) {
    for (long id : fileIds) {
      blocks.removeFileBlocks(id, 0);
      String temp = ufsWriteTargets.remove(id);
      if (temp != null) {
        leftovers.tempOrphaned(temp); // deleted while written through: its UFS copy is no one's now
      }
      leftovers.fileEnded(id); // and those of the targets handed out before (an earlier leader's, a replaced one)
    }
  }

  /** The bounds of the request-id table (strata.master.request.ids.*); call before replaying or serving. */
  public void setRequestIdLimits(int perClientMax, Duration retention) {
    setRequestIdLimits(perClientMax, Integer.MAX_VALUE, retention);
  }

  /** As above, with at most {@code totalMax} ids in all clients together. */
  public void setRequestIdLimits(int perClientMax, int totalMax, Duration retention) {
    calls.limits(perClientMax, totalMax, retention);
  }

  /** Request ids kept now (all clients; for tests). */
  public int requestIdCount() {
    return calls.table().size();
  }

  /** See {@link MasterRecovery#replay}. */
  public void replay(JournalEntry entry) throws StrataException {
    recovery.replay(entry);
  }

  /** See {@link MasterRecovery#checkpoint}. */
  public void checkpoint() throws IOException {
    recovery.checkpoint();
  }

  public BlockMaster blockMaster() {
    return blocks;
  }

  public InodeTree tree() {
    return tree;
  }

  // ---- mounts ----

  public List<MountTable.MountInfo> mountTable() {
    return mounts.list();
  }

  /** The rules a mount must meet beyond the namespace's (Strata's own dirs, unsafe options). */
  public void setMountGuard(MountGuard guard) {
    mountOps.setGuard(guard);
  }

  /** See {@link MountOperations#mount}; first the {@link MountGuard}'s rules. */
  public void mount(String path, String ufsUri, boolean readOnly, boolean shared, Map<String, String> options)
      throws StrataException {
    mountOps.mount(path, ufsUri, readOnly, shared, options);
  }

  /** See {@link MountOperations#unmount}. */
  public void unmount(String path) throws StrataException {
    mountOps.unmount(path);
  }

  // ---- namespace changes (see NamespaceChanges) ----

  public FileInfo createFile(String path, long blockSize, boolean recursive, int mode) throws StrataException {
    return createFile(path, blockSize, recursive, mode, WriteType.MUST_CACHE);
  }

  public FileInfo createFile(String path, long blockSize, boolean recursive, int mode, WriteType writeType)
      throws StrataException {
    return createFile(path, blockSize, recursive, mode, writeType, "");
  }

  /** As above, the new file's write lease held by {@code clientId} ("": by the file alone, renewed by nobody). */
  public FileInfo createFile(String path, long blockSize, boolean recursive, int mode, WriteType writeType,
      String clientId) throws StrataException {
    return createFile(path, blockSize, recursive, mode, writeType, clientId, "");
  }

  /** As above, owned by {@code owner} (its group: the same name; "": the default owner, strata). */
  public FileInfo createFile(String path, long blockSize, boolean recursive, int mode, WriteType writeType,
      String clientId, String owner) throws StrataException {
    return changes.createFile(path, blockSize, recursive, mode, writeType, clientId, owner);
  }

  public FileInfo createDirectory(String path, boolean recursive, boolean allowExists, int mode)
      throws StrataException {
    return createDirectory(path, recursive, allowExists, mode, WriteType.MUST_CACHE);
  }

  /** CACHE_THROUGH and THROUGH also create the directory (and its parents) in the UFS. */
  public FileInfo createDirectory(String path, boolean recursive, boolean allowExists, int mode, WriteType writeType)
      throws StrataException {
    return createDirectory(path, recursive, allowExists, mode, writeType, "");
  }

  /** As above, owned by {@code owner} (as for {@code createFile}). */
  public FileInfo createDirectory(String path, boolean recursive, boolean allowExists, int mode, WriteType writeType,
      String owner) throws StrataException {
    return changes.createDirectory(path, recursive, allowExists, mode, writeType, owner);
  }

  public void delete(String path, boolean recursive) throws StrataException {
    delete(path, recursive, false);
  }

  /**
   * Deletes a path; unless {@code strataOnly}, its UFS copy first (a UFS failure changes nothing here).
   * Mount points and paths holding mounts are refused: unmount them.
   */
  public void delete(String path, boolean recursive, boolean strataOnly) throws StrataException {
    delete(path, recursive, strataOnly, 0);
  }

  /** As above; a non-zero {@code fileId} deletes only while the path is still that file. */
  public void delete(String path, boolean recursive, boolean strataOnly, long fileId) throws StrataException {
    changes.delete(path, recursive, strataOnly, fileId);
  }

  /** Deletes and renames waiting for a change of a related path to end (tests). */
  int changesWaiting() {
    return changes.changesWaiting();
  }

  /** Renames in Strata and, when the source exists in the UFS, there too (within one mount only). */
  public void rename(String src, String dst) throws StrataException {
    changes.rename(src, dst);
  }

  // ---- namespace reads (see NamespaceReads) ----

  public FileInfo getStatus(String path) throws StrataException {
    return getStatus(path, -1);
  }

  /** See {@link NamespaceReads#getStatus}. */
  public FileInfo getStatus(String path, long syncIntervalMs) throws StrataException {
    return reads.getStatus(path, syncIntervalMs);
  }

  /** See {@link NamespaceReads#getStatusIfInMemory}. */
  public FileInfo getStatusIfInMemory(String path, long syncIntervalMs) throws StrataException {
    return reads.getStatusIfInMemory(path, syncIntervalMs);
  }

  /** See {@link NamespaceReads#listSmallIfInMemory}. */
  public List<FileInfo> listSmallIfInMemory(String path, int limit, long syncIntervalMs) throws StrataException {
    return reads.listSmallIfInMemory(path, limit, syncIntervalMs);
  }

  /** The blocks of a complete file with their live locations, in order (lengths from the file's length). */
  public List<BlockState> blocksOf(FileInfo file) {
    return reads.blocksOf(file);
  }

  public void listStatus(String path, boolean recursive, int batchSize, Consumer<List<FileInfo>> sink)
      throws StrataException {
    listStatus(path, recursive, batchSize, sink, -1);
  }

  /** See {@link NamespaceReads#listStatus}. */
  public void listStatus(String path, boolean recursive, int batchSize, Consumer<List<FileInfo>> sink,
      long syncIntervalMs) throws StrataException {
    reads.listStatus(path, recursive, batchSize, sink, syncIntervalMs);
  }

  public boolean exists(String path) throws StrataException {
    return reads.exists(path);
  }

  // ---- completion and block commits (see FileCompletion) ----

  /**
   * Completes a file. Written through (CACHE_THROUGH, THROUGH), its UFS copy must be there with the same
   * length: it is renamed into place and the file completes PERSISTED; ASYNC_THROUGH completes
   * TO_BE_PERSISTED; MUST_CACHE NOT_PERSISTED.
   */
  public FileInfo completeFile(String path, long fileId, long length) throws StrataException {
    return completeFile(path, fileId, length, false);
  }

  /** See {@link FileCompletion#completeFile}. */
  public FileInfo completeFile(String path, long fileId, long length, boolean ufsWritten) throws StrataException {
    return completion.completeFile(path, fileId, length, ufsWritten);
  }

  /** See {@link FileCompletion#commitBlock}. */
  public void commitBlock(long workerId, long blockId, long length, String tier) throws StrataException {
    completion.commitBlock(workerId, blockId, length, tier, false, "");
  }

  /**
   * See {@link FileCompletion#commitBlock}; {@code announce}: a copy committed before, said again; {@code replaces}:
   * "host:port" of a worker whose copy this one replaces (empty: none).
   */
  public void commitBlock(long workerId, long blockId, long length, String tier, boolean announce, String replaces)
      throws StrataException {
    completion.commitBlock(workerId, blockId, length, tier, announce, replaces);
  }

  /** One block a worker committed, for {@link #commitBlocks}. */
  public record BlockCommit(long blockId, long length, String tier, boolean announce, String replaces) {}

  /** See {@link FileCompletion#commitBlocks}. */
  public List<StrataException> commitBlocks(long workerId, List<BlockCommit> commits)
      throws StrataException {
    return completion.commitBlocks(workerId, commits);
  }

  // ---- calls named by request ids (see NamespaceRetries); a batch of them shares one journal flush ----

  /** {@link #createFile(String, long, boolean, int, WriteType, String)}, answered once per request id. */
  public FileInfo createFile(String path, long blockSize, boolean recursive, int mode, WriteType writeType,
      String clientId, RequestId id) throws StrataException {
    return createFile(path, blockSize, recursive, mode, writeType, clientId, "", id);
  }

  /** {@link #createFile(String, long, boolean, int, WriteType, String, String)}, answered once per request id. */
  public FileInfo createFile(String path, long blockSize, boolean recursive, int mode, WriteType writeType,
      String clientId, String owner, RequestId id) throws StrataException {
    return retries.create(path, clientId, id,
        () -> createFile(path, blockSize, recursive, mode, writeType, clientId, owner));
  }

  /** {@link #completeFile(String, long, long, boolean)}, answered once per request id. */
  public FileInfo completeFile(String path, long fileId, long length, boolean ufsWritten, RequestId id)
      throws StrataException {
    return retries.complete(path, id, () -> completeFile(path, fileId, length, ufsWritten));
  }

  /** One entry of {@link #createFiles}: as {@link #createFile(String, long, boolean, int, WriteType, String, String, RequestId)}. */
  public record CreateEntry(String path, long blockSize, boolean recursive, int mode, WriteType writeType,
      String clientId, String owner, RequestId id) {}

  /**
   * Creates each entry as {@link #createFile(String, long, boolean, int, WriteType, String, String, RequestId)}
   * would (each once per its request id), one after another, then waits for one journal flush covering them
   * all before it returns: no file is answered before its creation is durable. One entry's failure is its
   * outcome, not the call's; a failed flush fails the call (a retry with the same ids gets the first answers).
   */
  public List<Outcome> createFiles(List<CreateEntry> entries) throws StrataException {
    List<Outcome> out = new ArrayList<>(entries.size());
    for (CreateEntry c : entries) {
      try {
        out.add(new Outcome(retries.create(c.path(), c.clientId(), c.id(), () -> changes.createFileUnflushed(
            c.path(), c.blockSize(), c.recursive(), c.mode(), c.writeType(), c.clientId(), c.owner())), null));
      } catch (StrataException e) {
        out.add(new Outcome(null, e));
      }
    }
    sync();
    return out;
  }

  /** One entry of {@link #completeFiles}: as {@link #completeFile(String, long, long, boolean, RequestId)}. */
  public record CompleteEntry(String path, long fileId, long length, RequestId id) {}

  /** The outcome of one entry of {@link #createFiles} or {@link #completeFiles}: the file, or (null) why it failed. */
  public record Outcome(FileInfo file, StrataException error) {}

  /**
   * Completes each entry as {@link #completeFile(String, long, long, boolean, RequestId)} would (each once per
   * its request id), one after another, then waits for one journal flush covering them all before it returns:
   * no outcome is answered before it is durable. One entry's failure is its outcome, not the call's; a failed
   * flush fails the call (a retry with the same request ids is answered from the first attempt's records).
   */
  public List<Outcome> completeFiles(List<CompleteEntry> entries) throws StrataException {
    List<FileCompletion.Applied> applied = new ArrayList<>(entries.size());
    List<StrataException> errors = new ArrayList<>(entries.size());
    long guardDeadline = System.nanoTime() + FileCompletion.GUARD_WAIT_NANOS; // one wait for the whole batch
    for (CompleteEntry c : entries) {
      try {
        applied.add(retries.completeApplied(c.path(), c.id(),
            () -> completion.apply(c.path(), c.fileId(), c.length(), false, guardDeadline)));
        errors.add(null);
      } catch (StrataException e) {
        applied.add(null);
        errors.add(e);
      }
    }
    sync();
    List<Outcome> out = new ArrayList<>(entries.size());
    for (int i = 0; i < entries.size(); i++) {
      FileCompletion.Applied a = applied.get(i);
      if (a != null) {
        completion.settle(a);
      }
      out.add(new Outcome(a == null ? null : a.file(), errors.get(i)));
    }
    return out;
  }

  /** {@link #delete(String, boolean, boolean, long)}, applied once per request id. */
  public void delete(String path, boolean recursive, boolean strataOnly, long fileId, RequestId id)
      throws StrataException {
    retries.delete(path, id, () -> delete(path, recursive, strataOnly, fileId));
  }

  /** {@link #rename(String, String)}, applied once per request id. */
  public void rename(String src, String dst, RequestId id) throws StrataException {
    retries.rename(src, dst, id, () -> rename(src, dst));
  }

  // ---- free, pin, TTL, persist ----

  /** See {@link CachePolicies#free}. */
  public FreeResult free(String path, boolean recursive, boolean force) throws StrataException {
    return policies.free(path, recursive, force);
  }

  /** What a walk over many inodes (free, persist, TTL) holds at a time (tests make it small). */
  WalkBatches walkBatches() {
    return batches;
  }

  /** Sets pinned, TTL and TTL action (null: unchanged; TTL -1 removes it). */
  public FileInfo setAttribute(String path, Boolean pinned, Long ttlMs, String ttlAction) throws StrataException {
    return setAttribute(path, AttributeChange.cache(pinned, ttlMs, ttlAction == null ? null
        : TtlAction.parse(ttlAction)));
  }

  /** See {@link CachePolicies#setAttribute}. */
  public FileInfo setAttribute(String path, AttributeChange change) throws StrataException {
    return mounts.withUfs(policies.setAttribute(path, change));
  }

  /** See {@link CachePolicies#scheduleAsyncPersistence}. */
  public FileInfo scheduleAsyncPersistence(String path) throws StrataException {
    return mounts.withUfs(policies.scheduleAsyncPersistence(path));
  }

  /** Applies the TTLs that ran out (the master's background thread); see {@link CachePolicies#ttlTick}. */
  public void ttlTick() {
    policies.ttlTick();
  }

  /** Files waiting to be persisted or being persisted, as of the last persist round (metrics). */
  /** Registration tokens held (tests). */
  int workerTokenCount() {
    return workers.workerTokenCount();
  }

  /** Workers with persist commands waiting to be collected (tests). */
  int persistOutboxWorkers() {
    return persister == null ? 0 : persister.outboxWorkers();
  }

  public int persistBacklog() {
    return persister == null ? 0 : persister.backlog();
  }

  /** Persist attempts that failed so far (metrics). */
  public long persistFailures() {
    return persister == null ? 0 : persister.failures();
  }

  /** Runs the persist scheduler once (the master's background thread). */
  public void persistTick() {
    if (persister != null) {
      persister.tick();
    }
  }

  // ---- worker protocol (see WorkerProtocol) ----

  /** A worker heartbeat: the block master's part, then persist commands and the pin list when it changed. */
  public WorkerReply workerHeartbeat(long workerId, long capacity, long used, List<BlockReport> added,
      List<Long> removed, List<StorageDirState> dirs, long workerPinVersion, List<PersistResult> results) {
    return workerHeartbeat(workerId, capacity, used, added, removed, dirs, workerPinVersion, results, 0, 0);
  }

  /** See {@link WorkerProtocol#workerHeartbeat}. */
  public WorkerReply workerHeartbeat(long workerId, long capacity, long used, List<BlockReport> added,
      List<Long> removed, List<StorageDirState> dirs, long workerPinVersion, List<PersistResult> results,
      long awaitedBytes, long evictableAckedSeq) {
    return workers.workerHeartbeat(workerId, capacity, used, added, removed, dirs, workerPinVersion, results,
        awaitedBytes, evictableAckedSeq);
  }

  /** See {@link WorkerProtocol#workerRegistered}. */
  public void workerRegistered(long workerId, List<BlockReport> report) {
    workers.workerRegistered(workerId, report);
  }

  /** Refuses a heartbeat or commit naming a live worker without its registration token. */
  public void checkWorkerCaller(long workerId, String token, String call) throws StrataException {
    workers.checkWorkerCaller(workerId, token, call);
  }

  /** Refuses a caller that is not a live registered worker showing its token (calls that return credentials). */
  public void checkRegisteredWorker(long workerId, String token, String call) throws StrataException {
    workers.checkRegisteredWorker(workerId, token, call);
  }

  /** A worker registered: the token it must show to get mount credentials (see {@link WorkerAccess}). */
  public String issueWorkerToken(long workerId) {
    return workers.issueWorkerToken(workerId);
  }

  /** {@link #blockSource(long)} for a caller that must be a live registered worker. */
  public BlockSource blockSource(long workerId, String token, long blockId) throws StrataException {
    return workers.blockSource(workerId, token, blockId);
  }

  /** {@link #ufsWriteTarget(long)} for a caller that must be a live registered worker. */
  public UfsTarget ufsWriteTarget(long workerId, String token, long fileId) throws StrataException {
    return workers.ufsWriteTarget(workerId, token, fileId);
  }

  /** Where a worker can get a block: its live copies and, for a persisted file, its UFS range. */
  public BlockSource blockSource(long blockId) throws StrataException {
    return workers.blockSource(blockId);
  }

  /** Where a worker writes the UFS copy of a file written through; see {@link WorkerProtocol#ufsWriteTarget}. */
  public UfsTarget ufsWriteTarget(long fileId) throws StrataException {
    return workers.ufsWriteTarget(fileId);
  }

  /** See {@link WorkerProtocol#ufsWriteTargets}: a batch, one journal flush. */
  public List<MasterReplies.UfsTargetResult> ufsWriteTargets(List<Long> fileIds) throws StrataException {
    return workers.ufsWriteTargets(fileIds);
  }

  /** See {@link WorkerProtocol#reportCorruptBlock}. */
  public boolean reportCorruptBlock(long blockId, io.strata.common.net.WorkerAddress worker, long offset,
      String reason) throws StrataException {
    return workers.reportCorruptBlock(blockId, worker, offset, reason);
  }

  // ---- write leases ----

  /** How long a writer may go without renewing before its incomplete files are recovered. */
  public void setLeaseTimeout(Duration timeout) {
    leaseRecovery.setTimeout(timeout);
  }

  /** The smallest block size a create may ask for (strata.master.block.size.min); 1 until set. */
  public void setMinBlockSize(long bytes) {
    changes.setMinBlockSize(bytes);
  }

  /** See {@link LeaseRecovery#renewLease}. */
  public List<Long> renewLease(String clientId, List<Long> fileIds) throws StrataException {
    return leaseRecovery.renewLease(clientId, fileIds);
  }

  /** Orphaned UFS temps not deleted yet (tests). */
  int orphanedTempCount() {
    return leftovers.orphanedTempCount();
  }

  /** Recovers the files of writers that stopped renewing (the master's background thread); see {@link LeaseRecovery#tick}. */
  public List<Long> leaseTick() {
    List<Long> recovered = leaseRecovery.tick();
    leftovers.tick();
    return recovered;
  }

  /**
   * See {@link LeaseRecovery#ended}; only once what ended them (a complete, a delete) is durable, as a worker told so
   * drops what it holds of them: a complete applied here but lost with this master would leave the file being
   * written again, with its copies gone. The answer is empty while the journal has not caught up within
   * {@link #HEARTBEAT_FLUSH_WAIT_MS} (the worker asks again at its next check).
   */
  public List<Long> endedFiles(java.util.Collection<Long> fileIds) {
    List<Long> ended = leaseRecovery.ended(fileIds); // read first: what ended them was appended before it showed
    return ended.isEmpty() || journalCaughtUpBriefly() ? ended : List.of();
  }

  /** See {@link LeaseRecovery#recentlyRecoveredFileIds}. */
  public List<Long> recentlyRecoveredFileIds() {
    return leaseRecovery.recentlyRecoveredFileIds();
  }

  /** Files with a write lease (tests and reports). */
  public int leaseCount() {
    return leaseRecovery.leaseCount();
  }
}
