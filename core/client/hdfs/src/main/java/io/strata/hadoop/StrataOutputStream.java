package io.strata.hadoop;

import io.strata.client.FileOutStream;
import java.io.IOException;
import java.io.OutputStream;
import org.apache.hadoop.fs.Abortable;
import org.apache.hadoop.fs.FSExceptionMessages;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.hadoop.fs.statistics.StreamStatisticNames;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsBinding;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsStore;

/**
 * A Strata file written through Hadoop (wrapped in an FSDataOutputStream). The file becomes visible, whole,
 * when the stream closes; until then readers see it empty.
 *
 * <p>hflush and hsync: Strata has no way to publish part of a file, so this stream is not {@code Syncable}
 * and declares neither capability; FSDataOutputStream then turns {@code hflush()} and {@code hsync()} into
 * {@code flush()}, which makes nothing durable or visible before {@link #close}. Programs that need a
 * write-ahead log must not use strata:// for it (as with object stores).
 *
 * <p>{@link Abortable}: {@link #abort} cancels the write; the file is removed and nothing is published.
 * IOStatistics: bytes written and write operations.
 *
 * <p>One writer, like the FileOutStream under it; its calls are synchronized all the same, because the file system's
 * close (Hadoop's shutdown hook, say) closes a stream still open from another thread, and must wait for a write in
 * progress rather than finish the file under it (as HDFS's DFSOutputStream does).
 */
final class StrataOutputStream extends OutputStream implements StreamCapabilities, IOStatisticsSource, Abortable {
  private final String path;
  private final FileOutStream out;
  private final IOStatisticsStore stats = IOStatisticsBinding.iostatisticsStore()
      .withCounters(StreamStatisticNames.STREAM_WRITE_BYTES, StreamStatisticNames.STREAM_WRITE_EXCEPTIONS)
      .build();
  private boolean closed;
  /** Told once, at the first close or abort (the file system's set of open streams). */
  private final java.util.function.Consumer<StrataOutputStream> onEnd;

  StrataOutputStream(String path, FileOutStream out, java.util.function.Consumer<StrataOutputStream> onEnd) {
    this.path = path;
    this.out = out;
    this.onEnd = onEnd;
  }

  /** The Strata path written. */
  String path() {
    return path;
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException(FSExceptionMessages.STREAM_IS_CLOSED + " (writing " + path + ")");
    }
  }

  @Override
  public synchronized void write(int b) throws IOException {
    checkOpen();
    try {
      out.write(b);
    } catch (IOException | RuntimeException e) {
      stats.incrementCounter(StreamStatisticNames.STREAM_WRITE_EXCEPTIONS);
      throw e;
    }
    stats.incrementCounter(StreamStatisticNames.STREAM_WRITE_BYTES);
  }

  @Override
  public synchronized void write(byte[] b, int off, int len) throws IOException {
    checkOpen();
    try {
      out.write(b, off, len);
    } catch (IOException | RuntimeException e) {
      stats.incrementCounter(StreamStatisticNames.STREAM_WRITE_EXCEPTIONS);
      throw e;
    }
    stats.incrementCounter(StreamStatisticNames.STREAM_WRITE_BYTES, len);
  }

  /** Nothing is published before close (see the class comment); checks only that the stream is open. */
  @Override
  public synchronized void flush() throws IOException {
    checkOpen();
  }

  @Override
  public synchronized void close() throws IOException {
    // Closed before: the Strata stream's close says again why its write failed (as HDFS's does), else nothing.
    closed = true;
    onEnd.accept(this);
    try {
      out.close();
    } catch (IOException e) {
      stats.incrementCounter(StreamStatisticNames.STREAM_WRITE_EXCEPTIONS);
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public synchronized AbortableResult abort() {
    boolean wasClosed = closed;
    closed = true;
    onEnd.accept(this);
    if (!wasClosed) {
      out.cancel();
    }
    return new AbortableResult() {
      @Override
      public boolean alreadyClosed() {
        return wasClosed;
      }

      @Override
      public IOException anyCleanupException() {
        return null;
      }
    };
  }

  @Override
  public boolean hasCapability(String capability) {
    switch (capability.toLowerCase(java.util.Locale.ROOT)) {
      case StreamCapabilities.IOSTATISTICS:
      case StreamCapabilities.ABORTABLE_STREAM:
        return true;
      default:
        return false; // not hflush, hsync: see the class comment
    }
  }

  @Override
  public IOStatistics getIOStatistics() {
    return stats;
  }

  @Override
  public String toString() {
    return "StrataOutputStream{" + path + (closed ? ", closed" : "") + ", " + stats + "}";
  }
}
