package io.strata.client.shortcircuit;

import io.strata.common.checksum.ChunkChecksums;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A whole block file of an {@link ShortCircuitClient.OpenBlock} mapped read-only into memory, so that a
 * short-circuit read copies the bytes once, from the page cache to the caller's array, and checks their CRC32C
 * on the mapping where a {@link FileChannel} read copies them twice (the kernel into the JDK's temporary
 * direct buffer, then into the array). Measured in {@code bench io} (docs/PERFORMANCE.md).
 *
 * <p>Unmapping frees the address range at once (so a block the worker deletes after its read lock is released
 * gives its tmpfs pages back without waiting for a garbage collection), but touching an unmapped range would
 * crash the JVM. So every access runs between {@link #enter} and {@link #exit}, and the range is unmapped by
 * whichever of {@link #close} and the last {@link #exit} after it comes last: a close racing a read (a stream
 * closed from another thread) makes later reads fail with an IOException, never a crash.
 *
 * <p>Thread-safe.
 */
public final class BlockMapping {
  private static final Logger LOG = LoggerFactory.getLogger(BlockMapping.class);
  /** Added to {@link #state} by close: above it, the mapping is closed; below it, the accesses in flight. */
  private static final int CLOSED = 1 << 30;
  private static final sun.misc.Unsafe UNSAFE = unsafe();

  private final MappedByteBuffer buf;
  private final AtomicInteger state = new AtomicInteger();
  private final AtomicBoolean unmapped = new AtomicBoolean();
  /**
   * Chunks [0, verified) matched the block's stored checksums in {@link #verifyAhead}: the reader copies them
   * unchecked. Written by the verifying thread only, read by the reader (volatile publishes each step).
   */
  private volatile int verified;

  private BlockMapping(MappedByteBuffer buf) {
    this.buf = buf;
  }

  /**
   * Maps the first {@code length} bytes of {@code channel}; null (why at debug level) when a mapping is not
   * to be had: a block of 2 GiB or more, a file shorter than the block (a damaged copy: touching a mapped page past
   * the file's end kills the reader with SIGBUS, where the channel read reports the damage), or the channel cannot
   * be mapped. The caller then reads the channel.
   */
  static BlockMapping map(FileChannel channel, long length, long blockId) {
    if (length <= 0 || length > Integer.MAX_VALUE) {
      return null;
    }
    try {
      if (channel.size() < length) {
        LOG.debug("Block {}'s file holds {} bytes, not {}; reading it by channel", blockId, channel.size(), length);
        return null;
      }
      return new BlockMapping(channel.map(FileChannel.MapMode.READ_ONLY, 0, length));
    } catch (IOException | RuntimeException e) {
      LOG.debug("Block {} cannot be mapped ({}); reading its file by channel", blockId, e.toString());
      return null;
    }
  }

  /** Starts an access: false when the mapping is closed (nothing may be read from it). */
  public boolean enter() {
    if (state.incrementAndGet() >= CLOSED) {
      exit();
      return false;
    }
    return true;
  }

  /** Ends an access {@link #enter} allowed (or refused). */
  public void exit() {
    if (state.decrementAndGet() == CLOSED) {
      unmap();
    }
  }

  /** The mapped bytes {@code [at, at + len)} as a buffer of their own; only between enter and exit. */
  public ByteBuffer slice(int at, int len) {
    return buf.slice(at, len);
  }

  /** Copies {@code len} bytes from {@code at} into {@code b}; only between enter and exit. */
  public void copy(int at, byte[] b, int off, int len) {
    buf.get(at, b, off, len);
  }

  /**
   * Faults every page of the mapping in (as {@link MappedByteBuffer#load}), so that the reader that comes to
   * it later pays no page faults: run by the open-ahead thread while the reader is still on the block before
   * ({@link io.strata.client.ShortCircuitBlockReader}'s stream). Nothing when the mapping is closed.
   */
  public void prefault() {
    if (!enter()) {
      return;
    }
    try {
      buf.load();
    } finally {
      exit();
    }
  }

  /**
   * Checks the CRC32C of each checksum chunk in order against {@code sums} (the block's stored checksums, one per
   * chunk from chunk 0), faulting the pages in as it goes (as {@link #prefault} does), and publishes how far the
   * chunks matched ({@link #verifiedChunks}). Run by the open-ahead thread while the reader is still on the block
   * before, so that the reader only copies: on two cores the checksum pass is off its path. It stops at the first
   * chunk that does not match, which the reader then checks itself and handles as any corrupt copy (nothing is
   * decided here), and when the mapping is closed. The file cannot change under it: the block is read-locked
   * at the worker while open, and a committed block is never rewritten. Returns the chunks verified.
   */
  public int verifyAhead(int[] sums, long length) {
    if (!enter()) {
      return 0;
    }
    try {
      int chunks = (int) Math.min(sums.length, (length + ChunkChecksums.CHUNK_BYTES - 1) / ChunkChecksums.CHUNK_BYTES);
      for (int c = 0; c < chunks; c++) {
        if (state.get() >= CLOSED) {
          break; // closed meanwhile: leave the rest (the range stays mapped until this access exits)
        }
        long start = ChunkChecksums.chunkStart(c);
        int size = (int) (ChunkChecksums.chunkEnd(c, length) - start);
        if (ChunkChecksums.crc(buf.slice((int) start, size)) != sums[c]) {
          break;
        }
        verified = c + 1;
      }
      return verified;
    } finally {
      exit();
    }
  }

  /** Chunks from chunk 0 that {@link #verifyAhead} found matching their stored checksums so far. */
  public int verifiedChunks() {
    return verified;
  }

  /** Unmaps now when no access is in flight, else when the last one exits; later enters are refused. */
  void close() {
    int s;
    do {
      s = state.get();
      if (s >= CLOSED) {
        return;
      }
    } while (!state.compareAndSet(s, s + CLOSED));
    if (s == 0) {
      unmap();
    }
  }

  private void unmap() {
    if (!unmapped.compareAndSet(false, true) || UNSAFE == null) {
      return; // without Unsafe the mapping goes when the buffer is collected
    }
    try {
      UNSAFE.invokeCleaner(buf);
    } catch (RuntimeException e) {
      LOG.debug("Mapping not released before collection", e);
    }
  }

  private static sun.misc.Unsafe unsafe() {
    try {
      Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      return (sun.misc.Unsafe) f.get(null);
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.debug("sun.misc.Unsafe not available: block mappings are released by the garbage collector", e);
      return null;
    }
  }
}
