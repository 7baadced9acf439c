package io.strata.master.file;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import io.strata.master.block.BlockMaster;
import io.strata.master.file.MasterReplies.FreeResult;
import io.strata.master.journal.JournalEntry;
import io.strata.master.journal.JournalSink;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What decides how long data stays cached: free (drop the cached blocks of persisted files), pins, TTLs
 * and asking for persistence; and, since they arrive in the same call, the other attributes a client sets
 * (owner, group, mode, times). Each change is journaled through the tree; the TTL check applies the TTLs
 * that ran out (DELETE through the master's delete, so the UFS copy goes too; FREE, then the TTL is
 * cleared). The file system master owns it and delegates to it.
 *
 * <p>Free and persist act on a subtree a batch at a time ({@link SubtreeWalk}), holding the tree's lock for one batch
 * and none across a journal wait. A free is journaled ({@link JournalEntry.Free}): see docs/ARCHITECTURE.md, "Free".
 *
 * <p>Thread-safe: the tree and block master are; the commit lock orders block removal against commits.
 */
final class CachePolicies {
  private static final Logger LOG = LoggerFactory.getLogger(CachePolicies.class);

  /** The master's delete (Strata and UFS). */
  @FunctionalInterface
  interface Deleter {
    /** Deletes {@code path} (recursively) while it is still inode {@code inodeId}; refused otherwise. */
    void delete(String path, boolean recursive, long inodeId) throws StrataException;
  }

  /** Persisted files whose PERSISTED entry is not durable yet: their blocks are not let go of. */
  private final PersistedUnflushed unflushed;
  private final InodeTree tree;
  private final BlockMaster blocks;
  private final MountTable mounts;
  private final MetadataSync sync;
  private final Clock clock;
  private final Object commitLock;
  private final MountOperations.Flush flush;
  private final Deleter deleter;
  /** Where a free's {@link JournalEntry.Free} entries go (appended under the commit lock, with its block changes). */
  private final JournalSink journal;
  /** The most inodes one batch of a subtree walk visits under the tree's lock. */
  private final WalkBatches batches;

  CachePolicies(InodeTree tree, BlockMaster blocks, MountTable mounts, MetadataSync sync, Clock clock,
      Object commitLock, MountOperations.Flush flush, Deleter deleter, PersistedUnflushed unflushed,
      JournalSink journal, WalkBatches batches) {
    this.journal = journal;
    this.batches = batches;
    this.unflushed = unflushed;
    this.tree = tree;
    this.blocks = blocks;
    this.mounts = mounts;
    this.sync = sync;
    this.clock = clock;
    this.commitLock = commitLock;
    this.flush = flush;
    this.deleter = deleter;
  }

  /**
   * Removes the cached blocks of the persisted files at or under {@code path} (a directory needs
   * {@code recursive}). Refuses, changing nothing, when a file is not persisted, or pinned without
   * {@code force} (which unpins it). Files being written are left alone.
   */
  FreeResult free(String path, boolean recursive, boolean force) throws StrataException {
    return free(path, recursive, force, 0);
  }

  /**
   * As above; a non-zero {@code expectedId} frees only while the path is still that inode. The subtree is walked
   * twice, a batch of at most {@link WalkBatches#size} inodes at a time with the tree's lock let go between batches (see
   * {@link SubtreeWalk}: no file is visited twice): first to refuse, changing nothing, then to free. A file that
   * turned unfit between the two walks (made or moved in unpersisted, pinned meanwhile without {@code force}) is left
   * alone, as one deleted meanwhile is; each file is checked again, by id, under the commit lock as it is freed. The
   * free of each batch is journaled ({@link JournalEntry.Free}) with the block records it drops, and durable before
   * the call returns: a restarted master or a new leader keeps it.
   */
  private FreeResult free(String path, boolean recursive, boolean force, long expectedId) throws StrataException {
    StrataPath p = StrataPath.of(path);
    sync.ensure(p, -1);
    FileInfo top = tree.getStatus(p);
    if (expectedId != 0 && top.id() != expectedId) {
      throw new FailedPreconditionException("Cannot free " + path + ": it is no longer inode " + expectedId);
    }
    if (top.directory() && !recursive) {
      throw new FailedPreconditionException("Cannot free " + path + ": it is a directory (free -R frees "
          + "everything under it)");
    }
    try (SubtreeWalk check = tree.walk(p)) {
      while (!check.done()) {
        for (SubtreeWalk.Visit v : tree.nextBatch(check, batches.size())) {
          String why = unfit(v, force);
          if (why != null) {
            throw new FailedPreconditionException("Cannot free " + v.file().path() + ": " + why);
          }
        }
      }
      batches.held(check.largestBatch());
    }
    if (force && top.pinned()) {
      tree.setAttribute(p, false, null, null, null, null, cur -> {
        if (cur.id() != top.id()) {
          throw new FailedPreconditionException("Cannot free " + path + ": it changed meanwhile");
        }
      });
    }
    long files = 0;
    long blocksFreed = 0;
    try (SubtreeWalk walk = tree.walk(p)) {
      while (!walk.done()) {
        List<FileInfo> batch = new ArrayList<>();
        for (SubtreeWalk.Visit v : tree.nextBatch(walk, batches.size())) {
          if (v.file().complete() && unfit(v, force) == null) {
            if (force && v.file().pinned()) {
              tree.setFileAttribute(v.file().id(), false, null, null, null, null, cur -> { });
            }
            batch.add(v.file());
          }
        }
        List<Long> freed = new ArrayList<>(batch.size());
        synchronized (commitLock) { // a delete takes it too: a file found here stays until it is let go
          for (FileInfo f : batch) {
            // Looked at again: pinned since its batch was read (and not freed with -f), or no longer persisted.
            if (unflushed.persisted(tree.getFile(f.id())) && (force || !tree.pinnedNow(f.id()))) {
              blocksFreed += blocks.freeFileBlocks(f.id());
              freed.add(f.id());
            }
          }
          if (!freed.isEmpty()) {
            journal.append(List.of(new JournalEntry.Free(freed)));
          }
        }
        files += freed.size();
      }
      batches.held(walk.largestBatch());
    }
    flush.run();
    return new FreeResult(files, blocksFreed);
  }

