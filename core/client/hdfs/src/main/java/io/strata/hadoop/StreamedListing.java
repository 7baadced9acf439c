package io.strata.hadoop;

import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.ListStatusOptions;
import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.NoSuchElementException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * A directory listing handed out page by page as the master streams it ({@code listStatusIterator},
 * {@code listLocatedStatus}): memory stays bounded by one page whatever the directory's size.
 *
 * <p>One daemon thread per listing runs the client's streamed listing ({@link FileSystem#iterateStatus}) and
 * puts each entry into a queue of {@link #PAGE} entries; the caller's thread takes them and converts them
 * (a conversion may leave an entry out: a PathFilter). When the queue is
 * full the producer waits, and the gRPC stream's flow control holds the master back. The constructor waits
 * for the first entry, so a missing path fails at the call ({@link java.io.FileNotFoundException}) as in
 * HDFS. A listing the caller abandons without {@link #close} ends when its producer has waited
 * {@link #ABANDON_AFTER_MS} for room (the stream is then cancelled); a later {@code next} reports that.
 *
 * <p>The iterator is for one consumer thread; the producer talks to it only through the queue.
 */
final class StreamedListing<T> implements RemoteIterator<T>, Closeable {
  static final int PAGE = 1000;
  static final long ABANDON_AFTER_MS = 120_000;

  /** Turns a listed entry into what the caller gets, or null to leave it out; runs in the caller's thread. */
  interface Convert<T> {
    T apply(URIStatus status) throws IOException;
  }

  private static final Object END = new Object();

  /** Thrown inside the producer's callback to stop a listing nobody reads. */
  private static final class Stopped extends RuntimeException {
    Stopped() {
      super(null, null, false, false);
    }
  }

  private final String path;
  private final Convert<T> convert;
  private final BlockingQueue<Object> queue = new ArrayBlockingQueue<>(PAGE);
  private final Thread producer;
  private volatile boolean closed;
  private Object next;
  private T ready;
  private boolean done;

  StreamedListing(FileSystem fs, String path, Convert<T> convert) throws IOException {
    this.path = path;
    this.convert = convert;
    this.producer = new Thread(() -> produce(fs), "strata-listing " + path);
    producer.setDaemon(true);
    producer.start();
    advance(); // the first entry, or the error of a missing path, before the caller gets the iterator
    if (next instanceof IOException) {
      done = true;
      throw HadoopErrors.translate((IOException) next);
    }
  }

  private void produce(FileSystem fs) {
    Object last = END;
    try {
      fs.iterateStatus(path, ListStatusOptions.defaults(), s -> {
        try {
          if (closed || !queue.offer(s, ABANDON_AFTER_MS, TimeUnit.MILLISECONDS)) {
            throw new Stopped();
          }
        } catch (InterruptedException e) {
          throw new Stopped();
        }
      });
    } catch (Stopped e) {
      last = new IOException("The listing of " + path + " was stopped: it was closed, or nobody read it for "
          + ABANDON_AFTER_MS + " ms");
    } catch (IOException e) {
      last = e;
    } catch (RuntimeException e) {
      last = new IOException("The listing of " + path + " failed: " + e, e);
    }
    if (!closed) {
      try {
        if (!queue.offer(last, ABANDON_AFTER_MS, TimeUnit.MILLISECONDS)) {
          return; // nobody is reading
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void advance() throws IOException {
    try {
      next = queue.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while listing " + path);
    }
  }

  @Override
  public boolean hasNext() throws IOException {
    while (ready == null && !done) {
      if (next == null) {
        advance();
      }
      if (next == END) {
        done = true;
      } else if (next instanceof IOException) {
        done = true;
        throw HadoopErrors.translate((IOException) next);
      } else {
        URIStatus s = (URIStatus) next;
        next = null;
        ready = convert.apply(s);
      }
    }
    return ready != null;
  }

  @Override
  public T next() throws IOException {
    if (!hasNext()) {
      throw new NoSuchElementException("No more entries in the listing of " + path);
    }
    T out = ready;
    ready = null;
    return out;
  }

  /** Stops the listing: the producer gives up its stream at its next entry. */
  @Override
  public void close() {
    closed = true;
    done = true;
    producer.interrupt();
    queue.clear();
  }
}
