package io.strata.common.checksum;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The arithmetic of block checksums: a block is cut into checksum chunks of {@link #CHUNK_BYTES} bytes
 * (the last one shorter, a zero-length block has none), and each chunk has one CRC32C
 * ({@link java.util.zip.CRC32C}, hardware-accelerated on x86 and ARM). The writer computes them, the
 * worker checks them on receipt and keeps them beside the block, and readers check every chunk they read.
 *
 * <p>The chunk size is a constant, not a key: a checksum is only useful when writer, worker and reader
 * agree on it, and a sidecar written before a change of a key would be unreadable after it. The wire and
 * the sidecar still carry it, so a mismatch is detected rather than misread. 64 KiB keeps the sidecar at
 * 1/16384 of the block (4 KiB per 64 MiB block) and a short read's overhead to at most 64 KiB either side.
 *
 * <p>{@link Builder} computes them over bytes that arrive in pieces of any size. Stateless helpers are
 * thread-safe; a builder is not (one writer).
 */
public final class ChunkChecksums {
  /** Bytes per checksum chunk. */
  public static final int CHUNK_BYTES = 64 * 1024;

  private ChunkChecksums() {}

  /** Checksum chunks in a block of {@code length} bytes (0 for an empty block). */
  public static int chunkCount(long length) {
    if (length < 0) {
      throw new IllegalArgumentException("negative block length " + length);
    }
    return Math.toIntExact((length + CHUNK_BYTES - 1) / CHUNK_BYTES);
  }

  /** The chunk holding byte {@code offset}. */
  public static int chunkOf(long offset) {
    return Math.toIntExact(offset / CHUNK_BYTES);
  }

  /** The first byte of chunk {@code index}. */
  public static long chunkStart(int index) {
    return (long) index * CHUNK_BYTES;
  }

  /** The offset just past chunk {@code index} of a block of {@code length} bytes. */
  public static long chunkEnd(int index, long length) {
    return Math.min(length, chunkStart(index) + CHUNK_BYTES);
  }

  /** {@code offset} rounded down to a chunk boundary. */
  public static long alignDown(long offset) {
    return offset - offset % CHUNK_BYTES;
  }

  /** {@code offset} rounded up to a chunk boundary, but never past the block's {@code length}. */
  public static long alignUp(long offset, long length) {
    long up = offset % CHUNK_BYTES == 0 ? offset : alignDown(offset) + CHUNK_BYTES;
    return Math.min(up, length);
  }

  /** The CRC32C of the remaining bytes of {@code data}; its position is left alone. */
  public static int crc(ByteBuffer data) {
    CRC32C c = new CRC32C();
    c.update(data.duplicate());
    return (int) c.getValue();
  }

  /** The CRC32C of {@code len} bytes of {@code b} from {@code off}. */
  public static int crc(byte[] b, int off, int len) {
    CRC32C c = new CRC32C();
    c.update(b, off, len);
    return (int) c.getValue();
  }

  /**
   * Checks bytes that start on a chunk boundary against their chunks' checksums: returns the index (within
   * {@code data}) of the first chunk that does not match, or -1 when all do. The count of checksums must be
   * {@code chunkCount(data.remaining())}; the caller checks it. {@code data}'s position is left alone.
   */
  public static int firstMismatch(ByteBuffer data, java.util.List<Integer> crcs) {
    int size = data.remaining();
    for (int i = 0; i < crcs.size(); i++) {
      ByteBuffer piece = data.duplicate();
      piece.position(data.position() + i * CHUNK_BYTES);
      piece.limit(data.position() + Math.min(size, (i + 1) * CHUNK_BYTES));
      if (crc(piece) != crcs.get(i)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * As {@link #firstMismatch(ByteBuffer, java.util.List)} over bytes held in several buffers laid end to
   * end (a chunk may span them: a zero-copy message's pieces); positions are left alone.
   */
  public static int firstMismatch(java.util.List<ByteBuffer> pieces, java.util.List<Integer> crcs) {
    if (pieces.size() == 1) {
      return firstMismatch(pieces.get(0), crcs);
    }
    CRC32C c = new CRC32C();
    int chunk = 0;
    int inChunk = 0;
    for (ByteBuffer p : pieces) {
      ByteBuffer rest = p.duplicate();
      while (rest.hasRemaining()) {
        int n = Math.min(rest.remaining(), CHUNK_BYTES - inChunk);
        ByteBuffer part = rest.slice();
        part.limit(n);
        c.update(part);
        rest.position(rest.position() + n);
        inChunk += n;
        if (inChunk == CHUNK_BYTES) {
          if (chunk >= crcs.size() || (int) c.getValue() != crcs.get(chunk)) {
            return chunk;
          }
          chunk++;
          inChunk = 0;
          c.reset();
        }
      }
    }
    if (inChunk > 0) {
      if (chunk >= crcs.size() || (int) c.getValue() != crcs.get(chunk)) {
        return chunk;
      }
    }
    return -1;
  }

  /** Every chunk's checksum of a whole block held in {@code data} (its remaining bytes). */
  public static int[] of(ByteBuffer data) {
    Builder b = new Builder();
    b.update(data.duplicate());
    return b.finish();
  }

  /**
   * Computes chunk checksums over bytes appended in pieces of any size: {@link #completed()} counts the
   * chunks finished so far, {@link #finish()} closes the last partial one. Not thread-safe.
   */
  public static final class Builder {
    private final CRC32C current = new CRC32C();
    private int inCurrent;
    private int[] done = new int[16];
    private int count;
    private long length;
    private boolean finished;

    /** Adds the remaining bytes of {@code data}, consuming them. */
    public void update(ByteBuffer data) {
      check();
      while (data.hasRemaining()) {
        int n = Math.min(data.remaining(), CHUNK_BYTES - inCurrent);
        ByteBuffer piece = data.slice();
        piece.limit(n);
        current.update(piece);
        data.position(data.position() + n);
        advance(n);
      }
    }

    /** Adds {@code len} bytes of {@code b} from {@code off}. */
    public void update(byte[] b, int off, int len) {
      check();
      while (len > 0) {
        int n = Math.min(len, CHUNK_BYTES - inCurrent);
        current.update(b, off, n);
        off += n;
        len -= n;
        advance(n);
      }
    }

    private void advance(int n) {
      inCurrent += n;
      length += n;
      if (inCurrent == CHUNK_BYTES) {
        push((int) current.getValue());
        current.reset();
        inCurrent = 0;
      }
    }

    private void push(int crc) {
      if (count == done.length) {
        done = Arrays.copyOf(done, count * 2);
      }
      done[count++] = crc;
    }

    private void check() {
      if (finished) {
        throw new IllegalStateException("checksums already finished");
      }
    }

    /** Chunks completed so far (the partial chunk being filled is not counted). */
    public int completed() {
      return count;
    }

    /** The checksum of completed chunk {@code i}. */
    public int get(int i) {
      if (i < 0 || i >= count) {
        throw new IndexOutOfBoundsException("chunk " + i + " of " + count);
      }
      return done[i];
    }

    /** Bytes seen so far. */
    public long length() {
      return length;
    }

    /** Whether bytes of a partial last chunk are pending ({@link #finish()} would add one checksum). */
    public boolean hasPartial() {
      return inCurrent > 0;
    }

    /** Closes the partial last chunk, if any, and returns every chunk's checksum. */
    public int[] finish() {
      if (!finished) {
        finished = true;
        if (inCurrent > 0) {
          push((int) current.getValue());
          inCurrent = 0;
        }
      }
      return Arrays.copyOf(done, count);
    }
  }
}