  /** Why the free must not drop this file's cached blocks, or null when it may (or the file is being written). */
  private String unfit(SubtreeWalk.Visit v, boolean force) {
    FileInfo f = v.file();
    if (!f.complete()) {
      return null;
    }
    if (!unflushed.persisted(f)) {
      return "it is " + (f.persisted() ? "persisted only just (not yet durable at the master; retry in a moment)"
          : f.persistence() + ", so its blocks are its only copy (persist it first: fs persist)");
    }
    return v.pinned() && !force ? "it is pinned (unpin it, or free -f)" : null;
  }

  /**
   * Applies a client's attribute change (pins, TTLs, and also owner, group, mode and times, which are
   * Strata's metadata only: the UFS copy keeps its own) after refusing bad values; journaled, durable
   * before it returns.
   */
  FileInfo setAttribute(String path, AttributeChange change) throws StrataException {
    StrataPath p = StrataPath.of(path);
    AttributeChange checked = change.checked(path);
    sync.ensure(p, -1);
    FileInfo f = tree.setAttribute(p, checked);
    flush.run();
    return f;
  }

  /** Marks complete, not yet persisted files at or under {@code path} TO_BE_PERSISTED. */
  FileInfo scheduleAsyncPersistence(String path) throws StrataException {
    StrataPath p = StrataPath.of(path);
    sync.ensure(p, -1);
    FileInfo top = tree.getStatus(p);
    mounts.requireUfs(p, "persist");
    mounts.checkWritable(p, "persist");
    if (!top.directory() && !top.complete()) {
      throw new FailedPreconditionException("Cannot persist " + path + ": the file is not complete");
    }
    // A batch at a time (see SubtreeWalk: no file is visited twice); each file is checked again as it is changed.
    try (SubtreeWalk walk = tree.walk(p)) {
      while (!walk.done()) {
        for (SubtreeWalk.Visit v : tree.nextBatch(walk, batches.size())) {
          FileInfo f = v.file();
          if (f.complete() && f.persistence() == PersistenceState.NOT_PERSISTED) {
            try {
              tree.setFileAttribute(f.id(), null, null, null, PersistenceState.TO_BE_PERSISTED, null, cur -> {
                if (cur.persistence() != PersistenceState.NOT_PERSISTED) {
                  throw new FailedPreconditionException("already " + cur.persistence());
                }
              });
            } catch (FailedPreconditionException raced) {
              // Another persist got there first: that file is on its way already; the others still go.
            }
          }
        }
      }
      batches.held(walk.largestBatch());
    }
    flush.run();
    return tree.getStatus(p);
  }

  /** Whether a file at or under {@code p} matches, walked a batch at a time. */
  private boolean anyFileUnder(StrataPath p, java.util.function.Predicate<FileInfo> match) throws StrataException {
    try (SubtreeWalk walk = tree.walk(p)) {
      while (!walk.done()) {
        for (SubtreeWalk.Visit v : tree.nextBatch(walk, batches.size())) {
          if (match.test(v.file())) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /**
   * Applies the TTLs that ran out: DELETE deletes (Strata and UFS), FREE frees and clears the TTL (a file still to be
   * persisted keeps it, and is freed at a later tick once persisted).
   */
  void ttlTick() {
    // What expired is acted on only while its path is still that inode: a file made at the path since (the
    // expired one deleted or renamed away) is not the one whose time ran out.
    for (FileInfo f : tree.expired(clock.millis())) {
      try {
        if (f.ttlAction() == TtlAction.DELETE) {
          deleter.delete(f.path(), true, f.id());
          LOG.info("TTL of {} ran out: deleted", f.path());
        } else {
          boolean keep = false;
          try {
            free(f.path(), true, true, f.id());
            LOG.info("TTL of {} ran out: freed", f.path());
          } catch (FailedPreconditionException e) {
            // Files on their way to the UFS (or just there) are freed once persisted: the TTL stays for a later tick.
            // Where a file is never to be persisted, nothing can be freed: the TTL goes, as after a free.
            keep = !anyFileUnder(StrataPath.of(f.path()),
                x -> x.complete() && !x.persisted() && x.persistence() != PersistenceState.TO_BE_PERSISTED);
            if (!keep) {
              throw e;
            }
            LOG.debug("TTL of {} ran out; freed once it is persisted ({})", f.path(), e.getMessage());
          } finally {
            if (!keep) {
              tree.setAttribute(StrataPath.of(f.path()), null, -1L, null, null, null, cur -> {
                if (cur.id() != f.id()) {
                  throw new FailedPreconditionException(f.path() + " is no longer inode " + f.id());
                }
              });
              flush.run();
            }
          }
        }
      } catch (StrataException | RuntimeException e) {
        LOG.warn("TTL action {} on {} failed: {}", f.ttlAction(), f.path(), e.getMessage());
      }
    }
  }
}
