package io.strata.worker.ufs;

import io.strata.common.exception.StrataException;
import io.strata.worker.store.BlockStore;
import java.io.IOException;

/**
 * Commits a filled temp block the way a client-written block is committed: in the store, then at the
 * master; when the master refuses, the block leaves the store again (the master would not know of it).
 * Stateless.
 */
final class LocalCommit {
  private LocalCommit() {}

  static BlockStore.BlockMeta commit(BlockStore store, MasterClient master, BlockStore.TempBlock temp)
      throws IOException {
    BlockStore.BlockMeta meta;
    try {
      meta = store.commit(temp);
    } catch (IOException | RuntimeException e) {
      store.abort(temp); // a no-op when the commit got as far as closing it
      throw e;
    }
    try {
      master.commitBlock(meta.blockId(), meta.length(), meta.tier());
    } catch (StrataException e) {
      try {
        store.remove(meta.blockId());
      } catch (IOException ignored) {
        // The master does not know the block; the next registration report cleans it up.
      }
      throw e;
    }
    return meta;
  }
}
