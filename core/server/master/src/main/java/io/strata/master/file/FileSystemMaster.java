package io.strata.master.file;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.DirectoryNotEmptyException;
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
import io.strata.master.block.FileLookup;
import io.strata.master.block.HeartbeatResult;
import io.strata.master.block.StorageDirState;
import io.strata.master.file.MasterReplies.BlockSource;
import io.strata.master.file.MasterReplies.FreeResult;
import io.strata.master.file.MasterReplies.PersistResult;
import io.strata.master.file.MasterReplies.UfsSource;
import io.strata.master.file.MasterReplies.UfsTarget;
import io.strata.master.file.MasterReplies.WorkerReply;
import io.strata.master.journal.Journal;
import io.strata.master.journal.JournalEntry;
import io.strata.master.journal.JournalSink;
import io.strata.server.ufs.UfsManager;
import io.strata.server.ufs.UfsStatus;
import io.strata.server.ufs.UnderFileSystem;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's domain facade for clients and workers: namespace operations on the {@link InodeTree},
 * block bookkeeping on the {@link BlockMaster}, the mount table and the under file systems behind it, and
 * the rules that join them (a file completes only when all its blocks are committed with the right
 * lengths, and, written through, once its UFS copy is in place; a deleted file's blocks are removed from
 * workers and its UFS copy deleted; a complete file accepts no new blocks unless it is persisted, when
 * workers may cache its blocks again).
 *
 * <p>UFS calls are made outside the tree's lock, before the namespace change they precede (a delete
 * deletes the UFS copy first, so a failure changes nothing in Strata). Without a {@link UfsConfig} (unit
 * tests of the namespace) there is no mount and nothing is ever persisted. Thread-safe.
 */
public final class FileSystemMaster {
  private static final Logger LOG = LoggerFactory.getLogger(FileSystemMaster.class);

  private final Clock clock;
  private final InodeTree tree;
  private final BlockMaster blocks;
  private final long maxBlockSize;
  /**
   * Orders block commits against the complete, delete, free, unmount and checkpoint of the same file.
   * Lock order (docs/ARCHITECTURE.md, "Concurrency"): this, then the tree's lock, then the block master's
   * monitor, then the leaves (mount table, persist scheduler, journal). Never held across a UFS call.
   */
  private final Object commitLock = new Object();
  /** Appended to by the tree and block commits; null when running without a journal (unit tests). */
  private final Journal journal;
  private final MountTable mounts = new MountTable();
  private final UfsConfig ufsConf;
  private final MetadataSync sync;
  private final PersistScheduler persister;
  private final MountOperations mountOps;
  private final CachePolicies policies;
  /** Temporary UFS names handed to workers writing a file through, by file id (not journaled). */
  private final Map<Long, String> ufsWriteTargets = new ConcurrentHashMap<>();
  /** Files whose through-written UFS copy a complete is moving into place now (one attempt at a time). */
  private final java.util.Set<Long> placing = ConcurrentHashMap.newKeySet();
  /** Write leases of incomplete files and their recovery. */
  private final LeaseRecovery leaseRecovery;
  private final WorkerAccess workerAccess = new WorkerAccess();
  private volatile MountGuard mountGuard = MountGuard.NONE;
  /** The tree's journal sink: tags the operations of calls with request ids, and answers their retries. */
  private final IdempotentCalls calls;

  public FileSystemMaster(Clock clock, Duration workerTimeout, long maxBlockSize) {
    this(clock, workerTimeout, maxBlockSize, null);
  }

  /** A master whose every change is journaled; replay with {@link #replay} before serving. */
  public FileSystemMaster(Clock clock, Duration workerTimeout, long maxBlockSize, Journal journal) {
    this(clock, workerTimeout, maxBlockSize, journal, null);
  }

  /** With under file systems: {@code ufs} names the root mount and the clients. */
  public FileSystemMaster(Clock clock, Duration workerTimeout, long maxBlockSize, Journal journal, UfsConfig ufs) {
    this.clock = clock;
    this.journal = journal;
    this.calls = new IdempotentCalls(journal == null ? JournalSink.NONE : journal, clock,
        new RequestIdTable(io.strata.common.conf.StrataConf.defaults().get(
            io.strata.master.MasterKeys.REQUEST_IDS_PER_CLIENT_MAX),
            io.strata.common.conf.StrataConf.defaults().get(io.strata.master.MasterKeys.REQUEST_IDS_RETENTION)));
    this.tree = new InodeTree(clock, calls);
    this.blocks = new BlockMaster(clock, workerTimeout, new FileLookup() {
      @Override
      public FileState stateOf(long fileId) {
        return fileState(fileId);
      }

      @Override
      public long cacheableLength(long blockId) {
        return FileSystemMaster.this.cacheableLength(blockId);
      }

      @Override
      public <T> T whileUnchanged(java.util.function.Supplier<T> action) {
        return tree.whileFrozen(action);
      }
    });
    this.maxBlockSize = maxBlockSize;
    this.ufsConf = ufs;
    if (ufs != null && ufs.rootMount() != null) {
      mounts.add(ufs.rootMount());
    }
    UfsManager manager = ufs == null ? new UfsManager() : ufs.manager();
    this.sync = new MetadataSync(tree, mounts, manager, clock, ufs == null ? 64L << 20 : ufs.blockSize(),
        commitLock, this::removeBlocksOf);
    this.persister = ufs == null ? null : new PersistScheduler(tree, blocks, mounts, sync, this::blocksOf,
        this::syncQuietly, clock, ufs);
    this.mountOps = new MountOperations(tree, mounts, sync, ufs, commitLock, this::removeBlocksOf, this::sync);
    this.leaseRecovery = new LeaseRecovery(tree, mounts, sync, clock, commitLock, this::removeBlocksOf, this::sync,
        ufsWriteTargets);
    this.policies = new CachePolicies(tree, blocks, mounts, sync, clock, commitLock, this::sync,
        (path, recursive) -> delete(path, recursive, false));
  }

