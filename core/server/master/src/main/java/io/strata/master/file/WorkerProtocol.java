package io.strata.master.file;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.id.BlockId;
import io.strata.common.path.StrataPath;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.BlockReport;
import io.strata.master.block.BlockState;
import io.strata.master.block.HeartbeatResult;
import io.strata.master.block.StorageDirState;
import io.strata.master.block.WorkerState;
import io.strata.master.file.MasterReplies.BlockSource;
import io.strata.master.file.MasterReplies.PersistResult;
import io.strata.master.file.MasterReplies.UfsSource;
import io.strata.master.file.MasterReplies.UfsTarget;
import io.strata.master.file.MasterReplies.WorkerReply;
import io.strata.server.ufs.UfsManager;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The master's answers to workers: heartbeats (the block master's part, then persist commands, the pin
 * list when it changed, and blocks the worker may evict), registrations, worker tokens, where a worker
 * finds a block (its copies, its UFS range), where it writes a file's UFS copy, corrupt-copy reports, and
 * the storage dirs workers reported (which no mount may overlap).
 *
 * <p>Thread-safe; it keeps no state of its own beyond what it shares with the master (the write targets).
 */
final class WorkerProtocol {
  /** Block ids a heartbeat reply tells a worker it may evict, at most. */
  static final int RELEASE_BATCH = 4096;

  /** Taken empty before removals go out: every change that queues removals does so under it with its entry. */
  private final Object commitLock;
  /** Whether what the journal holds so far is durable, after a short wait at most; never blocks on the disk. */
  private final java.util.function.BooleanSupplier durable;
  /** Persisted files whose PERSISTED entry is not durable yet: their blocks are not let go of. */
  private final PersistedUnflushed unflushed;
  private final InodeTree tree;
  private final BlockMaster blocks;
  private final MountTable mounts;
  private final MetadataSync sync;
  /** Null without under file systems. */
  private final PersistScheduler persister;
  private final WorkerAccess workerAccess;
  private final Map<Long, String> ufsWriteTargets;
  /** Where a write target is journaled (under the commit lock) before it is handed out. */
  private final io.strata.master.journal.JournalSink journal;
  private final MountOperations.Flush flush;
  /** Told of a write target a new one for the same file replaced ({@link MasterLeftovers#targetReplaced}). */
  private final java.util.function.BiConsumer<Long, String> targetReplaced;

  WorkerProtocol(InodeTree tree, BlockMaster blocks, MountTable mounts, MetadataSync sync,
      PersistScheduler persister, WorkerAccess workerAccess, Map<Long, String> ufsWriteTargets,
      PersistedUnflushed unflushed, Object commitLock, java.util.function.BooleanSupplier durable,
      io.strata.master.journal.JournalSink journal, MountOperations.Flush flush,
      java.util.function.BiConsumer<Long, String> targetReplaced) {
    this.targetReplaced = targetReplaced;
    this.journal = journal;
    this.flush = flush;
    this.unflushed = unflushed;
    this.commitLock = commitLock;
    this.durable = durable;
    this.tree = tree;
    this.blocks = blocks;
    this.mounts = mounts;
    this.sync = sync;
    this.persister = persister;
    this.workerAccess = workerAccess;
    this.ufsWriteTargets = ufsWriteTargets;
  }

  /** The storage dirs registered workers reported, live or lost. */
  List<String> storageDirs() {
    List<String> out = new ArrayList<>();
    for (WorkerState w : blocks.liveWorkers()) {
      w.dirs().forEach(d -> out.add(d.path()));
    }
    for (WorkerState w : blocks.lostWorkers()) {
      w.dirs().forEach(d -> out.add(d.path()));
    }
    return out;
  }

  /**
   * A reader found the copy of a block on {@code worker} corrupt: drop it unless it is the only copy of a
   * file not in the under file system ({@link BlockMaster#dropCorruptCopy}). Not journaled: locations never are.
   */
  boolean reportCorruptBlock(long blockId, io.strata.common.net.WorkerAddress worker, long offset,
      String reason) throws StrataException {
    if (blockId < 0) {
      throw new InvalidArgumentException("Block id " + blockId + " is negative");
    }
    FileInfo file = tree.getFile(BlockId.fileId(blockId));
    return blocks.dropCorruptCopy(blockId, worker, unflushed.persisted(file), offset, reason);
  }

