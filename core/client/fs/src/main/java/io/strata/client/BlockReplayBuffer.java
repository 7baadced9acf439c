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

  BlockReplayBuffer(long limit) {
    this.limit = limit;
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
    if (bytes > limit) {
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

  /** Sends every kept chunk, in order, to {@code to}. */
  void replayTo(ChunkSink to) throws java.io.IOException {
    for (Chunk c : chunks) {
      to.write(c.bytes(), c.length());
    }
  }

  /** A new block starts: forget the last one. */
  void clear() {
    chunks.clear();
    bytes = 0;
    overflowed = false;
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