  /** Waits until the changes made so far are durable; an RPC calls it before it answers. */
  private void sync() throws StrataException {
    if (journal != null) {
      journal.flush();
    }
  }

  private void syncQuietly() {
    try {
      sync();
    } catch (StrataException e) {
      LOG.error("The journal could not be flushed: {}", e.getMessage());
    }
  }

  private void removeBlocksOf(List<Long> fileIds) {
    for (long id : fileIds) {
      blocks.removeFileBlocks(id, 0);
      ufsWriteTargets.remove(id);
    }
  }

  /** The bounds of the request-id table (strata.master.request.ids.*); call before replaying or serving. */
  public void setRequestIdLimits(int perClientMax, Duration retention) {
    calls.limits(perClientMax, retention);
  }

  /** Request ids kept now (all clients; for tests). */
  public int requestIdCount() {
    return calls.table().size();
  }

  /** Applies one journaled change during recovery. */
  public void replay(JournalEntry entry) throws StrataException {
    if (entry instanceof JournalEntry.RequestDone r) {
      calls.table().record(r);
      return;
    }
    if (entry instanceof JournalEntry.CommitBlock c) {
      blocks.restoreBlock(c.blockId(), c.length());
      return;
    }
    if (entry instanceof JournalEntry.AddMount m) {
      mounts.add(new MountTable.MountInfo(m.path(), m.ufsUri(), m.readOnly(), m.shared(), m.options()));
      return;
    }
    if (entry instanceof JournalEntry.DeleteMount m) {
      mounts.remove(m.path());
      return;
    }
    List<Long> removed = tree.apply(entry);
    for (long fileId : removed) {
      blocks.removeFileBlocks(fileId, 0);
    }
    if (entry instanceof JournalEntry.CompleteFile c) {
      FileInfo f = tree.getFile(c.id());
      blocks.removeFileBlocks(c.id(), f.blockCount());
    }
  }

  /** Writes a checkpoint of the whole namespace, mounts and block metadata. */
  public void checkpoint() throws IOException {
    if (journal == null) {
      return;
    }
    long seq;
    List<JournalEntry> entries;
    synchronized (commitLock) {
      // Tree changes append under the tree's write lock, block commits under commitLock: holding both
      // keeps the sequence and the state still while they are read.
      long[] s = new long[1];
      entries = tree.whileFrozen(() -> {
        s[0] = journal.appendedSequence();
        List<JournalEntry> all = tree.snapshotEntries();
        for (MountTable.MountInfo m : mounts.list()) {
          if (!m.path().equals("/")) {
            all.add(new JournalEntry.AddMount(m.path(), m.ufsUri(), m.readOnly(), m.shared(), m.options()));
          }
        }
        all.addAll(blocks.snapshotEntries());
        all.addAll(calls.table().snapshotEntries());
        return all;
      });
      seq = s[0];
    }
    journal.checkpoint(seq, entries);
  }

  public BlockMaster blockMaster() {
    return blocks;
  }

  public InodeTree tree() {
    return tree;
  }

  private FileLookup.FileState fileState(long fileId) {
    FileInfo f = tree.getFile(fileId);
    if (f == null) {
      return FileLookup.FileState.MISSING;
    }
    return f.complete() ? FileLookup.FileState.COMPLETE : FileLookup.FileState.INCOMPLETE;
  }

  private long cacheableLength(long blockId) {
    FileInfo f = tree.getFile(BlockId.fileId(blockId));
    if (f == null || !f.complete() || !f.persisted()) {
      return -1;
    }
    return f.blockLength(BlockId.index(blockId));
  }

  // ---- mounts ----

  private MountTable.Resolution resolve(StrataPath p) {
    return mounts.resolve(p);
  }

  private static String ufsPathOf(MountTable.Resolution r) {
    return r == null ? "" : r.ufsUri();
  }

  /** The snapshot with its UFS path and mount flag. */
  private FileInfo withUfs(FileInfo f) throws StrataException {
    StrataPath p = StrataPath.of(f.path());
    return f.withUfs(ufsPathOf(resolve(p)), mounts.isMountPoint(f.path()));
  }

  public List<MountTable.MountInfo> mountTable() {
    return mounts.list();
  }

  /** The rules a mount must meet beyond the namespace's (Strata's own dirs, unsafe options). */
  public void setMountGuard(MountGuard guard) {
    this.mountGuard = guard;
  }

  /** How long a writer may go without renewing before its incomplete files are recovered. */
  public void setLeaseTimeout(Duration timeout) {
    leaseRecovery.setTimeout(timeout);
  }

