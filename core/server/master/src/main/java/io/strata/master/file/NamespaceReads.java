package io.strata.master.file;

import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.common.path.StrataPath;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.BlockState;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The namespace's answers to readers: a path's status, whether it exists, listings (streamed in batches,
 * each read under the tree's lock on its own), a file's blocks with their live locations. Each loads or
 * re-checks what it needs from the under file system first ({@link MetadataSync}); the {@code IfInMemory}
 * variants never wait and never touch the UFS, for answering on a transport thread.
 *
 * <p>Thread-safe and stateless.
 */
final class NamespaceReads {
  private final InodeTree tree;
  private final BlockMaster blocks;
  private final MountTable mounts;
  private final MetadataSync sync;

  NamespaceReads(InodeTree tree, BlockMaster blocks, MountTable mounts, MetadataSync sync) {
    this.tree = tree;
    this.blocks = blocks;
    this.mounts = mounts;
    this.sync = sync;
  }

  /** The status, loaded from the UFS when Strata lacks it, re-checked per {@code syncIntervalMs}. */
  FileInfo getStatus(String path, long syncIntervalMs) throws StrataException {
    StrataPath p = StrataPath.of(path);
    sync.ensure(p, syncIntervalMs);
    return mounts.withUfs(tree.getStatus(p));
  }

  /**
   * {@link #getStatus(String, long)} answered from memory without waiting, or null when it might need
   * the UFS (the path is not loaded, or a persisted path is due a sync) or a writer holds the tree right
   * now: the caller then calls getStatus from a thread that may block. For the transport thread.
   */
  FileInfo getStatusIfInMemory(String path, long syncIntervalMs) throws StrataException {
    StrataPath p = StrataPath.of(path);
    FileInfo f = tree.lookupIfFree(p);
    if (f == null || (syncIntervalMs >= 0 && f.persisted() && !mounts.isEmpty())) {
      return null;
    }
    return mounts.withUfs(f);
  }

  /**
   * A listing of a directory with at most {@code limit} children answered from memory without waiting,
   * or null when it might need the UFS (a sync is due, or its UFS children were never merged in), is
   * bigger, or a writer holds the tree right now: the caller then streams it with {@link #listStatus}.
   */
  List<FileInfo> listSmallIfInMemory(String path, int limit, long syncIntervalMs) throws StrataException {
    StrataPath p = StrataPath.of(path);
    return syncIntervalMs >= 0 ? null : tree.listSmallIfFree(p, limit, !mounts.isEmpty());
  }

  /** The blocks of a complete file with their live locations, in order (lengths from the file's length). */
  List<BlockState> blocksOf(FileInfo file) {
    List<BlockState> out = new ArrayList<>((int) file.blockCount());
    for (long i = 0; i < file.blockCount(); i++) {
      long id = BlockId.of(file.id(), i);
      BlockState b = blocks.getBlock(id);
      out.add(b != null ? b : new BlockState(id, file.blockLength(i), List.of()));
    }
    return out;
  }

  /**
   * Streams a listing to {@code sink} in batches of at most {@code batchSize}; each batch is read under
   * the tree lock on its own, so huge directories never sit in memory whole. Each directory's UFS listing
   * is merged in first when it was never loaded or is older than {@code syncIntervalMs}.
   */
  void listStatus(String path, boolean recursive, int batchSize, Consumer<List<FileInfo>> sink,
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

  boolean exists(String path) throws StrataException {
    StrataPath p = StrataPath.of(path);
    sync.ensure(p, -1);
    return tree.exists(p);
  }
}
