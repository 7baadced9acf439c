package io.strata.worker.rpc;

import io.strata.common.exception.StrataException;
import io.strata.worker.store.BlockStore;
import java.io.IOException;

/**
 * How committed blocks reach the master: a streamed WriteBlock ({@link BlockWriteCall}) and a short-circuit
 * COMMIT both end in {@link #commitTemp}. Called from many writes' threads at once, so an implementation
 * must be thread-safe; it is called with no lock held.
 */
@FunctionalInterface
public interface Committer {
  void commit(long blockId, long length, String tier) throws StrataException;

  /** A master commit of a block committed in the store; {@code replaces}: see {@link #commitReplacing} (null: none). */
  record Commit(long blockId, long length, String tier, String replaces) {}

  /**
   * Commits at the master blocks already committed in the store, in as few calls as it can (by default one per
   * block); per commit, in order, null when the master took it, else why not. Does not touch the store.
   */
  default java.util.List<Exception> commitAll(java.util.List<Commit> commits) {
    java.util.List<Exception> out = new java.util.ArrayList<>(commits.size());
    for (Commit c : commits) {
      try {
        if (c.replaces() != null && !c.replaces().isEmpty()) {
          commitReplacing(c.blockId(), c.length(), c.tier(), c.replaces());
        } else {
          commit(c.blockId(), c.length(), c.tier());
        }
        out.add(null);
      } catch (StrataException | RuntimeException e) {
        out.add(e);
      }
    }
    return out;
  }

  /**
   * Commits a copy that replaces the copy of the worker at {@code replaces} ("host:port"): the master drops that
   * worker's location of the block and has it remove its copy (a shuffle replica sealed in place of its failed
   * primary; CommitBlockRequest.replaces). By default a plain commit, which replaces nothing.
   */
  default void commitReplacing(long blockId, long length, String tier, String replaces) throws StrataException {
    commit(blockId, length, tier);
  }

  /**
   * Commits a finished temp block in the store (fsynced first on fsync tiers), then at the master; when
   * the master refuses (file gone, complete, block too long), the local block is removed again.
   */
  default BlockStore.BlockMeta commitTemp(BlockStore store, BlockStore.TempBlock temp) throws IOException {
    return commitTemp(store, temp, null);
  }

  /**
   * As {@link #commitTemp(BlockStore, BlockStore.TempBlock)}; {@code replaces} (null: none): see
   * {@link #commitReplacing}.
   */
  default BlockStore.BlockMeta commitTemp(BlockStore store, BlockStore.TempBlock temp, String replaces)
      throws IOException {
    BlockStore.BlockMeta meta = store.commit(temp);
    try {
      if (replaces != null && !replaces.isEmpty()) {
        commitReplacing(meta.blockId(), meta.length(), meta.tier(), replaces);
      } else {
        commit(meta.blockId(), meta.length(), meta.tier());
      }
    } catch (StrataException | RuntimeException e) {
      try {
        store.remove(meta.blockId());
      } catch (IOException ignored) {
        // The master does not know the block; the next registration report cleans it.
      }
      throw e;
    }
    return meta;
  }
}
