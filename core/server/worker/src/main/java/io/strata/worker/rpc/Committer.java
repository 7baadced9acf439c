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

  /**
   * Commits a second copy of a block another worker committed, with the same bytes (the caller checked): the
   * master keeps both (a plain commit of a block of a file being written replaces the other copies). By
   * default a plain commit.
   */
  default void commitBeside(long blockId, long length, String tier) throws StrataException {
    commit(blockId, length, tier);
  }

  /**
   * Commits a finished temp block in the store (fsynced first on fsync tiers), then at the master; when
   * the master refuses (file gone, complete, block too long), the local block is removed again.
   */
  default BlockStore.BlockMeta commitTemp(BlockStore store, BlockStore.TempBlock temp) throws IOException {
    return commitTemp(store, temp, false);
  }

  /** As {@link #commitTemp(BlockStore, BlockStore.TempBlock)}; {@code beside}: see {@link #commitBeside}. */
  default BlockStore.BlockMeta commitTemp(BlockStore store, BlockStore.TempBlock temp, boolean beside)
      throws IOException {
    BlockStore.BlockMeta meta = store.commit(temp);
    try {
      if (beside) {
        commitBeside(meta.blockId(), meta.length(), meta.tier());
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
