package io.strata.master.file;

import io.strata.common.id.BlockId;
import io.strata.master.block.FileLookup;
import java.util.function.Supplier;

/**
 * The block master's questions about a block's file, answered from the {@link InodeTree}: whether the file
 * exists and is complete, and the length a block of a complete persisted file must have to be cached.
 *
 * <p>Thread-safe and stateless. Lock order (docs/ARCHITECTURE.md, "Concurrency"): the tree's lock comes
 * before the block master's monitor, so the block master asks under its monitor only inside
 * {@link #whileUnchanged}, which holds the tree's read lock; the lookups there re-enter that read lock.
 */
final class TreeFileLookup implements FileLookup {
  private final InodeTree tree;

  TreeFileLookup(InodeTree tree) {
    this.tree = tree;
  }

  @Override
  public FileState stateOf(long fileId) {
    FileInfo f = tree.getFile(fileId);
    if (f == null) {
      return FileState.MISSING;
    }
    return f.complete() ? FileState.COMPLETE : FileState.INCOMPLETE;
  }

  @Override
  public long cacheableLength(long blockId) {
    FileInfo f = tree.getFile(BlockId.fileId(blockId));
    if (f == null || !f.complete() || !f.persisted()) {
      return -1;
    }
    return f.blockLength(BlockId.index(blockId));
  }

  @Override
  public long maxBlockLength(long blockId) {
    FileInfo f = tree.getFile(BlockId.fileId(blockId));
    return f == null ? Long.MAX_VALUE : f.blockSize();
  }

  @Override
  public <T> T whileUnchanged(Supplier<T> action) {
    return tree.whileFrozen(action);
  }
}
