package io.strata.worker.store;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One directory of one tier: its files, quota and accounting.
 *
 * <p>Layout: {@code <path>/blocks/<blockId>} holds committed blocks, one file each, never changed after
 * commit; {@code <path>/tmp/<blockId>-<n>} holds blocks being written or moved in. File names are built
 * only from numeric ids, so no request can name a file outside the dir.
 *
 * <p>Crash safety: a name in {@code blocks/} only ever holds a whole block. The store writes into
 * {@code tmp/}, fsyncs (on tiers with {@link #fsync}), then renames; so a restart indexes {@code blocks/}
 * as it finds it and drops everything in {@code tmp/}.
 *
 * <p>Accounting: {@code used} = committed bytes + bytes reserved by temp blocks and moves in flight.
 * A dir turns BAD when an I/O failure is confirmed by a {@link DirProbe} (or its layout is gone) and stays
 * bad; a bad dir holds nothing.
 *
 * <p>Thread-safe: counters and the block map are guarded by the owning {@link TieredBlockStore}'s
 * monitor (every mutator here is called with it held); {@link #state} is volatile so reports read it
 * freely. File operations run outside any lock.
 */
final class StorageDir implements DirView {
  private static final Logger LOG = LoggerFactory.getLogger(StorageDir.class);

  final int tierOrdinal;
  final String tierAlias;
  final int dirIndex;
  final Path root;
  final Path blocksDir;
  final Path tmpDir;
  final long capacity;
  /** Whether commits and moves into this dir are fsynced (its tier's setting). */
  final boolean fsync;
  long used;
  long lostBlocks;
  /** Committed blocks in this dir: id → length. */
  final Map<Long, Long> blocks = new HashMap<>();
  private volatile boolean good = true;

  StorageDir(int tierOrdinal, String tierAlias, int dirIndex, Path root, long capacity, boolean fsync) {
    this.fsync = fsync;
    this.tierOrdinal = tierOrdinal;
    this.tierAlias = tierAlias;
    this.dirIndex = dirIndex;
    this.root = root;
    this.blocksDir = root.resolve("blocks");
    this.tmpDir = root.resolve("tmp");
    this.capacity = capacity;
  }

  /** Creates the layout, empties tmp/, indexes blocks/; throws when the dir cannot be used. */
  Map<Long, Long> open() throws IOException {
    Files.createDirectories(blocksDir);
    Files.createDirectories(tmpDir);
    if (!Files.isWritable(blocksDir) || !Files.isWritable(tmpDir)) {
      throw new IOException(root + " is not writable");
    }
    try (DirectoryStream<Path> tmp = Files.newDirectoryStream(tmpDir)) {
      for (Path p : tmp) {
        Files.deleteIfExists(p);
      }
    }
    Map<Long, Long> found = new HashMap<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(blocksDir)) {
      for (Path p : files) {
        long id;
        try {
          id = Long.parseLong(p.getFileName().toString());
        } catch (NumberFormatException e) {
          LOG.warn("Ignoring {}: not a block file", p);
          continue;
        }
        if (id < 0) {
          LOG.warn("Ignoring {}: not a block id", p);
          continue;
        }
        found.put(id, Files.size(p));
      }
    }
    return found;
  }

  Path blockPath(long blockId) {
    return blocksDir.resolve(Long.toString(blockId));
  }

  /** True while the dir's layout is in place; a dir replaced by a file or removed is not. */
  boolean looksHealthy() {
    return Files.isDirectory(blocksDir) && Files.isDirectory(tmpDir);
  }

  void markBad() {
    good = false;
  }

  @Override
  public int tierOrdinal() {
    return tierOrdinal;
  }

  @Override
  public String tierAlias() {
    return tierAlias;
  }

  @Override
  public int dirIndex() {
    return dirIndex;
  }

  @Override
  public String path() {
    return root.toString();
  }

  @Override
  public long capacityBytes() {
    return capacity;
  }

  @Override
  public long usedBytes() {
    return used;
  }

  @Override
  public boolean isGood() {
    return good;
  }

  @Override
  public String toString() {
    return tierAlias + ":" + root;
  }
}
