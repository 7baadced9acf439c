package io.strata.worker;

import io.strata.common.id.BlockId;
import io.strata.worker.store.BlockStore;
import java.util.Collection;
import java.util.Set;

/**
 * The pinned files the master last sent (with their list version) and their effect on the store: every
 * committed block of a pinned file is pinned against eviction, every other block unpinned. A new list
 * is applied to all committed blocks at once; a block committed later is pinned as it commits. The
 * worker starts at version 0, holding no pins, so the master's first list (any other version) arrives
 * with the first heartbeat.
 *
 * <p>Thread-safe: the list and every application of it are guarded by this object's monitor, so a
 * commit racing with a new list ends with the new list's answer. Lock order: this monitor, then the
 * store's (docs/ARCHITECTURE.md, "Concurrency").
 */
final class Pins {
  private long version;
  private Set<Long> fileIds = Set.of();

  synchronized long version() {
    return version;
  }

  synchronized boolean isPinnedFile(long fileId) {
    return fileIds.contains(fileId);
  }

  /** Takes the master's list {@code version} and applies it to every committed block. */
  synchronized void update(long version, Collection<Long> pinnedFileIds, BlockStore store) {
    this.version = version;
    this.fileIds = Set.copyOf(pinnedFileIds);
    for (BlockStore.BlockMeta b : store.committedBlocks()) {
      if (fileIds.contains(BlockId.fileId(b.blockId()))) {
        store.pin(b.blockId());
      } else {
        store.unpin(b.blockId());
      }
    }
  }

  /** A block just committed: pinned when its file is. */
  synchronized void committed(long blockId, BlockStore store) {
    if (fileIds.contains(BlockId.fileId(blockId))) {
      store.pin(blockId);
    }
  }
}
