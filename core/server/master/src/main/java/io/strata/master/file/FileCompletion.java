package io.strata.master.file;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.id.BlockId;
import io.strata.common.path.StrataPath;
import io.strata.master.block.BlockMaster;
import io.strata.master.journal.Journal;
import io.strata.master.journal.JournalEntry;
import io.strata.server.ufs.UfsManager;
import io.strata.server.ufs.UfsStatus;
import io.strata.server.ufs.UnderFileSystem;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How a file becomes complete: a worker's block commits are checked against the file (it exists, is
 * incomplete, the block fits), and a complete checks every block's length; a file written through has
 * its UFS copy moved from its temporary name into place first (one attempt at a time per file) and
 * completes PERSISTED. Each call waits for its journal entries before it returns.
 *
 * <p>Thread-safe. Block commits and completes of the same file are ordered by the commit lock (see
 * {@link FileSystemMaster}); UFS calls happen before it is taken.
 */
final class FileCompletion {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FileCompletion.class);
  private final InodeTree tree;
  private final BlockMaster blocks;
  private final MountTable mounts;
  private final MetadataSync sync;
  private final Object commitLock;
  /** Temporary UFS names handed to workers writing a file through, by file id (shared, not journaled). */
  private final Map<Long, String> ufsWriteTargets;
  /** Null when running without a journal (unit tests). */
  private final Journal journal;
  private final MountOperations.Flush flush;
  /** Files whose through-written UFS copy a complete is moving into place now (one attempt at a time). */
  private final Set<Long> placing = ConcurrentHashMap.newKeySet();
  /**
   * Held on the file's path from the last check that it is still there until it is complete: no delete or rename of
   * a related path (which could bring another file's UFS copy to this path, then cleared) comes in between.
   */
  private final PathGuard guard;
  /** A through-written file completes PERSISTED: not durable until the complete's flush ({@link #settle}). */
  private final PersistedUnflushed unflushed;
  /**
   * Told of each file completed, once durable (as replay is of each CompleteFile entry): a write target an earlier
   * leader handed out for it is no orphan now ({@link MasterLeftovers#fileEnded}).
   */
  private final java.util.function.LongConsumer completed;

  FileCompletion(InodeTree tree, BlockMaster blocks, MountTable mounts, MetadataSync sync, Object commitLock,
      Map<Long, String> ufsWriteTargets, Journal journal, MountOperations.Flush flush, PathGuard guard,
      PersistedUnflushed unflushed, java.util.function.LongConsumer completed) {
    this.completed = completed;
    this.guard = guard;
    this.unflushed = unflushed;
    this.tree = tree;
    this.blocks = blocks;
    this.mounts = mounts;
    this.sync = sync;
    this.commitLock = commitLock;
    this.ufsWriteTargets = ufsWriteTargets;
    this.journal = journal;
    this.flush = flush;
  }

  /**
   * As above; {@code ufsWritten}: an ASYNC_THROUGH writer that found no room in the cache wrote the UFS copy
   * itself ({@link #ufsWriteTarget}), so the file completes like CACHE_THROUGH, PERSISTED, with the blocks
   * it cached before (the rest are on no worker and read from the UFS).
   */
  FileInfo completeFile(String path, long fileId, long length, boolean ufsWritten) throws StrataException {
    Applied done = apply(path, fileId, length, ufsWritten);
    flush.run();
    settle(done);
    return done.file();
  }

  /** A complete applied and journaled but not yet flushed; {@code persisted}: it completed PERSISTED. */
  record Applied(FileInfo file, boolean persisted) {}

  /**
   * {@link #completeFile} without waiting for its journal entries: the caller flushes, then
   * {@link #settle}s, before anyone hears of the outcome (a batch of completes shares one flush).
   */
  Applied apply(String path, long fileId, long length, boolean ufsWritten) throws StrataException {
    return apply(path, fileId, length, ufsWritten, System.nanoTime() + GUARD_WAIT_NANOS);
  }

  /**
   * The longest a complete waits for a change of a related path (a rename of its directory) before it is refused
   * UNAVAILABLE: well under a client's RPC deadline. A batch shares one such wait ({@link #apply(String, long, long,
   * boolean, long)}).
   */
  static final long GUARD_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);

  /** As above; {@code guardDeadline}: until when ({@link System#nanoTime}) it may wait for the path guard. */
  Applied apply(String path, long fileId, long length, boolean ufsWritten, long guardDeadline)
      throws StrataException {
    if (fileId != 0) {
      FileInfo byId = tree.getFile(fileId);
      if (byId != null && !byId.complete() && !byId.path().equals(path)) {
        // Renamed while it was written: completed where it is now, as HDFS completes by inode. Refused (the id
        // guard below) only when it moves again before the tree applies this.
        path = byId.path();
      }
    }
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
      PathGuard.Held held;
      try {
        held = guard.hold("Completing " + p, guardDeadline, p);
      } catch (StrataException | RuntimeException e) {
        placing.remove(current.id());
        throw e;
      }
      try (held) {
        long ufsMtime = placeUfsCopy(p, current, length);
        unflushed.add(current.id());
        try {
          synchronized (commitLock) {
            done = tree.completeFile(p, fileId, length,
                current.writeType().caches() ? this::checkCachedBlocks : (f, len) -> { }, PersistenceState.PERSISTED,
                ufsMtime);
            blocks.removeFileBlocks(done.id(), done.blockCount());
          }
        } catch (StrataException | RuntimeException e) {
          unflushed.remove(current.id());
          throw e;
        }
        ufsWriteTargets.remove(done.id());
      } finally {
        placing.remove(current.id());
      }
      return new Applied(done, true);
    } else {
      PersistenceState state = current.writeType() == WriteType.ASYNC_THROUGH
          ? PersistenceState.TO_BE_PERSISTED : PersistenceState.NOT_PERSISTED;
      synchronized (commitLock) {
        done = tree.completeFile(p, fileId, length, this::checkBlocks, state, 0);
        // Blocks committed past the end (a writer that retried, or lied about the length) are dropped.
        blocks.removeFileBlocks(done.id(), done.blockCount());
      }
    }
    return new Applied(done, false);
  }

  /** After the flush that made {@code done} durable. */
  void settle(Applied done) {
    completed.accept(done.file().id());
    if (done.persisted()) {
      // Its cached copies may be evicted only once PERSISTED is durable: before, a master that restarted would
      // not know the UFS holds the file.
      unflushed.remove(done.file().id());
      blocks.filePersisted(done.file().id());
    }
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
      boolean handedOutBefore = temp == null;
      if (temp == null
          || (u.getStatus(temp) == null && !UfsManager.parent(temp).equals(UfsManager.parent(r.ufsUri())))) {
        // Handed out before this master started leading; or its directory was renamed while the copy was written
        // (the copy moved with it): found beside the file's UFS path now.
        temp = findTempCopy(u, r.ufsUri(), file, length);
      }
      UfsStatus written = u.getStatus(temp);
      if (written == null && handedOutBefore && tree.isFileAt(file.id(), p.toString())) {
        // No temp copy, but one of this length in place: the master before this one placed it and failed before its
        // complete became durable (the writer retries it here). Nothing else writes there: the create found the UFS
        // path free, and Strata's namespace has held it since.
        UfsStatus there = u.getStatus(r.ufsUri());
        if (there != null && !there.directory() && there.length() == length) {
          LOG.info("Completing {}: its under file system copy was placed by the previous leader ({})", p, r.ufsUri());
          return there.modificationTimeMs();
        }
      }
      if (written == null) {
        throw new FailedPreconditionException("Cannot complete " + p + ": its under file system copy was never "
            + "written (nothing at " + temp + ")");
      }
      if (written.length() != length) {
        throw new FailedPreconditionException("Cannot complete " + p + " with length " + length + ": its under "
            + "file system copy " + temp + " has " + written.length() + " bytes");
      }
      // Checked again just before the UFS path is cleared: had this file been renamed away meanwhile (and another
      // file renamed to its old path), the copy there is that other file's, and clearing it would destroy it.
      if (!tree.isFileAt(file.id(), p.toString())) {
        throw new FailedPreconditionException("Cannot complete " + p + ": the file was renamed or deleted while it "
            + "was being completed");
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
    if (allowMissing) {
      // Only the blocks committed are checked, in one look at the block map: a length that would need millions of
      // blocks must not hold the commit lock for millions of lookups of blocks that were never there.
      for (Map.Entry<Long, Long> b : blocks.fileBlockLengths(file.id()).headMap(count).entrySet()) {
        long i = b.getKey();
        long expected = i < count - 1 ? bs : length - bs * (count - 1);
        if (b.getValue() != expected) {
          throw new FailedPreconditionException("Cannot complete " + file.path() + " with length " + length
              + ": block " + i + " has " + b.getValue() + " bytes, expected " + expected);
        }
      }
      return;
    }
    for (long i = 0; i < count; i++) {
      long expected = i < count - 1 ? bs : length - bs * (count - 1);
      long actual = blocks.blockLength(BlockId.of(file.id(), i));
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
   * An {@code announce} says again that the worker holds a copy it committed before (see
   * {@link BlockMaster#commitBlock(long, long, long, String, boolean, String)}). {@code replaces} ("host:port",
   * empty: none) names a worker whose copy of this block of a file being written this one replaces (a shuffle
   * replica sealed in place of its failed primary; strata_master.proto, CommitBlockRequest.replaces).
   */
  void commitBlock(long workerId, long blockId, long length, String tier, boolean announce, String replaces)
      throws StrataException {
    applyCommit(workerId, blockId, length, tier, announce, replaces);
    flush.run();
  }

  /**
   * Many commits of one worker, each applied as {@link #commitBlock} would, their journal entries made durable
   * by one flush. Returns one failure per commit, in order (null: committed); a failed flush fails them all.
   */
  List<StrataException> commitBlocks(long workerId, List<FileSystemMaster.BlockCommit> commits) throws StrataException {
    List<StrataException> out = new java.util.ArrayList<>(commits.size());
    for (FileSystemMaster.BlockCommit c : commits) {
      try {
        applyCommit(workerId, c.blockId(), c.length(), c.tier(), c.announce(), c.replaces());
        out.add(null);
      } catch (StrataException e) {
        out.add(e);
      }
    }
    flush.run();
    return out;
  }

  private void applyCommit(long workerId, long blockId, long length, String tier, boolean announce,
      String replaces) throws StrataException {
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
      if (replaces != null && !replaces.isEmpty() && !io.strata.common.shuffle.AppIds.underRoot(file.path())) {
        // Only a shuffle partition's replica is sealed in place of its primary: taken for any other file, a
        // commit sent through a worker's shuffle service with a wrong (or hostile) file id would drop the
        // genuine copy of a file being written.
        throw new InvalidArgumentException("Cannot commit block " + blockId + " in place of the copy at " + replaces
            + ": " + file.path() + " is not a shuffle partition file (under " + io.strata.common.shuffle.AppIds.ROOT
            + "/)");
      }
      // The first copy of a block of a freed file cached again: journaled, so a restart keeps it (a copy of a freed
      // file's block the master has no record of is taken for one from before the free, and removed).
      boolean recached = file.complete() && !known && !announce && blocks.freed(file.id());
      blocks.commitBlock(workerId, blockId, length, tier, announce, file.complete() || announce ? null : replaces);
      if (file.complete() && unflushed.persisted(file)) {
        blocks.releaseToWorker(workerId, List.of(blockId)); // a cached copy of persisted data: evictable
      }
      // Journaled whenever the file is incomplete, not only when the block is new here: a block first
      // learned from a worker's report (which is not journaled) must reach the journal before its file
      // can complete. Replaying a block twice is harmless.
      if (journal != null && (!file.complete() || recached)) {
        journal.append(new JournalEntry.CommitBlock(blockId, length));
      }
    }
  }
}
