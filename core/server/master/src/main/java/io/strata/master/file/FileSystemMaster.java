package io.strata.master.file;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.common.path.StrataPath;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.BlockState;
import io.strata.master.block.FileLookup;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import io.strata.master.journal.Journal;
import io.strata.master.journal.JournalEntry;
import io.strata.master.journal.JournalSink;
import java.util.function.Consumer;

/**
 * The master's domain facade for clients and workers: namespace operations on the {@link InodeTree},
 * block bookkeeping on the {@link BlockMaster}, and the rules that join them (a file completes only when
 * all its blocks are committed with the right lengths; a deleted file's blocks are removed from workers;
 * a complete file accepts no new blocks). Thread-safe.
 */
public final class FileSystemMaster {
  private final InodeTree tree;
  private final BlockMaster blocks;
  private final long maxBlockSize;
  /** Orders block commits against completion of the same file. */
  private final Object commitLock = new Object();

  /** Appended to by the tree and block commits; null when running without a journal (unit tests). */
  private final Journal journal;

  public FileSystemMaster(Clock clock, Duration workerTimeout, long maxBlockSize) {
    this(clock, workerTimeout, maxBlockSize, null);
  }

  /** A master whose every change is journaled; replay with {@link #replay} before serving. */
  public FileSystemMaster(Clock clock, Duration workerTimeout, long maxBlockSize, Journal journal) {
    this.journal = journal;
    this.tree = new InodeTree(clock, journal == null ? JournalSink.NONE : journal);
    this.blocks = new BlockMaster(clock, workerTimeout, this::fileState);
    this.maxBlockSize = maxBlockSize;
  }

  /** Waits until the changes made so far are durable; an RPC calls it before it answers. */
  private void sync() throws StrataException {
    if (journal != null) {
      journal.flush();
    }
  }

  /** Applies one journaled change during recovery. */
  public void replay(JournalEntry entry) throws StrataException {
    if (entry instanceof JournalEntry.CommitBlock c) {
      blocks.restoreBlock(c.blockId(), c.length());
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

  /** Writes a checkpoint of the whole namespace and block metadata. */
  public void checkpoint() throws java.io.IOException {
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
        all.addAll(blocks.snapshotEntries());
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

  public FileInfo createFile(String path, long blockSize, boolean recursive, int mode) throws StrataException {
    StrataPath p = StrataPath.of(path);
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
    FileInfo f = tree.createFile(p, blockSize, recursive, mode);
    sync();
    return f;
  }

  public FileInfo completeFile(String path, long fileId, long length) throws StrataException {
    StrataPath p = StrataPath.of(path);
    FileInfo done;
    synchronized (commitLock) {
      done = tree.completeFile(p, fileId, length, this::checkBlocks);
      // Blocks committed past the end (a writer that retried, or lied about the length) are dropped.
      blocks.removeFileBlocks(done.id(), done.blockCount());
    }
    sync();
    return done;
  }

  private void checkBlocks(FileInfo file, long length) throws StrataException {
    long bs = file.blockSize();
    long count = length / bs + (length % bs == 0 ? 0 : 1); // no overflow for huge lengths
    if (count > BlockId.MAX_INDEX + 1) {
      throw new InvalidArgumentException("Cannot complete " + file.path() + " with length " + length
          + ": it would need " + count + " blocks of " + bs + " bytes, more than " + (BlockId.MAX_INDEX + 1));
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

  /** A worker committed a block: accept it if its file exists, is incomplete, and it fits the block size. */
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
        throw new FailedPreconditionException("Cannot commit block " + blockId + ": file " + file.path()
            + " is already complete");
      }
      blocks.commitBlock(workerId, blockId, length, tier);
      // Journaled whenever the file is incomplete, not only when the block is new here: a block first
      // learned from a worker's report (which is not journaled) must reach the journal before its file
      // can complete. Replaying a block twice is harmless.
      if (journal != null && !file.complete()) {
        journal.append(new JournalEntry.CommitBlock(blockId, length));
      }
    }
    sync();
  }

  public FileInfo createDirectory(String path, boolean recursive, boolean allowExists, int mode)
      throws StrataException {
    FileInfo f = tree.createDirectory(StrataPath.of(path), recursive, allowExists, mode);
    sync();
    return f;
  }

  public FileInfo getStatus(String path) throws StrataException {
    return tree.getStatus(StrataPath.of(path));
  }

  /** The blocks of a complete file with their live locations, in order. */
  public List<BlockState> blocksOf(FileInfo file) {
    List<BlockState> out = new ArrayList<>((int) file.blockCount());
    for (long i = 0; i < file.blockCount(); i++) {
      long id = BlockId.of(file.id(), i);
      BlockState b = blocks.getBlock(id);
      out.add(b != null ? b : new BlockState(id, 0, List.of()));
    }
    return out;
  }

  /**
   * Streams a listing to {@code sink} in batches of at most {@code batchSize}; each batch is read under
   * the tree lock on its own, so huge directories never sit in memory whole.
   */
  public void listStatus(String path, boolean recursive, int batchSize, Consumer<List<FileInfo>> sink)
      throws StrataException {
    StrataPath p = StrataPath.of(path);
    listInto(p, recursive, batchSize, sink);
  }

  private void listInto(StrataPath dir, boolean recursive, int batchSize, Consumer<List<FileInfo>> sink)
      throws StrataException {
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
            listInto(StrataPath.of(f.path()), true, batchSize, sink);
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
    StrataPath p = StrataPath.of(path);
    // Under the commit lock, so a commit that already found the file cannot add a block after its
    // blocks were removed.
    synchronized (commitLock) {
      List<Long> removed = tree.delete(p, recursive);
      for (long fileId : removed) {
        blocks.removeFileBlocks(fileId, 0);
      }
    }
    sync();
  }

  public void rename(String src, String dst) throws StrataException {
    tree.rename(StrataPath.of(src), StrataPath.of(dst));
    sync();
  }

  public boolean exists(String path) throws StrataException {
    return tree.exists(StrataPath.of(path));
  }
}
