package io.strata.client;

import io.strata.client.shortcircuit.BlockMapping;
import io.strata.client.shortcircuit.ShortCircuitClient;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.CorruptBlockException;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.StrataException;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Reads a range of a block opened short-circuit. A block on a memory file system, when its client's
 * {@link io.strata.client.shortcircuit.MappedReads} says mapped reads are the faster here
 * ({@link ClientKeys#SHORT_CIRCUIT_READ_MMAP}), from the block's file mapped into memory ({@link BlockMapping},
 * one mapping per open block): each checksum chunk is checked on the mapping and copied from it to the
 * caller's array, one copy from the page cache. Without a mapping (the channel measured faster, turned off, a
 * block on a disk tier, of 2 GiB or more, or a file that cannot be mapped): positioned reads of the file's
 * channel, which the JDK copies twice (into its temporary direct buffer, then the caller's array). Closing
 * releases the worker's read lock. A small block whose bytes came in the open's answer
 * ({@link ShortCircuitClient.OpenBlock#inline()}) is read from them the same way, checksums and all.
 *
 * <p>With checksums ({@link ClientKeys#SHORT_CIRCUIT_CHECKSUM_VERIFY}) it first fetches the worker's stored
 * CRC32C of the chunks the range covers (sent with the OPEN answer, else asked over the domain socket), then
 * checks every whole checksum chunk it reads before handing out its bytes. Mapped: a chunk the range or the
 * caller's length cuts is checked whole, once. By channel: the whole chunks the caller asks for (up to
 * {@link #MAX_READ_BYTES} a call) are read into the caller's array in one positioned read and checked there;
 * a chunk cut by the range or the caller's length is read whole into a 64 KiB scratch buffer, checked, and
 * copied out. A mismatch is a {@link CorruptBlockException} naming the block, the worker and the chunk's
 * offset.
 *
 * <p>Not thread-safe: one reader thread.
 */
final class ShortCircuitBlockReader implements BlockRangeReader {
  /**
   * The most one read call reads: a heap read goes through the JDK's temporary direct buffer of the same size
   * (cached per thread), so this bounds that buffer; 1 MiB is what a plain file read of 1 MiB uses too.
   */
  static final int MAX_READ_BYTES = 1 << 20;
  private final ShortCircuitClient.OpenBlock block;
  private final WorkerAddress worker;
  private final long end;
  private long pos;
  /** Checksums of chunks firstChunk.. (null when not verifying). */
  private final int[] sums;
  private final int firstChunk;
  /** Whether closing this reader closes the block (false: its stream keeps it open for more reads). */
  private final boolean owns;
  /** Whether to read through the block's mapping when it has one. */
  private final boolean mmap;
  private ByteBuffer scratch;
  private int scratchChunk = -1;
  /** The chunk last checked on the mapping (-1: none). */
  private int mappedChunk = -1;

  /**
   * A range of a block its stream keeps open for positioned reads: {@code allSums} holds every chunk's
   * stored checksum (fetched once for the block; null when not verifying), and closing this reader leaves
   * the block open.
   */
  static ShortCircuitBlockReader ofKept(ShortCircuitClient.OpenBlock block, WorkerAddress worker, long offset,
      long length, int[] allSums) {
    return new ShortCircuitBlockReader(block, worker, offset, length, allSums);
  }

  private ShortCircuitBlockReader(ShortCircuitClient.OpenBlock block, WorkerAddress worker, long offset, long length,
      int[] allSums) {
    this.mmap = block.readMapped();
    this.block = block;
    this.worker = worker;
    this.pos = offset;
    this.end = offset + length;
    this.firstChunk = 0;
    this.sums = allSums;
    this.owns = false;
  }

  ShortCircuitBlockReader(ShortCircuitClient.OpenBlock block, WorkerAddress worker, long offset, long length,
      boolean verify) throws IOException {
    this.mmap = block.readMapped();
    this.block = block;
    this.worker = worker;
    this.pos = offset;
    this.end = offset + length;
    this.firstChunk = ChunkChecksums.chunkOf(offset);
    this.owns = true;
    if (verify && length > 0) {
      int count = ChunkChecksums.chunkOf(end - 1) - firstChunk + 1;
      int[] got;
      try {
        got = block.checksums(firstChunk, count);
      } catch (StrataException e) {
        if (e.code() == ErrorCode.DATA_LOSS) {
          throw new CorruptBlockException(block.blockId(), worker.toString(), offset, e.getMessage());
        }
        throw e;
      }
      this.sums = got;
    } else {
      this.sums = null;
    }
  }

  @Override
  public WorkerAddress worker() {
    return worker;
  }

  @Override
  public String source() {
    return "worker " + worker + " (short-circuit)";
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (pos >= end) {
      return -1;
    }
    int want = (int) Math.min(Math.min(len, end - pos), MAX_READ_BYTES);
    BlockMapping map = mmap ? block.mapping() : null;
    if (map != null) {
      if (!map.enter()) {
        throw new IOException("Block " + block.blockId() + " of worker " + worker + " was closed while being read");
      }
      try {
        return readMapped(map, b, off, want);
      } finally {
        map.exit();
      }
    }
    if (sums == null) {
      int n;
      if (block.inline() != null) {
        readFully(ByteBuffer.wrap(b, off, want), pos);
        n = want;
      } else {
        n = block.channel().read(ByteBuffer.wrap(b, off, want), pos);
      }
      if (n < 0) {
        throw ended();
      }
      pos += n;
      return n;
    }
    int chunk = ChunkChecksums.chunkOf(pos);
    long chunkStart = ChunkChecksums.chunkStart(chunk);
    long chunkEnd = ChunkChecksums.chunkEnd(chunk, block.length());
    if (pos == chunkStart && chunkEnd <= end && want >= chunkEnd - chunkStart) {
      // Whole chunks, as many as the caller's length holds: one read straight into the caller's array (as a
      // plain file read does), then each chunk checked there while it is still in the CPU's cache.
      int last = chunk;
      long stop = chunkEnd;
      while (stop < block.length()) {
        long next = ChunkChecksums.chunkEnd(last + 1, block.length());
        if (next > pos + want) {
          break;
        }
        last++;
        stop = next;
      }
      int size = (int) (stop - pos);
      readFully(ByteBuffer.wrap(b, off, size), pos);
      for (int c = chunk, at = off; c <= last; c++) {
        int n = (int) (ChunkChecksums.chunkEnd(c, block.length()) - ChunkChecksums.chunkStart(c));
        check(c, b, at, n);
        at += n;
      }
      pos += size;
      return size;
    }
    if (scratchChunk != chunk) {
      if (scratch == null) {
        scratch = ByteBuffer.allocate(ChunkChecksums.CHUNK_BYTES);
      }
      int size = (int) (chunkEnd - chunkStart);
      scratch.clear().limit(size);
      readFully(scratch, chunkStart);
      check(chunk, scratch.array(), 0, size);
      scratchChunk = chunk;
    }
    int n = (int) Math.min(want, chunkEnd - pos);
    System.arraycopy(scratch.array(), (int) (pos - chunkStart), b, off, n);
    pos += n;
    return n;
  }

  /** Copies {@code want} bytes from the mapping, checking each chunk they touch once before copying from it. */
  private int readMapped(BlockMapping map, byte[] b, int off, int want) throws CorruptBlockException {
    if (sums == null) {
      map.copy((int) pos, b, off, want);
      pos += want;
      return want;
    }
    int done = 0;
    while (done < want) {
      int chunk = ChunkChecksums.chunkOf(pos);
      long chunkStart = ChunkChecksums.chunkStart(chunk);
      long chunkEnd = ChunkChecksums.chunkEnd(chunk, block.length());
      if (mappedChunk != chunk) {
        if (chunk >= map.verifiedChunks()) { // not already matched by the open-ahead thread's pass
          int size = (int) (chunkEnd - chunkStart);
          check(chunk, ChunkChecksums.crc(map.slice((int) chunkStart, size)), size);
        }
        mappedChunk = chunk;
      }
      int n = (int) Math.min(want - done, chunkEnd - pos);
      map.copy((int) pos, b, off + done, n);
      pos += n;
      done += n;
    }
    return done;
  }

  /** Fills {@code buf} from block offset {@code at}: from the block's file, or its bytes sent inline. */
  private void readFully(ByteBuffer buf, long at) throws IOException {
    byte[] inline = block.inline();
    if (inline != null) {
      if (at + buf.remaining() > inline.length) {
        throw ended();
      }
      buf.put(inline, (int) at, buf.remaining());
      return;
    }
    int start = buf.position();
    while (buf.hasRemaining()) {
      if (block.channel().read(buf, at + buf.position() - start) < 0) {
        throw ended();
      }
    }
  }

  private void check(int chunk, byte[] b, int off, int len) throws CorruptBlockException {
    check(chunk, ChunkChecksums.crc(b, off, len), len);
  }

  private void check(int chunk, int got, int len) throws CorruptBlockException {
    int stored = sums[chunk - firstChunk];
    if (got != stored) {
      long at = ChunkChecksums.chunkStart(chunk);
      throw new CorruptBlockException(block.blockId(), worker.toString(), at, String.format("CRC32C of the %d "
          + "bytes at offset %d is %08x, the stored checksum is %08x (short-circuit read)", len, at, got, stored));
    }
  }

  private DataLossException ended() {
    return new DataLossException("Block " + block.blockId() + " of worker " + worker + " ends at " + pos
        + " but " + end + " bytes were expected (short-circuit read)");
  }

  @Override
  public void close() {
    if (owns) {
      block.close();
    }
  }
}
