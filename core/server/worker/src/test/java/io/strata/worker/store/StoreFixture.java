package io.strata.worker.store;

import io.strata.worker.store.BlockStore.BlockMeta;
import io.strata.worker.store.BlockStore.ReadHandle;
import io.strata.worker.store.BlockStore.TempBlock;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

/**
 * Builds tiered block stores for tests and reads and writes their blocks. A block's bytes are derived
 * from its id (a {@code Random} seeded with it), so a block read back with another block's content, or
 * a stale copy, is caught without remembering what was written.
 */
final class StoreFixture {
  private final List<TierSpec> tiers = new ArrayList<>();
  private StoreEvents events = StoreEvents.NONE;
  private Clock clock = Clock.systemUTC();
  private Allocator allocator = new MaxFreeAllocator();
  private BlockAnnotator annotator = new LruAnnotator();
  private Durability durability = Durability.FSYNC;

  static StoreFixture builder() {
    return new StoreFixture();
  }

  /** Adds the next tier down, with one dir per path, each of {@code quota} bytes. */
  StoreFixture tier(String alias, long quota, Path... dirs) {
    List<TierSpec.Dir> ds = new ArrayList<>();
    for (Path p : dirs) {
      ds.add(new TierSpec.Dir(p, quota));
    }
    tiers.add(new TierSpec(alias, ds));
    return this;
  }

  StoreFixture events(StoreEvents e) {
    this.events = e;
    return this;
  }

  StoreFixture clock(Clock c) {
    this.clock = c;
    return this;
  }

  StoreFixture allocator(Allocator a) {
    this.allocator = a;
    return this;
  }

  StoreFixture durability(Durability d) {
    this.durability = d;
    return this;
  }

  StoreFixture annotator(BlockAnnotator a) {
    this.annotator = a;
    return this;
  }

  /** A new store over the configured dirs; building twice over the same dirs is a restart. */
  TieredBlockStore build() {
    return new TieredBlockStore(tiers, allocator, annotator, events, clock, durability);
  }

  // ---------------------------------------------------------------- block content

  static byte[] content(long blockId, int length) {
    byte[] b = new byte[length];
    new Random(blockId).nextBytes(b);
    return b;
  }

  /** Writes {@code data} in appends of at most {@code chunk} bytes and commits. */
  static BlockMeta write(BlockStore s, long blockId, byte[] data, int chunk) throws IOException {
    TempBlock t = s.createTemp(blockId, Math.max(1, data.length));
    for (int off = 0; off < data.length; off += chunk) {
      t.append(ByteBuffer.wrap(data, off, Math.min(chunk, data.length - off)));
    }
    return s.commit(t);
  }

  /** Writes a block of {@code length} id-derived bytes. */
  static BlockMeta write(BlockStore s, long blockId, int length) throws IOException {
    return write(s, blockId, content(blockId, length), 256);
  }

  /** Writes a block of a persisted file: eviction may drop it out of the last tier. */
  static BlockMeta persisted(BlockStore s, long blockId, byte[] data, int chunk) throws IOException {
    BlockMeta meta = write(s, blockId, data, chunk);
    s.markEvictable(java.util.List.of(blockId));
    return meta;
  }

  /** Writes a block of {@code length} id-derived bytes of a persisted file. */
  static BlockMeta persisted(BlockStore s, long blockId, int length) throws IOException {
    return persisted(s, blockId, content(blockId, length), 256);
  }

  static byte[] read(BlockStore s, long blockId) throws IOException {
    try (ReadHandle h = s.openForRead(blockId, false)) {
      return readAll(h.channel());
    }
  }

  /** Reads a channel from its current position to its end. */
  static byte[] readAll(FileChannel ch) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteBuffer buf = ByteBuffer.allocate(4096);
    while (ch.read(buf) >= 0) {
      buf.flip();
      out.write(buf.array(), 0, buf.limit());
      buf.clear();
    }
    return out.toByteArray();
  }

  // ---------------------------------------------------------------- files

  /** Entries in {@code <dir>/tmp}. */
  static List<Path> tmpFiles(Path dir) {
    return list(dir.resolve("tmp"));
  }

  /** Block files in {@code <dir>/blocks} (not their checksum sidecars). */
  static List<Path> blockFiles(Path dir) {
    return list(dir.resolve("blocks")).stream().filter(p -> !ChecksumSidecar.isSidecar(p)).toList();
  }

  /** Checksum sidecars in {@code <dir>/blocks}. */
  static List<Path> sidecarFiles(Path dir) {
    return list(dir.resolve("blocks")).stream().filter(ChecksumSidecar::isSidecar).toList();
  }

  /** Total size of the files in {@code <dir>/blocks}: what the dir really holds on disk. */
  static long bytesOnDisk(Path dir) {
    long n = 0;
    for (Path p : blockFiles(dir)) {
      try {
        n += Files.size(p);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return n;
  }

  private static List<Path> list(Path p) {
    try (Stream<Path> s = Files.list(p)) {
      return s.toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Deletes a tree, deepest first; a missing tree is fine. */
  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /**
   * The real {@link Durability#FSYNC}, for tests to override one step of (a sync, an unlink). A sync by path is the
   * real one, never through an overridden channel sync.
   */
  static class Fsync implements Durability {
    @Override
    public void syncFile(FileChannel channel) throws IOException {
      FSYNC.syncFile(channel);
    }

    @Override
    public void syncFile(Path file) throws IOException {
      FSYNC.syncFile(file);
    }

    @Override
    public void syncDir(Path dir) throws IOException {
      FSYNC.syncDir(dir);
    }
  }
}
