package io.strata.worker.store;

import io.strata.common.checksum.ChunkChecksums;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The checksum sidecar of a committed block: {@code blocks/<id>.crc} beside {@code blocks/<id>}, holding the
 * CRC32C of every checksum chunk ({@link ChunkChecksums}) as the writer sent them and the worker checked
 * them. It is written (and fsynced on fsync tiers) and renamed into {@code blocks/} <em>before</em> the
 * block file, moves with the block between tiers (copied first, deleted after), and is deleted after the
 * block file. So a block file never lacks its sidecar; a sidecar without a block is debris of a crash and
 * is deleted at start.
 *
 * <p>Layout (big-endian): magic {@code SCRC}, version 1, bytes per checksum (int), block length (long),
 * chunk count (int), one int CRC32C per chunk, then the CRC32C of everything before it, so a damaged
 * sidecar is told apart from a damaged block.
 *
 * <p>Stateless; thread-safe.
 */
final class ChecksumSidecar {
  static final String SUFFIX = ".crc";
  private static final int MAGIC = 0x53435243; // "SCRC"
  private static final int VERSION = 1;
  private static final int HEADER = 4 + 4 + 4 + 8 + 4;

  private ChecksumSidecar() {}

  /** The sidecar path of a block file (or of a temp file: {@code tmp/<id>-<n>.crc}). */
  static Path of(Path blockFile) {
    return blockFile.resolveSibling(blockFile.getFileName() + SUFFIX);
  }

  static boolean isSidecar(Path p) {
    return p.getFileName().toString().endsWith(SUFFIX);
  }

  /** Writes the sidecar of a block of {@code length} bytes; syncs it when {@code durability} is not null. */
  static void write(Path file, long length, int[] crcs, Durability durability) throws IOException {
    if (crcs.length != ChunkChecksums.chunkCount(length)) {
      throw new IllegalArgumentException(crcs.length + " checksums for a block of " + length + " bytes");
    }
    ByteBuffer buf = ByteBuffer.allocate(HEADER + 4 * crcs.length + 4);
    buf.putInt(MAGIC).putInt(VERSION).putInt(ChunkChecksums.CHUNK_BYTES).putLong(length).putInt(crcs.length);
    for (int c : crcs) {
      buf.putInt(c);
    }
    CRC32C self = new CRC32C();
    self.update(buf.array(), 0, buf.position());
    buf.putInt((int) self.getValue());
    buf.flip();
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      if (durability != null) {
        durability.syncFile(ch);
      }
    }
  }

  /**
   * Reads a sidecar; fails with {@link NoSuchFileException} when there is none and with a plain
   * {@link IOException} naming the problem when it is damaged or does not fit a block of {@code length}.
   */
  static int[] read(Path file, long length) throws IOException {
    byte[] all = Files.readAllBytes(file);
    if (all.length < HEADER + 4) {
      throw new IOException("checksum sidecar " + file + " is truncated (" + all.length + " bytes)");
    }
    ByteBuffer buf = ByteBuffer.wrap(all);
    CRC32C self = new CRC32C();
    self.update(all, 0, all.length - 4);
    if ((int) self.getValue() != buf.getInt(all.length - 4)) {
      throw new IOException("checksum sidecar " + file + " is damaged (its own checksum does not match)");
    }
    if (buf.getInt() != MAGIC || buf.getInt() != VERSION) {
      throw new IOException("checksum sidecar " + file + " has an unknown format");
    }
    int bytesPerChecksum = buf.getInt();
    long recorded = buf.getLong();
    int count = buf.getInt();
    if (bytesPerChecksum != ChunkChecksums.CHUNK_BYTES) {
      throw new IOException("checksum sidecar " + file + " has chunks of " + bytesPerChecksum + " bytes, not "
          + ChunkChecksums.CHUNK_BYTES);
    }
    if (recorded != length) {
      throw new IOException("checksum sidecar " + file + " is for " + recorded + " bytes, but the block file has "
          + length);
    }
    if (count != ChunkChecksums.chunkCount(length) || all.length != HEADER + 4 * count + 4) {
      throw new IOException("checksum sidecar " + file + " holds " + count + " checksums, not "
          + ChunkChecksums.chunkCount(length));
    }
    int[] crcs = new int[count];
    for (int i = 0; i < count; i++) {
      crcs[i] = buf.getInt();
    }
    return crcs;
  }

  /** Computes the checksums of a block file from its bytes as they are on disk now. */
  static int[] compute(Path blockFile) throws IOException {
    ChunkChecksums.Builder b = new ChunkChecksums.Builder();
    ByteBuffer buf = ByteBuffer.allocate(ChunkChecksums.CHUNK_BYTES * 4);
    try (FileChannel ch = FileChannel.open(blockFile, StandardOpenOption.READ)) {
      while (ch.read(buf) >= 0) {
        buf.flip();
        b.update(buf);
        buf.clear();
      }
    }
    return b.finish();
  }
}
