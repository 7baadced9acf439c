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
 * <p>Each block file has its checksum sidecar {@code <path>/blocks/<blockId>.crc} ({@link ChecksumSidecar}).
 * At start a sidecar whose block is gone is deleted, and a block without a usable sidecar (written before
 * checksums existed, or its sidecar lost or damaged) gets one computed from its bytes as they are on disk
 * then, logged: the copy is kept (it may be the only one), but corruption from before that moment cannot
 * be detected in it.
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
  /** Blocks whose sidecar {@link #open} rebuilt from their bytes: their bytes are unverified (start-up only). */
  final java.util.Set<Long> rebuiltSidecars = new java.util.HashSet<>();

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

  /**
   * Creates the layout, empties tmp/, indexes blocks/ (checking each block's sidecar, see the class
   * comment; {@code durability} syncs the sidecars it writes); throws when the dir cannot be used.
   */
  Map<Long, Long> open(Durability durability) throws IOException {
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
    java.util.List<Path> sidecars = new java.util.ArrayList<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(blocksDir)) {
      for (Path p : files) {
        if (ChecksumSidecar.isSidecar(p)) {
          sidecars.add(p);
          continue;
        }
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
    for (Path sc : sidecars) {
      String name = sc.getFileName().toString();
      Long id = parseId(name.substring(0, name.length() - ChecksumSidecar.SUFFIX.length()));
      if (id == null || !found.containsKey(id)) {
        LOG.info("Removing checksum sidecar {}: it has no block (left by a crash between the two renames)", sc);
        Files.deleteIfExists(sc);
      }
    }
    int rebuilt = 0;
    for (java.util.Iterator<Map.Entry<Long, Long>> it = found.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Long, Long> e = it.next();
      Path block = blockPath(e.getKey());
      Path sc = ChecksumSidecar.of(block);
      try {
        ChecksumSidecar.read(sc, e.getValue());
        continue;
      } catch (java.nio.file.NoSuchFileException missing) {
        LOG.warn("Block {} in {} has no checksum sidecar (written before checksums, or the sidecar was lost): "
            + "computing its checksums from the bytes on disk now", e.getKey(), this);
      } catch (IOException damaged) {
        LOG.error("Block {} in {}: {}; computing its checksums from the bytes on disk now", e.getKey(), this,
            damaged.getMessage());
      }
      Path tmp = tmpDir.resolve(e.getKey() + "-start" + ChecksumSidecar.SUFFIX);
      try {
        ChecksumSidecar.write(tmp, e.getValue(), ChecksumSidecar.compute(block), fsync ? durability : null);
        Files.move(tmp, sc, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        rebuilt++;
        rebuiltSidecars.add(e.getKey());
      } catch (IOException failed) {
        // One block's trouble (its bytes unreadable, no room for the sidecar) is that block's, not the dir's: it is
        // left out of the index, its file left where it is (the bytes are kept for a later start, or an operator),
        // and every other block of the dir is served.
        LOG.error("Block {} in {}: its checksums cannot be rebuilt ({}); leaving it out, its file kept at {}",
            e.getKey(), this, failed.toString(), block);
        try {
          Files.deleteIfExists(tmp);
        } catch (IOException leftover) {
          // the tmp dir is emptied at the next start
        }
        it.remove();
      }
    }
    if (rebuilt > 0 && fsync) {
      durability.syncDir(blocksDir);
    }
    return found;
  }

  private static Long parseId(String name) {
    try {
      long id = Long.parseLong(name);
      return id < 0 ? null : id;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** The checksum sidecar of a committed block. */
  Path sidecarPath(long blockId) {
    return ChecksumSidecar.of(blockPath(blockId));
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