  /**
   * As above, with the bytes the worker's writers wait for room for (the files on that worker persist
   * first) and the last batch of evictable blocks it applied.
   */
  WorkerReply workerHeartbeat(long workerId, long capacity, long used, List<BlockReport> added,
      List<Long> removed, List<StorageDirState> dirs, long workerPinVersion, List<PersistResult> results,
      long awaitedBytes, long evictableAckedSeq) {
    HeartbeatResult hb = blocks.heartbeat(workerId, capacity, used, added, removed, dirs);
    if (hb.reregister()) {
      return new WorkerReply(true, List.of(), List.of(), 0, null, BlockMaster.ReleaseBatch.NONE);
    }
    blocks.awaitedBytes(workerId, awaitedBytes);
    if (!added.isEmpty()) {
      // Blocks a registration could not carry come as added blocks: as at registration, those of persisted files
      // may be evicted there (a moved block's file is told again, which changes nothing).
      workerRegistered(workerId, added);
    }
    if (persister != null && !results.isEmpty()) {
      persister.report(workerId, results);
    }
    long version = tree.pinVersion();
    List<Long> pinned = version == workerPinVersion ? null : tree.pinnedFileIds();
    List<Long> removals = hb.removeBlockIds();
    if (!removals.isEmpty() && !removalsDurable()) {
      removals = List.of(); // they stay queued at the block master, and go in a later reply
    }
    return new WorkerReply(false, removals,
        persister == null ? List.of() : persister.commandsFor(workerId), version, pinned,
        blocks.takeReleased(workerId, RELEASE_BATCH, evictableAckedSeq));
  }

  /**
   * Whether the journal entries behind the removals just taken (a delete, a lease recovery, a replacing commit, an
   * unmount, a UFS sync's) are durable: each such change queues its removals under the commit lock together with its
   * entry, so once the lock is free (taken empty here) every removal in the batch has its entry in the journal, and a
   * flush now makes them durable. A master that crashed or lost its journal before that flush comes back with those
   * files and their blocks, not with the files and no blocks.
   */
  private boolean removalsDurable() {
    synchronized (commitLock) {
      // nothing: waits for a change that is queueing removals to have appended its entry
    }
    return durable.getAsBoolean();
  }

  /**
   * A worker registered with these blocks: the ones of persisted files may be evicted there (a worker
   * protects every block it finds at start until told). Runs after the registration, outside the block
   * master's monitor: it reads the namespace.
   */
  void workerRegistered(long workerId, List<BlockReport> report) {
    Map<Long, Boolean> persisted = new HashMap<>();
    List<Long> release = new ArrayList<>();
    for (BlockReport b : report) {
      boolean p = persisted.computeIfAbsent(BlockId.fileId(b.blockId()), id -> {
        FileInfo f = tree.getFile(id);
        return f != null && f.complete() && unflushed.persisted(f);
      });
      if (p) {
        release.add(b.blockId());
      }
    }
    if (!release.isEmpty()) {
      blocks.releaseToWorker(workerId, release);
    }
  }

  /** Refuses a heartbeat or commit naming a live worker without its registration token. */
  void checkWorkerCaller(long workerId, String token, String call) throws StrataException {
    workerAccess.checkIfLive(workerId, token, blocks, call);
  }

  /** Refuses a caller that is not a live registered worker showing its token. */
  void checkRegisteredWorker(long workerId, String token, String call) throws StrataException {
    workerAccess.check(workerId, token, blocks, call);
  }

  int workerTokenCount() {
    return workerAccess.tokenCount();
  }

  String issueWorkerToken(long workerId) {
    // A lost worker's token no longer opens anything: forgotten, so the tokens stay bounded by the live workers.
    return workerAccess.issue(workerId, () -> {
      java.util.Set<Long> live = new java.util.HashSet<>();
      for (io.strata.master.block.WorkerState w : blocks.liveWorkers()) {
        live.add(w.id());
      }
      return live;
    });
  }

  /** {@link #blockSource(long)} for a caller that must be a live registered worker. */
  BlockSource blockSource(long workerId, String token, long blockId) throws StrataException {
    workerAccess.check(workerId, token, blocks, "GetBlockSource");
    return blockSource(blockId);
  }

  /** {@link #ufsWriteTarget(long)} for a caller that must be a live registered worker. */
  UfsTarget ufsWriteTarget(long workerId, String token, long fileId) throws StrataException {
    checkRegisteredWorker(workerId, token, "GetUfsWriteTarget");
    return ufsWriteTarget(fileId);
  }

  /** Where a worker can get a block: its live copies and, for a persisted file, its UFS range. */
  BlockSource blockSource(long blockId) throws StrataException {
    if (!BlockId.isValid(blockId)) {
      throw new InvalidArgumentException("Block id " + blockId + " is not valid");
    }
    FileInfo f = tree.getFile(BlockId.fileId(blockId));
    if (f == null) {
      throw new NotFoundException("Block " + blockId + ": its file (id " + BlockId.fileId(blockId)
          + ") does not exist");
    }
    if (!f.complete()) {
      throw new FailedPreconditionException("Block " + blockId + ": file " + f.path() + " is not complete");
    }
    int index = BlockId.index(blockId);
    long length = f.blockLength(index);
    if (length < 0) {
      throw new NotFoundException("Block " + blockId + ": file " + f.path() + " has " + f.blockCount() + " blocks");
    }
    BlockState b = blocks.getBlock(blockId);
    UfsSource ufs = null;
    if (f.persisted()) {
      MountTable.Resolution r = mounts.resolve(StrataPath.of(f.path()));
      if (r != null) {
        ufs = new UfsSource(r.ufsUri(), r.mount().options(), index * f.blockSize(), f.length(), f.ufsMtimeMs(),
            f.ufsContentTag());
      }
    }
    return new BlockSource(length, b == null ? List.of() : b.locations(), ufs);
  }

