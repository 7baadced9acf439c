package io.strata.hadoop;

import io.strata.client.FileInStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import org.apache.hadoop.fs.ByteBufferPositionedReadable;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.fs.CanUnbuffer;
import org.apache.hadoop.fs.FSExceptionMessages;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.VectoredReadUtils;
import org.apache.hadoop.fs.impl.CombinedFileRange;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.hadoop.fs.statistics.StreamStatisticNames;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsBinding;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsStore;

/**
 * A Strata file read through Hadoop: {@link FSInputStream} (seek, positioned reads, vectored reads that
 * merge neighbouring ranges into one positioned read), {@link ByteBufferReadable}, {@link ByteBufferPositionedReadable},
 * {@link CanUnbuffer} (gives back the block streams and their worker locks; the next read opens what it
 * needs) and {@link IOStatisticsSource} (bytes read, seeks, reads, unbuffers). Errors as HDFS gives them:
 * {@link EOFException} for a seek before 0 or past the end and for a readFully past the end, an
 * {@link IOException} naming the path once closed.
 *
 * <p>A file whose writer has not closed it yet has no visible bytes (Strata publishes a file at close), so
 * it is read as empty, as HDFS reads a file whose first block is still being written.
 *
 * <p>Thread-safe by one monitor: Hadoop expects positioned reads from several threads (HDFS allows them),
 * so every call holds this stream's monitor while it uses the {@link FileInStream} under it, which is not
 * thread-safe. Concurrent positioned reads therefore take turns.
 */
