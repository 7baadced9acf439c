package io.strata.client;

import java.util.ArrayList;
import java.util.List;

/**
 * The bytes of the block being written, kept so that they can be sent again to another worker when the
 * block's worker fails mid-block. It keeps the chunk arrays the writer sends anyway (no copy; the writer
 * never changes a chunk once sent) until the block commits, up to {@code limit} bytes
 * ({@link ClientKeys#WRITE_FAILOVER_BUFFER_SIZE}); once a block grows past it the buffer lets go of them
 * and the block can no longer fail over ({@link #complete()} is false until the next block). Once a block
 * commits, its arrays can be handed out again for the next chunks ({@link #clearAndRecycle}).
 *
 * <p>A block written short-circuit keeps no chunks: its bytes are in the temp block file, and when its
 * worker fails the writer hands over its own descriptor of that file ({@link #keepFile}), which holds the
 * bytes even once the worker is gone or has deleted the file. A replay then reads them back from there, in
 * fresh arrays (the receiving writer may keep them), then sends the chunks added after; the file is closed
 * when the block ends ({@link #clear}). The limit counts chunks only: the file costs no heap.
 *
 * <p>Not thread-safe: one writer thread.
 */
final class BlockReplayBuffer {
  private record Chunk(byte[] bytes, int length) {}

  private final long limit;
  private final List<Chunk> chunks = new ArrayList<>();
  private long bytes;
  private boolean overflowed;
  /** Chunk arrays of committed blocks, for {@link #reuse}. */
  private final List<byte[]> free = new ArrayList<>();
  private long freeBytes;
  /** The block's first {@link #fileBytes} bytes, in a failed short-circuit writer's file; null when none. */
  private java.nio.channels.FileChannel file;
  private long fileBytes;
  /** Size of the arrays a replay from {@link #file} reads into. */
  private final int pieceSize;

  BlockReplayBuffer(long limit) {
    this(limit, 1 << 20);
  }

  BlockReplayBuffer(long limit, int pieceSize) {
    this.limit = limit;
    this.pieceSize = pieceSize;
  }

  long limit() {
    return limit;
  }

  /** Keeps {@code chunk} (which the caller no longer changes), unless the block outgrew the limit. */
  void add(byte[] chunk, int length) {
    bytes += length;
    if (overflowed) {
      return;
    }
    if (bytes - fileBytes > limit) {
      overflowed = true;
      chunks.clear();
      return;
    }
    chunks.add(new Chunk(chunk, length));
  }

  /** True when every byte of the block so far is kept (so the block can be sent again). */
  boolean complete() {
    return !overflowed;
  }

  /** Bytes of the block so far, kept or not. */
  long bytes() {
    return bytes;
  }

  /**
   * The block's first {@code length} bytes, all it has so far, are in {@code channel} from offset 0 (a failed
   * short-circuit writer's own descriptor of its temp block file, opened for reading): they replace whatever
   * was kept, and this buffer closes the channel when the block ends. A channel already kept is closed.
   */
  void keepFile(java.nio.channels.FileChannel channel, long length) {
    closeFile();
    chunks.clear();
    file = channel;
    fileBytes = length;
    bytes = length;
    overflowed = false;
  }

  /** Sends the block's bytes so far, in order, to {@code to}: those in the kept file, then the kept chunks. */
  void replayTo(ChunkSink to) throws java.io.IOException {
    for (long at = 0; at < fileBytes; ) {
      byte[] piece = new byte[(int) Math.min(pieceSize, fileBytes - at)];
      java.nio.ByteBuffer buf = java.nio.ByteBuffer.wrap(piece);
      while (buf.hasRemaining()) {
        if (file.read(buf, at + buf.position()) < 0) {
          throw new io.strata.common.exception.DataLossException("The block's temp file ends at "
              + (at + buf.position()) + " bytes, but " + fileBytes + " were written to it");
        }
      }
      to.write(piece, piece.length);
      at += piece.length;
    }
    for (Chunk c : chunks) {
      to.write(c.bytes(), c.length());
    }
  }

  /** A new block starts: forget the last one. */
  void clear() {
    chunks.clear();
    closeFile();
    bytes = 0;
    overflowed = false;
  }

  private void closeFile() {
    if (file != null) {
      try {
        file.close();
      } catch (java.io.IOException ignored) {
        // only read from
      }
      file = null;
      fileBytes = 0;
    }
  }

  /**
   * The block committed and nothing else holds its chunks any more (no under file system stream took
   * them): forget it, keeping its chunk arrays for {@link #reuse} (at most {@code limit} bytes of them).
   * A reused array saves allocating, and the JVM zeroing, a fresh one per chunk.
   */
  void clearAndRecycle() {
    for (Chunk c : chunks) {
      if (freeBytes + c.bytes().length <= limit) {
        free.add(c.bytes());
        freeBytes += c.bytes().length;
      }
    }
    clear();
  }

  /** An array of {@code size} bytes for the next chunk: a recycled one when there is one (contents stale). */
  byte[] reuse(int size) {
    while (!free.isEmpty()) {
      byte[] a = free.remove(free.size() - 1);
      freeBytes -= a.length;
      if (a.length == size) {
        return a;
      }
    }
    return new byte[size];
  }

  /** Something that takes chunks: a block writer, the under file system stream. */
  @FunctionalInterface
  interface ChunkSink {
    void write(byte[] chunk, int length) throws java.io.IOException;
  }
}