  /**
   * Where a worker writes the UFS copy of a file being written CACHE_THROUGH or THROUGH (or ASYNC_THROUGH by a
   * writer that found no room in the cache).
   */
  UfsTarget ufsWriteTarget(long fileId) throws StrataException {
    UfsTarget t = ufsWriteTargetUnflushed(fileId);
    flush.run(); // its journal entry durable before any worker may create the temp
    return t;
  }

  /** {@link #ufsWriteTarget} for each of {@code fileIds} (a worker's batch), their journal entries made durable by one flush. */
  List<MasterReplies.UfsTargetResult> ufsWriteTargets(List<Long> fileIds) throws StrataException {
    List<MasterReplies.UfsTargetResult> out = new ArrayList<>(fileIds.size());
    for (long fileId : fileIds) {
      try {
        out.add(new MasterReplies.UfsTargetResult(ufsWriteTargetUnflushed(fileId), null));
      } catch (StrataException e) {
        out.add(new MasterReplies.UfsTargetResult(null, e));
      }
    }
    flush.run();
    return out;
  }

  /** {@link #ufsWriteTarget}, its journal entry appended but not flushed: the caller flushes before answering. */
  private UfsTarget ufsWriteTargetUnflushed(long fileId) throws StrataException {
    // A file renamed (or its directory) while its target is made is looked up again at its new path, a few times.
    for (int attempt = 1; ; attempt++) {
      UfsTarget t = ufsWriteTargetOnce(fileId, attempt < 3);
      if (t != null) {
        return t;
      }
    }
  }

  /** {@link #ufsWriteTarget}; null when the file moved meanwhile and {@code again} allows another look. */
  private UfsTarget ufsWriteTargetOnce(long fileId, boolean again) throws StrataException {
    FileInfo f = tree.getFile(fileId);
    if (f == null) {
      throw new NotFoundException("File " + fileId + " does not exist");
    }
    if (f.complete()) {
      throw new FailedPreconditionException("File " + f.path() + " is already complete");
    }
    if (!f.writeType().writesUfs() && f.writeType() != WriteType.ASYNC_THROUGH) {
      // ASYNC_THROUGH writers write the copy themselves when the cache has no room for their blocks.
      throw new FailedPreconditionException("File " + f.path() + " was created with write type " + f.writeType()
          + ", which writes no under file system copy");
    }
    StrataPath p = StrataPath.of(f.path());
    MountTable.Resolution r = mounts.requireUfs(p, "write");
    mounts.checkWritable(p, "write");
    String temp = UfsTempNames.tempUri(r.ufsUri(), f.name(), f.id());
    // The copy's directory is made here and the worker creates the copy without parents, so a write racing
    // a delete of its directory fails instead of bringing the directory back (see PersistScheduler#send).
    try {
      if (!UfsDirsCreated.mkdirsFor(sync.client(r), UfsManager.parent(temp), () -> tree.isFileAt(fileId, f.path()))) {
        if (again && tree.getFile(fileId) != null) {
          return null; // moved: its new path next
        }
        throw new NotFoundException("File " + fileId + " was deleted or moved while its write started");
      }
    } catch (IOException e) {
      throw e instanceof StrataException se ? se : new UnavailableException("Cannot create the under file "
          + "system directory of " + f.path() + ": " + e.getMessage(), e);
    }
    // Journaled, and durable before the answer, so the temp a worker creates is never one no master knows of: a
    // master replaying the journal deletes it if its file is deleted before it completes (MasterLeftovers). Checked
    // and recorded under the commit lock, which a delete takes too, so the target is never recorded for a file
    // deleted (or completed) meanwhile.
    synchronized (commitLock) {
      FileInfo cur = tree.getFile(fileId);
      if (cur == null || cur.complete()) {
        throw new NotFoundException("File " + fileId + " was deleted or completed while its write started");
      }
      journal.append(List.of(new io.strata.master.journal.JournalEntry.UfsWriteTarget(fileId, temp)));
      String replaced = ufsWriteTargets.put(fileId, temp);
      if (replaced != null && !replaced.equals(temp)) {
        targetReplaced.accept(fileId, replaced); // a stream given up: its temp goes once the file ends
      }
    }
    return new UfsTarget(temp, r.mount().options());
  }
}
