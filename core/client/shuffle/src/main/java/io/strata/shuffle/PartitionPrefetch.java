package io.strata.shuffle;

import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.OpenFileOptions;
import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An executor's read-ahead of small sealed partition files, so a reduce task finds its file's bytes already here
 * instead of waiting for the open's round trips to a worker. When a reader of partitions [start, end) begins with
 * the whole shuffle's seal ({@link DriverEndpoint.Sealed#whole}), the files of the next
 * {@link Settings#ahead} partitions that no reader here has begun are read on this class's pool (topped up in one
 * task once half of that window was begun), each at most
 * {@link Settings#fileMaxBytes}, all of them together at most {@link Settings#maxBytes} (reserved before a read
 * starts). A reader {@link #take}s a file's bytes only when they were read from the same file (id and length) it
 * was told of; a read not started yet is cancelled and the reader opens the file itself, as it also does when the
 * read ahead failed, so a failure here never fails a task (the reader's own open reports it).
 *
 * <p>Spark hands the reduce tasks out in partition order, so an executor running all of them (local mode, or few
 * executors) reads ahead what it will run next. With many executors most of what one reads ahead runs elsewhere:
 * a file read ahead is counted wasted once readers here have begun partitions {@code ahead} past it without
 * taking it (it is dropped then), and once at least {@link #WASTE_MIN} were wasted and more were wasted than
 * taken, this shuffle is not read ahead any more on this executor (logged once). Every sealed file is complete and
 * never changes, so bytes read ahead are the bytes the reader would read; the reader checks each batch's CRC32C
 * as for any file.
 *
 * <p>Thread-safe: task threads call {@link #started} and {@link #take}; reads run on the pool. One monitor guards
 * the state and is never held while a file is read or a read is waited for.
 */
final class PartitionPrefetch implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionPrefetch.class);
  /** Wasted reads ahead of one shuffle before the waste may turn its reading ahead off. */
  static final int WASTE_MIN = 16;

  /** How far and how much to read ahead ({@link StrataShuffleConf}). */
  record Settings(int ahead, long maxBytes, long fileMaxBytes) {}

  /** What was read ahead of one shuffle, against one seal of it. */
  private static final class Shuffle {
    final DriverEndpoint.Sealed sealed;
    /** Partitions a reader here began. */
    final BitSet begun = new BitSet();
    /** The last partition considered for reading ahead. */
    int considered = -1;
    final Map<String, Read> reads = new HashMap<>();
    long taken;
    long wasted;
    boolean off;

    Shuffle(DriverEndpoint.Sealed sealed) {
      this.sealed = sealed;
    }
  }

  /** One file's read ahead: NEW until the pool starts it (or a reader cancels it), then RUNNING. */
  private static final class Read {
    static final int NEW = 0;
    static final int RUNNING = 1;
    static final int CANCELLED = 2;
    final int partition;
    final URIStatus status;
    final AtomicInteger state = new AtomicInteger(NEW);
    final CompletableFuture<byte[]> bytes = new CompletableFuture<>();

    Read(int partition, URIStatus status) {
      this.partition = partition;
      this.status = status;
    }
  }

  private final FileSystem fs;
  private final Settings settings;
  private final ExecutorService pool;
  private final Map<Integer, Shuffle> shuffles = new HashMap<>();
  /** Bytes of the reads held in {@link Shuffle#reads}. */
  private long reserved;
  /** Reads handed to the pool, and those the pool went through (read, failed or found cancelled). */
  private final java.util.concurrent.atomic.AtomicLong planned = new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong ended = new java.util.concurrent.atomic.AtomicLong();

  PartitionPrefetch(FileSystem fs, Settings settings, ExecutorService pool) {
    this.fs = fs;
    this.settings = settings;
    this.pool = pool;
  }

  /**
   * A reader of partitions [start, end) of a shuffle began with the shuffle's whole seal: notes them as begun and
   * reads ahead the files of the partitions after them.
   */
  void started(int shuffleId, DriverEndpoint.Sealed whole, int start, int end) {
    if (settings.ahead() <= 0 || !whole.whole()) {
      return;
    }
    List<Read> toRead = new ArrayList<>();
    synchronized (this) {
      Shuffle s = shuffles.get(shuffleId);
      // A new seal (the map stage ran again): nothing of the old one holds. Readers that asked side by side as the
      // seal ended hold equal answers in different objects; a taken file is checked against its status anyway.
      if (s == null || (s.sealed != whole && !s.sealed.files().equals(whole.files()))) {
        if (s != null) {
          dropAll(s);
        }
        s = new Shuffle(whole);
        shuffles.put(shuffleId, s);
      }
      s.begun.set(start, end);
      for (Iterator<Read> it = s.reads.values().iterator(); it.hasNext(); ) {
        Read r = it.next();
        if (r.partition < start - settings.ahead()) {
          it.remove();
          drop(r);
          s.wasted++;
        }
      }
      if (!s.off && s.wasted >= WASTE_MIN && s.wasted > s.taken) {
        s.off = true;
        dropAll(s);
        LOG.info("Shuffle {}: no more reading ahead of partition files on this executor: {} files read ahead were "
            + "run elsewhere, {} were taken", shuffleId, s.wasted, s.taken);
      }
      if (s.off) {
        return;
      }
      // Topped up only once half the window was used, so the pool is woken once per half window, not per task:
      // waking a thread is a system call that costs a task about as much as the read it spares on this kind of VM.
      if (s.considered - (end - 1) > settings.ahead() / 2) {
        return;
      }
      int last = end - 1 + settings.ahead();
      for (int p = Math.max(s.considered + 1, end); p <= last; p++) {
        if (!s.begun.get(p) && !plan(s, p, toRead)) {
          break; // over the byte budget: this partition is considered again by a later reader
        }
        s.considered = p;
      }
    }
    if (toRead.isEmpty()) {
      return;
    }
    planned.addAndGet(toRead.size());
    try {
      pool.execute(() -> toRead.forEach(this::read)); // in partition order, the order tasks take them
    } catch (RejectedExecutionException e) { // closing, or its queue full: the readers open these files themselves
      synchronized (this) {
        Shuffle s = shuffles.get(shuffleId);
        for (Read r : toRead) {
          if (s != null && s.reads.remove(r.status.path(), r)) {
            drop(r);
          }
        }
      }
      for (Read r : toRead) {
        r.state.set(Read.CANCELLED);
        r.bytes.completeExceptionally(e);
      }
    }
  }

  /** Plans the reads of partition {@code p}'s files that fit; false when one did not fit the budget. */
  private boolean plan(Shuffle s, int p, List<Read> toRead) {
    List<String> files = s.sealed.files().getOrDefault(p, List.of());
    List<Read> planned = new ArrayList<>();
    long bytes = 0;
    for (String path : files) {
      URIStatus st = s.sealed.statuses().get(path);
      if (st == null || st.directory() || st.length() > settings.fileMaxBytes() || s.reads.containsKey(path)) {
        continue; // opened by the reader: by path, or too big to hold here
      }
      planned.add(new Read(p, st));
      bytes += st.length();
    }
    if (reserved + bytes > settings.maxBytes()) {
      if (reserved == 0) {
        return true; // more than the whole budget alone: its reader opens its files
      }
      return false;
    }
    for (Read r : planned) {
      s.reads.put(r.status.path(), r);
      reserved += r.status.length();
      toRead.add(r);
    }
    return true;
  }

  private void read(Read r) {
    try {
      readNow(r);
    } finally {
      ended.incrementAndGet();
    }
  }

  private void readNow(Read r) {
    if (!r.state.compareAndSet(Read.NEW, Read.RUNNING)) {
      return;
    }
    try (FileInStream in = fs.openFile(r.status, OpenFileOptions.defaults())) {
      byte[] b = in.readNBytes((int) r.status.length());
      if (b.length != r.status.length() || in.read() >= 0) {
        throw new IOException(r.status.path() + " read ahead as " + b.length + " bytes, its status says "
            + r.status.length());
      }
      r.bytes.complete(b);
    } catch (IOException | RuntimeException e) {
      LOG.debug("Reading {} ahead failed; its reader opens it itself", r.status.path(), e);
      r.bytes.completeExceptionally(e);
    } catch (Error e) {
      r.bytes.completeExceptionally(e); // a reader waiting for it opens the file itself rather than waiting forever
      throw e;
    }
  }

  /**
   * The bytes of the file at {@code path} read ahead, when they were read from the file {@code status} describes;
   * waits for a read that has started. Null when the reader must open the file itself (none read ahead, another
   * file, the read not started yet or failed).
   */
  byte[] take(int shuffleId, String path, URIStatus status) {
    Read r;
    synchronized (this) {
      Shuffle s = shuffles.get(shuffleId);
      r = s == null ? null : s.reads.remove(path);
      if (r == null) {
        return null;
      }
      reserved -= r.status.length();
      if (r.status.id() != status.id() || r.status.length() != status.length()
          || r.state.compareAndSet(Read.NEW, Read.CANCELLED)) {
        s.wasted++;
        return null;
      }
      s.taken++;
    }
    try {
      return r.bytes.join();
    } catch (CompletionException e) {
      return null;
    }
  }

  /** Forgets what was read ahead of a shuffle (its seal was found stale, or Spark unregistered it). */
  synchronized void forget(int shuffleId) {
    Shuffle s = shuffles.remove(shuffleId);
    if (s != null) {
      dropAll(s);
      LOG.info("Shuffle {}: {} partition files were taken read ahead on this executor, {} read ahead for nothing",
          shuffleId, s.taken, s.wasted);
    }
  }

  /** Bytes held or being read ahead (tests). */
  synchronized long reserved() {
    return reserved;
  }

  /** Reads handed to the pool so far (tests). */
  long readsPlanned() {
    return planned.get();
  }

  /** Reads the pool went through so far: read, failed, or found cancelled (tests). */
  long readsEnded() {
    return ended.get();
  }

  /** Files of a shuffle taken from here, and read ahead for nothing (tests). */
  synchronized long[] counts(int shuffleId) {
    Shuffle s = shuffles.get(shuffleId);
    return s == null ? new long[2] : new long[] {s.taken, s.wasted};
  }

  private void dropAll(Shuffle s) {
    for (Read r : s.reads.values()) {
      drop(r);
    }
    s.reads.clear();
  }

  private void drop(Read r) {
    reserved -= r.status.length();
    r.state.compareAndSet(Read.NEW, Read.CANCELLED);
  }

  @Override
  public void close() {
    pool.shutdownNow();
    synchronized (this) {
      for (Shuffle s : shuffles.values()) {
        dropAll(s);
      }
      shuffles.clear();
    }
  }
}
