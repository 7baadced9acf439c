package io.strata.master.file;

import io.strata.common.exception.StrataException;
import io.strata.master.block.BlockMaster;
import io.strata.master.journal.Journal;
import io.strata.master.journal.JournalEntry;
import java.io.IOException;
import java.util.List;

/**
 * The master's state to and from the journal: {@link #replay} applies one journaled change to the part
 * that owns it (the request-id table, block commits and frees, mounts, or the {@link InodeTree}, whose removed and
 * completed files then drop their surplus block metadata, and through-written files deleted before they completed
 * leave their UFS temps to {@link MasterLeftovers}), and {@link #checkpoint} writes the whole state (tree, mounts but
 * the root, freed files and blocks, request ids, UFS write targets and orphaned temps) as one checkpoint at the
 * sequence it was read at.
 *
 * <p>Replay runs before the master serves (one thread). A checkpoint may run while it serves: it holds
 * {@code commitLock} (block commits append under it) and freezes the tree (tree changes append under its
 * write lock), so the sequence and the state it reads stay still; it writes the checkpoint after letting
 * go of both. Package-private; built by {@link FileSystemMaster}.
 */
final class MasterRecovery {
  private final InodeTree tree;
  private final BlockMaster blocks;
  private final MountTable mounts;
  private final IdempotentCalls calls;
  /** Null when running without a journal (unit tests): a checkpoint is then nothing. */
  private final Journal journal;
  private final Object commitLock;
  private final MasterLeftovers leftovers;
  /** The write targets this master handed out (the file system master's). */
  private final java.util.Map<Long, String> ufsWriteTargets;

  MasterRecovery(InodeTree tree, BlockMaster blocks, MountTable mounts, IdempotentCalls calls, Journal journal,
      Object commitLock, MasterLeftovers leftovers, java.util.Map<Long, String> ufsWriteTargets) {
    this.leftovers = leftovers;
    this.ufsWriteTargets = ufsWriteTargets;
    this.tree = tree;
    this.blocks = blocks;
    this.mounts = mounts;
    this.calls = calls;
    this.journal = journal;
    this.commitLock = commitLock;
  }

  /** Applies one journaled change during recovery. */
  void replay(JournalEntry entry) throws StrataException {
    if (entry instanceof JournalEntry.RequestDone r) {
      calls.table().record(r);
      return;
    }
    if (entry instanceof JournalEntry.CommitBlock c) {
      blocks.restoreBlock(c.blockId(), c.length());
      return;
    }
    if (entry instanceof JournalEntry.Free f) {
      for (long fileId : f.fileIds()) {
        if (tree.getFile(fileId) != null) { // (the free checked it exists, under the commit lock a delete takes too)
          blocks.freeFileBlocks(fileId);
        }
      }
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
    if (entry instanceof JournalEntry.UfsWriteTarget t) {
      leftovers.targetReplayed(t.fileId(), t.tempUri(), incomplete(t.fileId()));
      return;
    }
    if (entry instanceof JournalEntry.UfsTempDeleted t) {
      leftovers.tempDeleted(t.tempUri());
      return;
    }
    List<Long> removed = tree.apply(entry);
    for (long fileId : removed) {
      blocks.removeFileBlocks(fileId, 0);
      leftovers.fileEnded(fileId);
    }
    if (entry instanceof JournalEntry.CompleteFile c) {
      FileInfo f = tree.getFile(c.id());
      blocks.removeFileBlocks(c.id(), f.blockCount());
      leftovers.fileEnded(c.id());
    }
  }

  private boolean incomplete(long fileId) {
    FileInfo f = tree.getFile(fileId);
    return f != null && !f.complete();
  }

  /** Writes a checkpoint of the whole namespace, mounts and block metadata. */
  void checkpoint() throws IOException {
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
        all.addAll(leftovers.checkpointEntries(ufsWriteTargets, this::incomplete));
        return all;
      });
      seq = s[0];
    }
    journal.checkpoint(seq, entries);
  }
}