  /** See {@link MountOperations#mount}; first the {@link MountGuard}'s rules. */
  public void mount(String path, String ufsUri, boolean readOnly, boolean shared, Map<String, String> options)
      throws StrataException {
    StrataPath p = StrataPath.of(path);
    if (!p.isRoot()) {
      UfsTempNames.refuseUserName(path, p.name());
    }
    if (ufsConf != null) {
      mountGuard.checkMount(path, ufsUri, UfsManager.normalize(ufsUri, ufsConf.home()), options, workerDirs());
    }
    mountOps.mount(path, ufsUri, readOnly, shared, options);
  }

  /** The storage dirs registered workers reported (a mount may not overlap them). */
  private List<String> workerDirs() {
    List<String> out = new ArrayList<>();
    for (io.strata.master.block.WorkerState w : blocks.liveWorkers()) {
      w.dirs().forEach(d -> out.add(d.path()));
    }
    for (io.strata.master.block.WorkerState w : blocks.lostWorkers()) {
      w.dirs().forEach(d -> out.add(d.path()));
    }
    return out;
  }

  /** See {@link MountOperations#unmount}. */
  public void unmount(String path) throws StrataException {
    mountOps.unmount(path);
  }

  // ---- namespace ----

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
    StrataPath p = StrataPath.of(path);
    if (!p.isRoot()) {
      UfsTempNames.refuseUserName(path, p.name());
    }
    if (blockSize <= 0) {
      throw new InvalidArgumentException("Cannot create " + path + ": block size " + blockSize
          + " must be positive");
    }
    if (blockSize > maxBlockSize) {
      throw new InvalidArgumentException("Cannot create " + path + ": block size " + blockSize
          + " is larger than the limit " + maxBlockSize + " (strata.master.block.size.max)");
    }
    if (mode < 0 || mode > 07777) {
      throw new InvalidArgumentException("Cannot create " + path + ": mode " + Integer.toOctalString(mode)
          + " is not a permission mode (0 to 07777)");
    }
    if (!p.isRoot()) {
      mounts.checkWritable(p, "create");
      if (writeType != WriteType.MUST_CACHE) {
        mounts.requireUfs(p, "create with write type " + writeType);
      }
      // A path the UFS holds but Strata has not loaded yet exists: load it (and its parent) first.
      sync.ensure(p.parent(), -1);
      sync.ensure(p, -1);
    }
    FileInfo f = tree.createFile(p, blockSize, recursive, mode, writeType, owner);
    leaseRecovery.created(clientId, f.id());
    sync();
    return f;
  }

  /**
   * Completes a file. Written through (CACHE_THROUGH, THROUGH), its UFS copy must be there with the same
   * length: it is renamed into place and the file completes PERSISTED; ASYNC_THROUGH completes
   * TO_BE_PERSISTED; MUST_CACHE NOT_PERSISTED.
   */
  public FileInfo completeFile(String path, long fileId, long length) throws StrataException {
    return completeFile(path, fileId, length, false);
  }

  /**
   * As above; {@code ufsWritten}: an ASYNC_THROUGH writer that found no room in the cache wrote the UFS copy
   * itself ({@link #ufsWriteTarget}), so the file completes like CACHE_THROUGH, PERSISTED, with the blocks
   * it cached before (the rest are on no worker and read from the UFS).
   */
  public FileInfo completeFile(String path, long fileId, long length, boolean ufsWritten) throws StrataException {
    StrataPath p = StrataPath.of(path);
    FileInfo current = tree.getStatus(p);
    FileInfo done;
    boolean through = current.writeType().writesUfs()
        || (ufsWritten && current.writeType() == WriteType.ASYNC_THROUGH);
    if (!current.directory() && through && !current.complete()
        && (fileId == 0 || fileId == current.id()) && length >= 0) {
      // One placement of a file's UFS copy at a time: a retry arriving while the first attempt still renames
      // (a slow S3 copy) would otherwise see the temporary copy, clear the target the first attempt just
      // placed, and leave the file PERSISTED with no UFS copy.
      if (!placing.add(current.id())) {
        throw new UnavailableException("Cannot complete " + p + " now: an earlier attempt is still placing its "
            + "under file system copy; retry");
      }
      try {
        long ufsMtime = placeUfsCopy(p, current, length);
        synchronized (commitLock) {
          done = tree.completeFile(p, fileId, length,
              current.writeType().caches() ? this::checkCachedBlocks : (f, len) -> { }, PersistenceState.PERSISTED,
              ufsMtime);
          blocks.removeFileBlocks(done.id(), done.blockCount());
          blocks.filePersisted(done.id()); // its cached copies exist elsewhere now: workers may evict them
        }
        ufsWriteTargets.remove(done.id());
      } finally {
        placing.remove(current.id());
      }
    } else {
      PersistenceState state = current.writeType() == WriteType.ASYNC_THROUGH
          ? PersistenceState.TO_BE_PERSISTED : PersistenceState.NOT_PERSISTED;
      synchronized (commitLock) {
        done = tree.completeFile(p, fileId, length, this::checkBlocks, state, 0);
        // Blocks committed past the end (a writer that retried, or lied about the length) are dropped.
        blocks.removeFileBlocks(done.id(), done.blockCount());
      }
    }
    sync();
    return done;
  }

  /** Moves a through-written file's UFS copy from its temporary name into place; returns its UFS mtime. */
  private long placeUfsCopy(StrataPath p, FileInfo file, long length) throws StrataException {
    MountTable.Resolution r = mounts.requireUfs(p, "complete");
    if (file.writeType().caches()) {
      synchronized (commitLock) {
        checkCachedBlocks(file, length); // before the UFS copy moves: a bad block changes nothing
      }
    }
    UnderFileSystem u = sync.client(r);
    try {
      String temp = ufsWriteTargets.get(file.id());
      if (temp == null) {
        temp = findTempCopy(u, r.ufsUri(), file, length); // handed out before this master started leading
      }
      UfsStatus written = u.getStatus(temp);
      if (written == null) {
        throw new FailedPreconditionException("Cannot complete " + p + ": its under file system copy was never "
            + "written (nothing at " + temp + ")");
      }
      if (written.length() != length) {
        throw new FailedPreconditionException("Cannot complete " + p + " with length " + length + ": its under "
            + "file system copy " + temp + " has " + written.length() + " bytes");
      }
      replaceableTarget(u, r.ufsUri(), p);
      if (!u.rename(temp, r.ufsUri())) {
        throw new UnavailableException("Cannot complete " + p + ": renaming " + temp + " to " + r.ufsUri()
            + " failed in the under file system");
      }
      UfsStatus placed = u.getStatus(r.ufsUri());
      return placed == null ? 0 : placed.modificationTimeMs();
    } catch (StrataException e) {
      throw e;
    } catch (IOException e) {
      throw MetadataSync.unavailable(r, e);
    }
  }

  /**
   * Clears the way for a file's UFS copy: a file another writer left at its UFS path is replaced (Strata's
   * namespace owns the path); a directory there is refused, never deleted.
   */
  static void replaceableTarget(UnderFileSystem u, String uri, StrataPath p) throws IOException {
    UfsStatus there = u.getStatus(uri);
    if (there == null) {
      return;
    }
    if (there.directory()) {
      throw new FailedPreconditionException("Cannot place " + p + " at " + uri + ": a directory appeared there "
          + "in the under file system");
    }
    u.delete(uri, false);
  }

  private static String tempUri(MountTable.Resolution r, FileInfo f) {
    return UfsTempNames.tempUri(r.ufsUri(), f.name(), f.id());
  }

  /** A temp copy of {@code file} beside {@code ufsUri} with {@code length} bytes (else any, else a name that is not there). */
  private static String findTempCopy(UnderFileSystem u, String ufsUri, FileInfo file, long length) throws IOException {
    String parent = UfsManager.parent(ufsUri);
    String any = null;
    List<UfsStatus> listing = u.listStatus(parent);
    for (UfsStatus s : listing == null ? List.<UfsStatus>of() : listing) {
      if (!s.directory() && UfsTempNames.isTempOf(s.name(), file.name(), file.id())) {
        if (s.length() == length) {
          return UfsManager.join(parent, s.name());
        }
        any = UfsManager.join(parent, s.name());
      }
    }
    return any != null ? any : UfsManager.join(parent, UfsTempNames.tempName(file.name(), file.id(), "none"));
  }

  private void checkBlocks(FileInfo file, long length) throws StrataException {
    checkBlocks(file, length, false);
  }

  /**
   * A CACHE_THROUGH file's blocks: those cached must have the right length; a block may be missing (its
   * writer found no room in the cache and wrote it to the under file system only, which has every byte).
   */
  private void checkCachedBlocks(FileInfo file, long length) throws StrataException {
    checkBlocks(file, length, true);
  }

  private void checkBlocks(FileInfo file, long length, boolean allowMissing) throws StrataException {
    long bs = file.blockSize();
    long count = length / bs + (length % bs == 0 ? 0 : 1); // no overflow for huge lengths
    if (count > BlockId.MAX_INDEX + 1) {
      throw new InvalidArgumentException("Cannot complete " + file.path() + " with length " + length
          + ": it would need " + count + " blocks of " + bs + " bytes, more than " + (BlockId.MAX_INDEX + 1));
    }
    for (long i = 0; i < count; i++) {
      long expected = i < count - 1 ? bs : length - bs * (count - 1);
      long actual = blocks.blockLength(BlockId.of(file.id(), i));
      if (actual < 0 && allowMissing) {
        continue;
      }
      if (actual < 0) {
        throw new FailedPreconditionException("Cannot complete " + file.path() + " with length " + length
            + ": block " + i + " was never committed");
      }
      if (actual != expected) {
        throw new FailedPreconditionException("Cannot complete " + file.path() + " with length " + length
            + ": block " + i + " has " + actual + " bytes, expected " + expected);
      }
    }
  }

  /**
   * A worker committed a block: accept it if its file exists, is incomplete, and it fits the block size;
   * or, for a complete persisted file, if it is one of its blocks with the right length (a cached copy).
   */
  public void commitBlock(long workerId, long blockId, long length, String tier) throws StrataException {
    if (blockId < 0) {
      throw new InvalidArgumentException("Block id " + blockId + " is negative");
    }
    synchronized (commitLock) {
      FileInfo file = tree.getFile(BlockId.fileId(blockId));
      if (file == null) {
        throw new NotFoundException("Cannot commit block " + blockId + ": its file (id "
            + BlockId.fileId(blockId) + ") does not exist");
      }
      if (length > file.blockSize()) {
        throw new InvalidArgumentException("Cannot commit block " + blockId + " of " + length + " bytes: the "
            + "file's block size is " + file.blockSize());
      }
      boolean known = blocks.hasBlock(blockId);
      if (file.complete() && !known) {
        long expected = file.persisted() ? file.blockLength(BlockId.index(blockId)) : -1;
        if (expected < 0) {
          throw new FailedPreconditionException("Cannot commit block " + blockId + ": file " + file.path()
              + " is already complete");
        }
        if (expected != length) {
          throw new FailedPreconditionException("Cannot cache block " + blockId + " of " + file.path() + " with "
              + length + " bytes: the block has " + expected);
        }
      }
      blocks.commitBlock(workerId, blockId, length, tier);
      if (file.complete() && file.persisted()) {
        blocks.releaseToWorker(workerId, List.of(blockId)); // a cached copy of persisted data: evictable
      }
      // Journaled whenever the file is incomplete, not only when the block is new here: a block first
      // learned from a worker's report (which is not journaled) must reach the journal before its file
      // can complete. Replaying a block twice is harmless.
      if (journal != null && !file.complete()) {
        journal.append(new JournalEntry.CommitBlock(blockId, length));
      }
    }
    sync();
  }

  /**
   * A reader found the copy of a block on {@code worker} corrupt: drop it unless it is the only copy of a
   * file not in the under file system ({@link BlockMaster#dropCorruptCopy}). Not journaled: locations never are.
   */
  public boolean reportCorruptBlock(long blockId, io.strata.common.net.WorkerAddress worker, long offset,
      String reason) throws StrataException {
    if (blockId < 0) {
      throw new InvalidArgumentException("Block id " + blockId + " is negative");
    }
    FileInfo file = tree.getFile(BlockId.fileId(blockId));
    return blocks.dropCorruptCopy(blockId, worker, file != null && file.persisted(), offset, reason);
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
    StrataPath p = StrataPath.of(path);
    PersistenceState state = PersistenceState.NOT_PERSISTED;
    UfsDirsCreated madeInUfs = null;
    if (!p.isRoot()) {
      UfsTempNames.refuseUserName(path, p.name());
      mounts.checkWritable(p, "create directory");
      sync.ensure(p.parent(), -1);
      sync.ensure(p, -1);
      if (writeType.writesUfs() && tree.lookupOrNull(p) == null) {
        MountTable.Resolution r = mounts.requireUfs(p, "create directory with write type " + writeType);
        // Refused in Strata before anything is made in the UFS; undone there if the tree refuses after all.
        tree.checkParent(p, recursive, "create directory");
        try {
          madeInUfs = UfsDirsCreated.mkdirs(sync.client(r), r.ufsUri());
        } catch (StrataException e) {
          throw e;
        } catch (IOException e) {
          throw MetadataSync.unavailable(r, e);
        }
        state = PersistenceState.PERSISTED;
      }
    }
    FileInfo f;
    try {
      f = tree.createDirectory(p, recursive, allowExists, mode, state, List.of(), owner);
    } catch (StrataException e) {
      if (madeInUfs != null) {
        madeInUfs.undo();
      }
      throw e;
    }
    sync();
    return f;
  }

  public FileInfo getStatus(String path) throws StrataException {
    return getStatus(path, -1);
  }

  /** The status, loaded from the UFS when Strata lacks it, re-checked per {@code syncIntervalMs}. */
  public FileInfo getStatus(String path, long syncIntervalMs) throws StrataException {
    StrataPath p = StrataPath.of(path);
    sync.ensure(p, syncIntervalMs);
    return withUfs(tree.getStatus(p));
  }

  /**
   * {@link #getStatus(String, long)} answered from memory without waiting, or null when it might need
   * the UFS (the path is not loaded, or a persisted path is due a sync) or a writer holds the tree right
   * now: the caller then calls getStatus from a thread that may block. For the transport thread.
   */
  public FileInfo getStatusIfInMemory(String path, long syncIntervalMs) throws StrataException {
    StrataPath p = StrataPath.of(path);
    FileInfo f = tree.lookupIfFree(p);
    if (f == null || (syncIntervalMs >= 0 && f.persisted() && !mounts.isEmpty())) {
      return null;
    }
    return withUfs(f);
  }

  /**
   * A listing of a directory with at most {@code limit} children answered from memory without waiting,
   * or null when it might need the UFS (a sync is due, or its UFS children were never merged in), is
   * bigger, or a writer holds the tree right now: the caller then streams it with {@link #listStatus}.
   */
  public List<FileInfo> listSmallIfInMemory(String path, int limit, long syncIntervalMs) throws StrataException {
    StrataPath p = StrataPath.of(path);
    return syncIntervalMs >= 0 ? null : tree.listSmallIfFree(p, limit, !mounts.isEmpty());
  }

  /** The blocks of a complete file with their live locations, in order (lengths from the file's length). */
  public List<BlockState> blocksOf(FileInfo file) {
    List<BlockState> out = new ArrayList<>((int) file.blockCount());
    for (long i = 0; i < file.blockCount(); i++) {
      long id = BlockId.of(file.id(), i);
      BlockState b = blocks.getBlock(id);
      out.add(b != null ? b : new BlockState(id, file.blockLength(i), List.of()));
    }
    return out;
  }

  public void listStatus(String path, boolean recursive, int batchSize, Consumer<List<FileInfo>> sink)
      throws StrataException {
    listStatus(path, recursive, batchSize, sink, -1);
  }

  /**
   * Streams a listing to {@code sink} in batches of at most {@code batchSize}; each batch is read under
   * the tree lock on its own, so huge directories never sit in memory whole. Each directory's UFS listing
   * is merged in first when it was never loaded or is older than {@code syncIntervalMs}.
   */
  public void listStatus(String path, boolean recursive, int batchSize, Consumer<List<FileInfo>> sink,
      long syncIntervalMs) throws StrataException {
    StrataPath p = StrataPath.of(path);
    sync.ensure(p, syncIntervalMs);
    listInto(p, recursive, batchSize, sink, syncIntervalMs);
  }

  private void listInto(StrataPath dir, boolean recursive, int batchSize, Consumer<List<FileInfo>> sink,
      long syncIntervalMs) throws StrataException {
    sync.syncDirectory(dir, syncIntervalMs);
    String after = null;
    while (true) {
      List<FileInfo> batch;
      try {
        batch = tree.listBatch(dir, after, batchSize);
      } catch (NotFoundException e) {
        if (after == null) {
          throw e;
        }
        return; // the directory went away while we listed it
      }
      if (batch.isEmpty()) {
        return;
      }
      sink.accept(batch);
      if (recursive) {
        for (FileInfo f : batch) {
          if (f.directory() && !f.path().equals(dir.toString())) {
            listInto(StrataPath.of(f.path()), true, batchSize, sink, syncIntervalMs);
          }
        }
      }
      if (batch.size() < batchSize || !tree.getStatus(dir).directory()) {
        return;
      }
      after = batch.get(batch.size() - 1).name();
    }
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
    StrataPath p = StrataPath.of(path);
    if (!p.isRoot()) {
      for (MountTable.MountInfo m : mounts.mountsAtOrUnder(p)) {
        throw new FailedPreconditionException("Cannot delete " + path + ": " + (m.path().equals(p.toString())
            ? "it is a mount point" : m.path() + " inside it is a mount point") + "; unmount it instead");
      }
      sync.ensure(p, -1);
      FileInfo f = tree.getStatus(p);
      if (fileId != 0 && f.id() != fileId) {
        throw new FailedPreconditionException("Cannot delete " + path + ": it is no longer inode " + fileId
            + " (now " + f.id() + ")"); // checked before the UFS copy goes, as the tree checks it after
      }
      if (f.directory() && f.childCount() > 0 && !recursive) {
        throw new DirectoryNotEmptyException("Cannot delete " + path + ": the directory is not empty ("
            + f.childCount() + " entries) and the delete is not recursive");
      }
      MountTable.Resolution r = resolve(p);
      // A file the UFS does not hold (not persisted) has nothing there to delete; a directory may.
      if (!strataOnly && r != null && (f.directory() || f.persisted())) {
        mounts.checkWritable(p, "delete");
        try {
          sync.client(r).delete(r.ufsUri(), recursive);
        } catch (IOException e) {
          throw new FailedPreconditionException("Cannot delete " + path + ": the under file system refused to "
              + "delete " + r.ufsUri() + ": " + e.getMessage(), e);
        }
      }
    }
    // Under the commit lock, so a commit that already found the file cannot add a block after its
    // blocks were removed.
    synchronized (commitLock) {
      removeBlocksOf(tree.delete(p, recursive, List.of(), fileId));
    }
    sync();
  }

  /** Renames in Strata and, when the source exists in the UFS, there too (within one mount only). */
  public void rename(String src, String dst) throws StrataException {
    StrataPath s = StrataPath.of(src);
    StrataPath d = StrataPath.of(dst);
    if (!d.isRoot()) {
      UfsTempNames.refuseUserName(dst, d.name());
    }
    if (!s.isRoot() && !d.isRoot()) {
      for (MountTable.MountInfo m : mounts.mountsAtOrUnder(s)) {
        throw new FailedPreconditionException("Cannot rename " + src + ": " + (m.path().equals(s.toString())
            ? "it is a mount point" : m.path() + " inside it is a mount point"));
      }
      sync.ensure(s, -1);
      sync.ensure(d.parent(), -1);
      sync.ensure(d, -1);
    }
    // Refused in Strata before anything moves in the UFS (a missing destination parent used to be made
    // there first); what the UFS rename needed is undone if the tree refuses after all.
    tree.checkRename(s, d);
    MountTable.Resolution rs = s.isRoot() ? null : resolve(s);
    MountTable.Resolution rd = d.isRoot() ? null : resolve(d);
    boolean movedInUfs = false;
    UfsDirsCreated madeInUfs = null;
    FileInfo source = s.isRoot() ? null : tree.lookupOrNull(s);
    // Only what the UFS may hold moves there: a directory, or a persisted file.
    if (rs != null && rd != null && source != null && (source.directory() || source.persisted())
        && tree.lookupOrNull(d) == null && !d.isUnder(s)) {
      if (!rs.mount().path().equals(rd.mount().path())) {
        throw new FailedPreconditionException("Cannot rename " + src + " to " + dst + ": they are in different "
            + "mounts (" + rs.mount().path() + " and " + rd.mount().path() + ")");
      }
      mounts.checkWritable(s, "rename");
      UnderFileSystem u = sync.client(rs);
      try {
        if (u.getStatus(rs.ufsUri()) != null) {
          if (u.getStatus(rd.ufsUri()) != null) {
            throw new AlreadyExistsException("Cannot rename " + src + " to " + dst + ": " + rd.ufsUri()
                + " exists in the under file system");
          }
          madeInUfs = UfsDirsCreated.mkdirs(u, UfsManager.parent(rd.ufsUri()));
          if (!u.rename(rs.ufsUri(), rd.ufsUri())) {
            madeInUfs.undo();
            throw new UnavailableException("Cannot rename " + rs.ufsUri() + " to " + rd.ufsUri()
                + " in the under file system");
          }
          movedInUfs = true;
        }
      } catch (StrataException e) {
        throw e;
      } catch (IOException e) {
        throw MetadataSync.unavailable(rs, e);
      }
    }
    try {
      tree.rename(s, d);
    } catch (StrataException e) {
      if (movedInUfs) {
        try {
          sync.client(rs).rename(rd.ufsUri(), rs.ufsUri());
        } catch (IOException undo) {
          LOG.error("Renaming {} back to {} after a failed rename failed: {}", rd.ufsUri(), rs.ufsUri(), undo.toString());
        }
        madeInUfs.undo();
      }
      throw e;
    }
    sync();
  }

  // ---- retries of non-idempotent calls (request ids, see IdempotentCalls) ----

  /** {@link #createFile(String, long, boolean, int, WriteType, String)}, answered once per request id. */
  public FileInfo createFile(String path, long blockSize, boolean recursive, int mode, WriteType writeType,
      String clientId, RequestId id) throws StrataException {
    return createFile(path, blockSize, recursive, mode, writeType, clientId, "", id);
  }

  /** {@link #createFile(String, long, boolean, int, WriteType, String, String)}, answered once per request id. */
  public FileInfo createFile(String path, long blockSize, boolean recursive, int mode, WriteType writeType,
      String clientId, String owner, RequestId id) throws StrataException {
    return calls.run(id, e -> e instanceof JournalEntry.CreateFile c && c.path().equals(path),
        e -> ((JournalEntry.CreateFile) e).id(),
        () -> createFile(path, blockSize, recursive, mode, writeType, clientId, owner), first -> {
          FileInfo f = answerOf(first, path, "created");
          if (!f.complete()) {
            leaseRecovery.created(clientId, f.id()); // a new leader learns the writer's lease here
          }
          return f;
        });
  }

  /** {@link #completeFile(String, long, long, boolean)}, answered once per request id. */
  public FileInfo completeFile(String path, long fileId, long length, boolean ufsWritten, RequestId id)
      throws StrataException {
    return calls.run(id, e -> e instanceof JournalEntry.CompleteFile, e -> ((JournalEntry.CompleteFile) e).id(),
        () -> completeFile(path, fileId, length, ufsWritten), first -> answerOf(first, path, "completed"));
  }

  /** {@link #delete(String, boolean, boolean, long)}, applied once per request id. */
  public void delete(String path, boolean recursive, boolean strataOnly, long fileId, RequestId id)
      throws StrataException {
    calls.run(id, e -> e instanceof JournalEntry.Delete d && d.path().equals(path), e -> 0, () -> {
      delete(path, recursive, strataOnly, fileId);
      return null;
    }, first -> {
      sync();
      return null;
    });
  }

  /** {@link #rename(String, String)}, applied once per request id. */
  public void rename(String src, String dst, RequestId id) throws StrataException {
    calls.run(id, e -> e instanceof JournalEntry.Rename r && r.src().equals(src) && r.dst().equals(dst), e -> 0,
        () -> {
          rename(src, dst);
          return null;
        }, first -> {
          sync();
          return null;
        });
  }

  /**
   * The file a retried create or complete answers with: as it is now (the first attempt's own reply is
   * not kept; its inode is). Waits for the first attempt's entries to be durable, as that attempt would.
   */
  private FileInfo answerOf(JournalEntry.RequestDone first, String path, String did) throws StrataException {
    sync();
    FileInfo f = tree.getFile(first.inodeId());
    if (f == null) {
      throw new NotFoundException("Cannot answer the retry of " + new RequestId(first.clientId(), first.callId())
          + ": the file it " + did + " at " + path + " (inode " + first.inodeId() + ") no longer exists");
    }
    return withUfs(f);
  }

  public boolean exists(String path) throws StrataException {
    StrataPath p = StrataPath.of(path);
    sync.ensure(p, -1);
    return tree.exists(p);
  }

  // ---- free, pin, TTL, persist ----

  /** See {@link CachePolicies#free}. */
  public FreeResult free(String path, boolean recursive, boolean force) throws StrataException {
    return policies.free(path, recursive, force);
  }

  /** Sets pinned, TTL and TTL action (null: unchanged; TTL -1 removes it). */
  public FileInfo setAttribute(String path, Boolean pinned, Long ttlMs, String ttlAction) throws StrataException {
    return setAttribute(path, AttributeChange.cache(pinned, ttlMs, ttlAction == null ? null
        : TtlAction.parse(ttlAction)));
  }

  /** See {@link CachePolicies#setAttribute}. */
  public FileInfo setAttribute(String path, AttributeChange change) throws StrataException {
    return withUfs(policies.setAttribute(path, change));
  }

  /** See {@link CachePolicies#scheduleAsyncPersistence}. */
  public FileInfo scheduleAsyncPersistence(String path) throws StrataException {
    return withUfs(policies.scheduleAsyncPersistence(path));
  }

  /** Applies the TTLs that ran out (the master's background thread); see {@link CachePolicies#ttlTick}. */
  public void ttlTick() {
    policies.ttlTick();
  }

  /** Runs the persist scheduler once (the master's background thread). */
  public void persistTick() {
    if (persister != null) {
      persister.tick();
    }
  }

  // ---- worker protocol ----

  /** A worker heartbeat: the block master's part, then persist commands and the pin list when it changed. */
  public WorkerReply workerHeartbeat(long workerId, long capacity, long used, List<BlockReport> added,
      List<Long> removed, List<StorageDirState> dirs, long workerPinVersion, List<PersistResult> results) {
    return workerHeartbeat(workerId, capacity, used, added, removed, dirs, workerPinVersion, results, 0, 0);
  }

  /**
   * As above, with the bytes the worker's writers wait for room for (the files on that worker persist
   * first) and the last batch of evictable blocks it applied.
   */
  public WorkerReply workerHeartbeat(long workerId, long capacity, long used, List<BlockReport> added,
      List<Long> removed, List<StorageDirState> dirs, long workerPinVersion, List<PersistResult> results,
      long awaitedBytes, long evictableAckedSeq) {
    HeartbeatResult hb = blocks.heartbeat(workerId, capacity, used, added, removed, dirs);
    if (hb.reregister()) {
      return new WorkerReply(true, List.of(), List.of(), 0, null, BlockMaster.ReleaseBatch.NONE);
    }
    blocks.awaitedBytes(workerId, awaitedBytes);
    if (persister != null && !results.isEmpty()) {
      persister.report(workerId, results);
    }
    long version = tree.pinVersion();
    List<Long> pinned = version == workerPinVersion ? null : tree.pinnedFileIds();
    return new WorkerReply(false, hb.removeBlockIds(),
        persister == null ? List.of() : persister.commandsFor(workerId), version, pinned,
        blocks.takeReleased(workerId, RELEASE_BATCH, evictableAckedSeq));
  }

  /** Block ids a heartbeat reply tells a worker it may evict, at most. */
  static final int RELEASE_BATCH = 4096;

  /**
   * A worker registered with these blocks: the ones of persisted files may be evicted there (a worker
   * protects every block it finds at start until told). Runs after the registration, outside the block
   * master's monitor: it reads the namespace.
   */
  public void workerRegistered(long workerId, List<BlockReport> report) {
    Map<Long, Boolean> persisted = new HashMap<>();
    List<Long> release = new ArrayList<>();
    for (BlockReport b : report) {
      boolean p = persisted.computeIfAbsent(BlockId.fileId(b.blockId()), id -> {
        FileInfo f = tree.getFile(id);
        return f != null && f.complete() && f.persisted();
      });
      if (p) {
        release.add(b.blockId());
      }
    }
    if (!release.isEmpty()) {
      blocks.releaseToWorker(workerId, release);
    }
  }

  /** A worker registered: the token it must show to get mount credentials (see {@link WorkerAccess}). */
  /** Refuses a heartbeat or commit naming a live worker without its registration token. */
  public void checkWorkerCaller(long workerId, String token, String call) throws StrataException {
    workerAccess.checkIfLive(workerId, token, blocks, call);
  }

  public String issueWorkerToken(long workerId) {
    return workerAccess.issue(workerId);
  }

  /** {@link #blockSource(long)} for a caller that must be a live registered worker. */
  public BlockSource blockSource(long workerId, String token, long blockId) throws StrataException {
    workerAccess.check(workerId, token, blocks, "GetBlockSource");
    return blockSource(blockId);
  }

  /** {@link #ufsWriteTarget(long)} for a caller that must be a live registered worker. */
  public UfsTarget ufsWriteTarget(long workerId, String token, long fileId) throws StrataException {
    workerAccess.check(workerId, token, blocks, "GetUfsWriteTarget");
    return ufsWriteTarget(fileId);
  }

  /** Where a worker can get a block: its live copies and, for a persisted file, its UFS range. */
  public BlockSource blockSource(long blockId) throws StrataException {
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
      MountTable.Resolution r = resolve(StrataPath.of(f.path()));
      if (r != null) {
        ufs = new UfsSource(r.ufsUri(), r.mount().options(), index * f.blockSize(), f.length());
      }
    }
    return new BlockSource(length, b == null ? List.of() : b.locations(), ufs);
  }

  /**
   * Where a worker writes the UFS copy of a file being written CACHE_THROUGH or THROUGH (or ASYNC_THROUGH by a
   * writer that found no room in the cache).
   */
  public UfsTarget ufsWriteTarget(long fileId) throws StrataException {
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
    String temp = tempUri(r, f);
    // The copy's directory is made here and the worker creates the copy without parents, so a write racing
    // a delete of its directory fails instead of bringing the directory back (see PersistScheduler#send).
    try {
      if (!UfsDirsCreated.mkdirsFor(sync.client(r), UfsManager.parent(temp), () -> tree.isFileAt(fileId, f.path()))) {
        throw new NotFoundException("File " + fileId + " was deleted or moved while its write started");
      }
    } catch (IOException e) {
      throw e instanceof StrataException se ? se : new UnavailableException("Cannot create the under file "
          + "system directory of " + f.path() + ": " + e.getMessage(), e);
    }
    ufsWriteTargets.put(fileId, temp);
    return new UfsTarget(temp, r.mount().options());
  }

  // ---- write leases ----

  /** See {@link LeaseRecovery#renewLease}. */
  public List<Long> renewLease(String clientId, List<Long> fileIds) throws StrataException {
    return leaseRecovery.renewLease(clientId, fileIds);
  }

  /** Recovers the files of writers that stopped renewing (the master's background thread); see {@link LeaseRecovery#tick}. */
  public List<Long> leaseTick() {
    return leaseRecovery.tick();
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