final class StrataInputStream extends FSInputStream
    implements ByteBufferReadable, ByteBufferPositionedReadable, CanUnbuffer, StreamCapabilities, IOStatisticsSource {
  private final String path;
  /** The Strata stream; null for a file not yet complete (read as empty). */
  private final FileInStream in;
  private final long length;
  private final IOStatisticsStore stats = IOStatisticsBinding.iostatisticsStore()
      .withCounters(StreamStatisticNames.STREAM_READ_BYTES, StreamStatisticNames.STREAM_READ_OPERATIONS,
          StreamStatisticNames.STREAM_READ_SEEK_OPERATIONS, StreamStatisticNames.STREAM_READ_UNBUFFERED,
          StreamStatisticNames.STREAM_READ_CLOSE_OPERATIONS)
      .build();
  private long emptyPos;
  private boolean closed;

  StrataInputStream(String path, FileInStream in) {
    this.path = path;
    this.in = in;
    this.length = in == null ? 0 : in.length();
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException(FSExceptionMessages.STREAM_IS_CLOSED + " (" + path + ")");
    }
  }

  @Override
  public synchronized void seek(long pos) throws IOException {
    checkOpen();
    if (pos < 0) {
      throw new EOFException(FSExceptionMessages.NEGATIVE_SEEK + " " + pos + " in " + path);
    }
    if (pos > length) {
      throw new EOFException(FSExceptionMessages.CANNOT_SEEK_PAST_EOF + ": position " + pos + " in " + path
          + ", which has " + length + " bytes");
    }
    stats.incrementCounter(StreamStatisticNames.STREAM_READ_SEEK_OPERATIONS);
    if (in == null) {
      emptyPos = pos;
    } else {
      in.seek(pos);
    }
  }

  @Override
  public synchronized long getPos() throws IOException {
    return in == null ? emptyPos : in.getPos();
  }

  /** There is one copy to read per block as chosen by the client's failover; nothing else to switch to. */
  @Override
  public boolean seekToNewSource(long targetPos) {
    return false;
  }

  @Override
  public synchronized int read() throws IOException {
    checkOpen();
    if (in == null) {
      return -1;
    }
    int b = in.read();
    stats.incrementCounter(StreamStatisticNames.STREAM_READ_OPERATIONS);
    if (b >= 0) {
      stats.incrementCounter(StreamStatisticNames.STREAM_READ_BYTES);
    }
    return b;
  }

  @Override
  public synchronized int read(byte[] b, int off, int len) throws IOException {
    checkOpen();
    if (off < 0 || len < 0 || len > b.length - off) {
      throw new IndexOutOfBoundsException("Reading " + path + ": offset " + off + ", length " + len
          + ", buffer of " + b.length + " bytes");
    }
    if (len == 0) {
      return 0;
    }
    if (in == null) {
      return -1;
    }
    int n = in.read(b, off, len);
    stats.incrementCounter(StreamStatisticNames.STREAM_READ_OPERATIONS);
    if (n > 0) {
      stats.incrementCounter(StreamStatisticNames.STREAM_READ_BYTES, n);
    }
    return n;
  }

  @Override
  public synchronized int read(ByteBuffer buf) throws IOException {
    checkOpen();
    if (!buf.hasRemaining()) {
      return 0;
    }
    if (buf.hasArray()) {
      int n = read(buf.array(), buf.arrayOffset() + buf.position(), buf.remaining());
      if (n > 0) {
        buf.position(buf.position() + n);
      }
      return n;
    }
    byte[] tmp = new byte[Math.min(buf.remaining(), 1 << 20)];
    int n = read(tmp, 0, tmp.length);
    if (n > 0) {
      buf.put(tmp, 0, n);
    }
    return n;
  }

  @Override
  public synchronized int read(long position, byte[] buffer, int offset, int len) throws IOException {
    checkOpen();
    validatePositionedReadArgs(position, buffer, offset, len);
    if (len == 0) {
      return 0;
    }
    if (in == null || position >= length) {
      return -1;
    }
    int n = in.positionedRead(position, buffer, offset, len);
    stats.incrementCounter(StreamStatisticNames.STREAM_READ_OPERATIONS);
    if (n > 0) {
      stats.incrementCounter(StreamStatisticNames.STREAM_READ_BYTES, n);
    }
    return n;
  }

  @Override
  public synchronized void readFully(long position, byte[] buffer, int offset, int len) throws IOException {
    checkOpen();
    validatePositionedReadArgs(position, buffer, offset, len);
    if (len == 0) {
      return;
    }
    if (position + len > length) {
      throw new EOFException(FSExceptionMessages.EOF_IN_READ_FULLY + " Reading " + len + " bytes at " + position
          + " of " + path + ", which has " + length + " bytes");
    }
    in.readFully(position, buffer, offset, len);
    stats.incrementCounter(StreamStatisticNames.STREAM_READ_OPERATIONS);
    stats.incrementCounter(StreamStatisticNames.STREAM_READ_BYTES, len);
  }

  @Override
  public synchronized int read(long position, ByteBuffer buf) throws IOException {
    checkOpen();
    if (!buf.hasRemaining()) {
      return 0;
    }
    byte[] tmp = buf.hasArray() ? null : new byte[Math.min(buf.remaining(), 1 << 20)];
    int n = tmp == null ? read(position, buf.array(), buf.arrayOffset() + buf.position(), buf.remaining())
        : read(position, tmp, 0, tmp.length);
    if (n > 0) {
      if (tmp == null) {
        buf.position(buf.position() + n);
      } else {
        buf.put(tmp, 0, n);
      }
    }
    return n;
  }

  @Override
  public synchronized void readFully(long position, ByteBuffer buf) throws IOException {
    checkOpen();
    int len = buf.remaining();
    if (position < 0 || position + len > length) {
      throw new EOFException(FSExceptionMessages.EOF_IN_READ_FULLY + " Reading " + len + " bytes at " + position
          + " of " + path + ", which has " + length + " bytes");
    }
    if (buf.hasArray()) {
      readFully(position, buf.array(), buf.arrayOffset() + buf.position(), len);
      buf.position(buf.position() + len);
      return;
    }
    byte[] tmp = new byte[Math.min(len, 1 << 20)];
    long p = position;
    while (buf.hasRemaining()) {
      int n = Math.min(tmp.length, buf.remaining());
      readFully(p, tmp, 0, n);
      buf.put(tmp, 0, n);
      p += n;
    }
  }

  /**
   * Vectored reads: the ranges are checked against the file's length first (a range past the end fails the
   * call with EOFException; overlapping ranges are refused with IllegalArgumentException, as by Hadoop's own
   * implementation), sorted, and ranges less than {@link #minSeekForVectorReads} apart merged up to
   * {@link #maxReadSizeForVectorReads}, so that one positioned read (one block stream per block) serves
   * neighbouring ranges; each range's buffer is then filled from it. The reads happen in the caller's
   * thread: every future is complete, or failed with its read's error, when this returns.
   */
  @Override
  public void readVectored(List<? extends FileRange> ranges, IntFunction<ByteBuffer> allocate,
      Consumer<ByteBuffer> release) throws IOException {
    java.util.Objects.requireNonNull(allocate, "allocate");
    java.util.Objects.requireNonNull(release, "release");
    checkOpen();
    List<? extends FileRange> sorted = VectoredReadUtils.validateAndSortRanges(ranges, Optional.of(length));
    for (FileRange r : ranges) {
      r.setData(new CompletableFuture<>());
    }
    for (CombinedFileRange merged : VectoredReadUtils.mergeSortedRanges(sorted, 1, minSeekForVectorReads(),
        maxReadSizeForVectorReads())) {
      byte[] data = new byte[Math.toIntExact(merged.getLength())];
      try {
        readFully(merged.getOffset(), data, 0, data.length);
      } catch (IOException | RuntimeException e) {
        merged.getUnderlying().forEach(r -> r.getData().completeExceptionally(e));
        continue;
      }
      for (FileRange r : merged.getUnderlying()) {
        ByteBuffer b = allocate.apply(r.getLength());
        b.put(data, Math.toIntExact(r.getOffset() - merged.getOffset()), r.getLength());
        b.flip();
        r.getData().complete(b);
      }
    }
  }

  @Override
  public void readVectored(List<? extends FileRange> ranges, IntFunction<ByteBuffer> allocate) throws IOException {
    readVectored(ranges, allocate, b -> { });
  }

  @Override
  public synchronized long skip(long n) throws IOException {
    checkOpen();
    if (n <= 0) {
      return 0;
    }
    long pos = getPos();
    long target = Math.min(length, pos + n);
    seek(target);
    return target - pos;
  }

  @Override
  public synchronized int available() throws IOException {
    checkOpen();
    return (int) Math.min(Integer.MAX_VALUE, length - getPos());
  }

  @Override
  public synchronized void unbuffer() {
    if (in != null && !closed) {
      in.unbuffer();
      stats.incrementCounter(StreamStatisticNames.STREAM_READ_UNBUFFERED);
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    stats.incrementCounter(StreamStatisticNames.STREAM_READ_CLOSE_OPERATIONS);
    if (in != null) {
      in.close();
    }
  }

  @Override
  public boolean hasCapability(String capability) {
    switch (capability.toLowerCase(java.util.Locale.ROOT)) {
      case StreamCapabilities.UNBUFFER:
      case StreamCapabilities.READBYTEBUFFER:
      case StreamCapabilities.PREADBYTEBUFFER:
      case StreamCapabilities.IOSTATISTICS:
      case StreamCapabilities.VECTOREDIO:
        return true;
      default:
        return false;
    }
  }

  @Override
  public IOStatistics getIOStatistics() {
    return stats;
  }

  @Override
  public String toString() {
    return "StrataInputStream{" + path + ", length " + length + (closed ? ", closed" : "") + ", " + stats + "}";
  }
}
