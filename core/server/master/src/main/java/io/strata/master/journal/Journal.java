package io.strata.master.journal;

import io.strata.common.exception.UnavailableException;
import io.strata.proto.journal.JournalEntryProto;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's write-ahead journal on a local (or shared) directory, with group commit and checkpoints.
 *
 * <p>Layout ({@link JournalFiles}): {@code VERSION}, {@code segments/<first sequence>.log} (entries in
 * sequence order, framed by {@link RecordFile}), {@code checkpoints/<sequence>.ckpt} (the entries that
 * rebuild the whole state as of that sequence), {@code EPOCHS} ({@link JournalEpochs}: fencing of a
 * deposed leader). Segments are read by {@link JournalReader}; this class recovers, writes and
 * checkpoints.
 *
 * <p>Protocol: state changes are applied in memory and {@link #append}ed while the changed structure's
 * lock is held (so journal order is apply order); the RPC then calls {@link #awaitFlushed} before it
 * answers. Group commit: one thread at a time drains everything queued and writes it with one
 * {@code write} and one {@code fsync}, so concurrent callers share an fsync; that thread is a waiting
 * caller itself (no hand-off to a writer thread and back on the path of an acknowledgement), or the
 * background writer for entries nobody waits for. Recovery = newest checkpoint, then
 * the segments after it; a torn last record is cut, any other damage stops the master
 * ({@link CorruptJournalException}). The entries of one operation ({@link #append(List)}) carry a
 * "continues" flag on all but the last; replay applies an operation only when its last entry is read, and
 * cuts an operation whose last entry never reached the disk, so a crash never leaves one half-applied.
 *
 * <p>Thread-safe. The queue and sequence counters are guarded by this object's monitor; file I/O runs
 * outside it, on the one thread that holds the {@code writing} flag. The monitor is a leaf of the master's lock order (appends come under the
 * tree's or the commit lock); {@link #awaitFlushed} waits on it and is called with no other lock held.
 */
public final class Journal implements JournalSink, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Journal.class);
  /** How long an entry nobody waits for may stay queued before the background writer writes it. */
  static final long BACKGROUND_FLUSH_MS = 20;

  private final Path dir;
  private final long segmentMaxBytes;
  private final List<JournalEntryProto> pending = new ArrayList<>();
  private long appended;
  private long flushed;
  private IOException failure;
  private boolean closing;
  /** Set once close has stopped the background writer: no more writes. */
  private boolean closed;
  /** True while one thread (a caller or the background writer) writes a batch; at most one at a time. */
  private boolean writing;
  private boolean rotateRequested;
  /** Segments the writer has closed and replaced; a checkpoint waits for one so it can drop the old. */
  private long rotations;
  /** Batches written with one write and one fsync each (group commit: fewer than entries). */
  private long batches;
  /** Of those, the batches the background writer wrote (nobody was waiting for them). */
  private long backgroundBatches;
  private Thread writer;
  /** Written only by the thread that set {@link #writing}, outside the monitor; opened and closed under it. */
  private FileChannel segment;
  /** The background writer sleeps on this (not on the journal's monitor, so no flush wakes it). */
  private final Object wake = new Object();
  /** Guarded by {@link #wake}: the background writer has work now. */
  private boolean kicked;
  /** The leadership epochs; fenced and claimed under this monitor, checked by the writer thread. */
  private final JournalEpochs epochs;
  /** This master's epoch once it writes (0 while it only reads); stamped on every appended entry. */
  private long epoch;
  /** Reading (recovery, a standby's tailing): the last entry applied. */
  private long tailSeq;
  /**
   * A recovery or catch-up began and did not finish (a read or an applier failed part-way): the state it applied to
   * holds some entries past {@link #tailSeq}, maybe half an operation. The next catch-up refuses (see {@link #tail}),
   * so nothing is applied twice; the caller reloads the state from scratch.
   */
  private boolean tailBroken;
  /** Told the time of each batch's write and fsync, in nanoseconds (the master's metrics). */
  private volatile java.util.function.LongConsumer syncTimes = n -> { };
  /** Told how long each {@link #awaitFlushed} waited, in nanoseconds (the master's metrics). */
  private volatile java.util.function.LongConsumer flushWaits = n -> { };
  /**
   * Told once, on the thread that saw it, when writing fails for good (a disk error, or this master was deposed):
   * the master steps down, as HDFS's NameNode and Alluxio's master do, rather than go on serving a namespace whose
   * later changes can never become durable (see {@link #onFailure}).
   */
  private volatile java.util.function.Consumer<IOException> failureListener = e -> { };
  /** Entries written so far by this journal object (counted per batch, by the writing thread). */
  private final java.util.concurrent.atomic.LongAdder entriesWritten = new java.util.concurrent.atomic.LongAdder();

  public Journal(Path dir, long segmentMaxBytes) {
    this.dir = dir;
    this.epochs = new JournalEpochs(dir);
    this.segmentMaxBytes = segmentMaxBytes;
  }

  public Path dir() {
    return dir;
  }

  // ------------------------------------------------------------------ format

  /** True when the dir holds journal entries or checkpoints. */
  public static boolean hasContent(Path dir) throws IOException {
    return JournalFiles.hasContent(dir);
  }

  /** The cluster id of the journal at {@code dir}, created when missing (see {@code JournalFiles.clusterId}). */
  public static String clusterId(Path dir) throws IOException {
    return JournalFiles.clusterId(dir);
  }

  /** Initialises an empty journal; refuses to wipe one that holds entries unless {@code force}. */
  public static void format(Path dir, boolean force) throws IOException {
    JournalFiles.format(dir, force);
  }

  // ------------------------------------------------------------------ recovery

  /**
   * Replays the newest checkpoint and every later entry into {@code applier}; cuts a torn tail. A missing
   * or empty dir is formatted first. Returns the last sequence replayed. This is the recovery of a master
   * that is about to write.
   */
  public long replay(Consumer<JournalEntry> applier) throws IOException {
    return recover(applier, true);
  }

  /**
   * As {@link #replay}, without changing any file: a standby reads a journal its leader may be writing,
   * so an incomplete last record or operation is left for {@link #tail} to pick up when it is whole.
   */
  public long replayReadOnly(Consumer<JournalEntry> applier) throws IOException {
    return recover(applier, false);
  }

  private long recover(Consumer<JournalEntry> applier, boolean cutTornTail) throws IOException {
    synchronized (this) {
      tailBroken = true; // until the whole replay is applied
    }
    JournalFiles.checkVersion(dir);
    long seq = 0;
    TreeMap<Long, Path> checkpoints = JournalFiles.numbered(JournalFiles.checkpointsDir(dir), ".ckpt");
    if (!checkpoints.isEmpty()) {
      var newest = checkpoints.lastEntry();
      // Applied as read, never all its entries in memory at once (a big namespace's checkpoint passes gigabytes).
      long n = RecordFile.readWhole(newest.getValue(), p -> applier.accept(JournalCodec.fromProto(p)));
      seq = newest.getKey();
      LOG.info("Loaded checkpoint {} ({} entries)", newest.getValue().getFileName(), n);
    }
    long checkpointSeq = seq;
    seq = cutTornTail ? JournalReader.applySegments(dir, epochs.read(), seq, applier, true)
        : JournalReader.applySegments(dir, epochs::read, seq, applier, false);
    LOG.info("Journal at {} replayed: {} entries after the checkpoint, last sequence {}", dir, seq - checkpointSeq,
        seq);
    synchronized (this) {
      appended = seq;
      flushed = seq;
      tailSeq = seq;
      tailBroken = false;
    }
    return seq;
  }

  /**
   * A standby's catch-up: applies the operations written since the last call. Read-only; an incomplete
   * last record or operation is left for the next call. Throws {@link CorruptJournalException} when
   * entries are missing (a checkpoint removed segments this reader had not reached), and when an earlier recovery or
   * catch-up failed part-way (its applier, or a read after some entries were applied, threw): the state then holds
   * entries this journal cannot tell apart, and applying from the last known sequence again would apply them twice.
   * Either way the caller reloads (a new state, then {@link #replayReadOnly}).
   */
  public long tail(Consumer<JournalEntry> applier) throws IOException {
    return catchUp(applier, false);
  }

  /**
   * A new leader's last catch-up: fences the old leader (see {@link #fence}), applies what it wrote, then
   * cuts any torn tail it left, so the segment this master opens next follows a clean one.
   */
  public long takeOver(Consumer<JournalEntry> applier) throws IOException {
    synchronized (this) {
      if (!epochs.fenced()) {
        epochs.fence();
      }
    }
    return catchUp(applier, true);
  }

  private long catchUp(Consumer<JournalEntry> applier, boolean cut) throws IOException {
    long from;
    synchronized (this) {
      if (tailBroken) {
        throw new CorruptJournalException("An earlier catch-up of the journal at " + dir + " failed part-way after "
            + "sequence " + tailSeq + ": the state must be reloaded before it follows the journal again");
      }
      tailBroken = true; // until this catch-up has applied all it read
      from = tailSeq;
    }
    // A standby reads the epochs after each segment (JournalReader); a new leader's catch-up, after its own fence.
    boolean[] applied = new boolean[1];
    Consumer<JournalEntry> counted = e -> {
      applied[0] = true;
      applier.accept(e);
    };
    long seq;
    try {
      seq = cut ? JournalReader.applySegments(dir, epochs.read(), from, counted, true)
          : JournalReader.applySegments(dir, epochs::read, from, counted, false);
    } catch (IOException | RuntimeException e) {
      if (!applied[0]) {
        synchronized (this) {
          tailBroken = false; // nothing was applied: the next catch-up simply starts here again
        }
      }
      throw e;
    }
    synchronized (this) {
      tailBroken = false;
      tailSeq = seq;
      appended = seq;
      flushed = seq;
    }
    return seq;
  }


  /** The epoch this master writes with (0 before it writes). */
  public synchronized long epoch() {
    return epoch;
  }

  // ------------------------------------------------------------------ writing

  /** Opens a new segment after the last replayed entry and starts the background writer. */
  public synchronized void startWriting() throws IOException {
    epochs.claim(appended + 1);
    epoch = epochs.epoch();
    segment = JournalFiles.openSegment(dir, appended + 1);
    writer = new Thread(this::backgroundLoop, "journal-writer");
    writer.setDaemon(true);
    writer.start();
  }

  /** Appends an operation of one entry. */
  public void append(JournalEntry entry) {
    append(List.of(entry));
  }

  /**
   * Appends the entries of one operation with consecutive sequences. They are queued together, so no
   * batch ever splits them across writes or segments. Wakes nobody: the caller's own {@link #awaitFlushed}
   * writes them (or the background writer, for entries nobody waits for).
   */
  @Override
  public synchronized void append(List<JournalEntry> operation) {
    for (int i = 0; i < operation.size(); i++) {
      // Stamped with this master's epoch: replay voids entries of an older epoch past a newer one's start.
      pending.add(JournalCodec.toProto(++appended, operation.get(i), i < operation.size() - 1, epoch));
    }
  }

  /**
   * Where the time of each batch write (write plus fsync) and of each wait for durability go; both run on
   * the writing or waiting thread and must be cheap.
   */
  public void observe(java.util.function.LongConsumer syncNanos, java.util.function.LongConsumer flushWaitNanos) {
    this.syncTimes = syncNanos;
    this.flushWaits = flushWaitNanos;
  }

  /** Entries written to disk so far by this journal (not those replayed). */
  public long entriesWritten() {
    return entriesWritten.sum();
  }

  /** Batches written so far, each with one fsync (tests check that commits are grouped). */
  synchronized long batchesWritten() {
    return batches;
  }

  /** Of {@link #batchesWritten}, those the background writer wrote. */
  synchronized long backgroundBatchesWritten() {
    return backgroundBatches;
  }

  /** The sequence of the newest appended entry. */
  public synchronized long appendedSequence() {
    return appended;
  }

  /**
   * Waits until every entry up to {@code seq} is on disk; throws when the journal has failed. Group commit
   * without a hand-off: when no write is in progress, the caller itself takes everything queued and writes
   * it (one write, one fsync); otherwise it waits for that write, and one of the callers still waiting then
   * writes what queued up meanwhile. Called with no other lock held.
   */
  public void awaitFlushed(long seq) throws UnavailableException {
    long t0 = System.nanoTime();
    try {
      awaitFlushedTimed(seq);
    } finally {
      flushWaits.accept(System.nanoTime() - t0);
    }
  }

  private void awaitFlushedTimed(long seq) throws UnavailableException {
    while (true) {
      Batch batch;
      synchronized (this) {
        while (true) {
          if (flushed >= seq) {
            return;
          }
          if (failure != null || closed) {
            throw new UnavailableException("The master's journal at " + dir + " cannot be written"
                + (failure == null ? " (it is closing)" : ": " + failure.getMessage())
                + "; the change is not durable", failure);
          }
          if (!writing && segment != null && (!pending.isEmpty() || rotateRequested)) {
            batch = takeBatch();
            break;
          }
          try {
            wait();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UnavailableException("Interrupted while waiting for the journal");
          }
        }
      }
      write(batch);
    }
  }

  /**
   * Waits at most {@code timeoutMs} for every entry up to {@code seq} to be on disk, never writing itself: the
   * background writer, woken now, writes what is queued. For a caller that must not be held by a slow disk (a
   * worker's heartbeat): false when the entries are not durable yet, or the journal failed or is closing.
   */
  public boolean awaitFlushedBriefly(long seq, long timeoutMs) {
    kickWriter();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    synchronized (this) {
      while (flushed < seq) {
        long left = deadline - System.nanoTime();
        if (failure != null || closed || left <= 0) {
          return false;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(this, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return true;
    }
  }

  /** Waits until everything appended so far is durable. */
  public void flush() throws UnavailableException {
    awaitFlushed(appendedSequence());
  }

  /** What one write takes: the entries queued so far, and whether a new segment must follow them. */
  private record Batch(List<JournalEntryProto> entries, boolean rotate) {}

  /** Makes this thread the writer and takes what is queued. Monitor held; {@link #write} must follow. */
  private Batch takeBatch() {
    writing = true;
    Batch b = new Batch(new ArrayList<>(pending), rotateRequested);
    pending.clear();
    rotateRequested = false;
    return b;
  }

  /**
   * Writes a batch taken by {@link #takeBatch} (one write, one fsync, then a new segment when asked or
   * when this one is full), outside the monitor, then publishes it: the new flushed sequence and a wake-up
   * for every waiter. Any failure fails the journal for good.
   */
  private void write(Batch batch) {
    write(batch, false);
  }

  /** As above; {@code background}: the background writer's batch (counted with the flush it publishes). */
  private void write(Batch batch, boolean background) {
    long last = batch.entries().isEmpty() ? -1 : batch.entries().get(batch.entries().size() - 1).getSequence();
    boolean rotated = false;
    try {
      if (last >= 0) {
        if (epochs.deposed()) {
          throw epochs.deposedError();
        }
        long t0 = System.nanoTime();
        RecordFile.writeBatch(segment, batch.entries()); // one write for a usual batch; streamed past 1 MiB
        segment.force(false);
        syncTimes.accept(System.nanoTime() - t0);
        entriesWritten.add(batch.entries().size());
        // Checked again before acknowledging: a successor that fenced during the write may not have
        // read these entries, and its epoch may void them.
        if (epochs.deposed()) {
          throw epochs.deposedError();
        }
      }
      if (batch.rotate() || segment.size() >= segmentMaxBytes) {
        segment.close();
        long next;
        synchronized (this) {
          next = (last >= 0 ? last : flushed) + 1;
        }
        segment = JournalFiles.openSegment(dir, next);
        rotated = true;
      }
    } catch (IOException e) {
      writerFailed(e);
    } catch (RuntimeException | Error e) {
      // Any end of a write must fail the waiters: otherwise every write call waits for ever.
      writerFailed(new IOException("The journal writer failed: " + e, e));
    } finally {
      synchronized (this) {
        if (failure == null) {
          if (last >= 0) {
            flushed = last;
            batches++;
            if (background) {
              backgroundBatches++; // counted before the waiters wake: one that saw the flush sees the count
            }
          }
          if (rotated) {
            rotations++;
          }
        }
        writing = false;
        notifyAll();
      }
    }
  }

  /**
   * The background writer: writes entries nobody waits for (UFS metadata loaded during a read, for
   * example) within {@link #BACKGROUND_FLUSH_MS}, the segment rotations checkpoints ask for, and what is
   * left at close. It is never on the path of an acknowledgement: a caller that waits writes its own
   * entries ({@link #awaitFlushed}), so no call waits for this thread to wake up.
   */
  private void backgroundLoop() {
    while (true) {
      synchronized (wake) {
        if (!kicked) {
          try {
            wake.wait(BACKGROUND_FLUSH_MS);
          } catch (InterruptedException e) {
            boolean fail;
            synchronized (this) {
              fail = !closing;
            }
            if (fail) {
              writerFailed(new IOException("The journal writer was interrupted"));
            }
            return;
          }
        }
        kicked = false;
      }
      Batch batch;
      synchronized (this) {
        while (writing) { // a caller is writing: what it leaves is for the next round
          try {
            wait();
          } catch (InterruptedException e) {
            return;
          }
        }
        if (failure != null) {
          return;
        }
        if (pending.isEmpty() && !rotateRequested) {
          if (closing) {
            return;
          }
          continue;
        }
        batch = takeBatch();
      }
      write(batch, true);
    }
  }

  /** Wakes the background writer now (a rotation or close is waiting for it). */
  private void kickWriter() {
    synchronized (wake) {
      kicked = true;
      wake.notifyAll();
    }
  }

  private void writerFailed(IOException e) {
    LOG.error("Writing the journal at {} failed; the master can no longer accept changes", dir, e);
    boolean first;
    synchronized (this) {
      first = failure == null && !closing; // a write cut by close is no failure to act on
      if (failure == null) {
        failure = e;
      }
      notifyAll();
    }
    if (first) {
      failureListener.accept(e); // outside the monitor: the listener may close this journal
    }
  }

  /**
   * Sets what to do when writing fails for good (once, on the failing thread, outside every journal lock). Every
   * later write fails anyway; the listener is there so the master can step down and let a standby, or a restart,
   * recover the journal as it is on disk.
   */
  public void onFailure(java.util.function.Consumer<IOException> listener) {
    this.failureListener = listener;
  }

  // ------------------------------------------------------------------ checkpoints

  /**
   * Writes a checkpoint of the state as of sequence {@code seq} (the caller collected {@code entries}
   * while holding the locks that keep state and sequence consistent), then removes the segments it
   * makes unnecessary.
   */
  public void checkpoint(long seq, List<JournalEntry> entries) throws IOException {
    awaitFlushed(seq);
    // Each entry's proto is made as it is written, not all of them first (a big namespace's would not fit twice).
    Iterable<JournalEntryProto> protos = () -> entries.stream().map(e -> JournalCodec.toProto(0, e)).iterator();
    JournalFiles.writeCheckpoint(dir, seq, protos);
    // Start a new segment so that every older one ends at or before seq, then drop them. Entries up to
    // seq are flushed already, so once any rotation after this request is done, they are all in closed
    // segments.
    awaitRotation();
    JournalFiles.removeCoveredBy(dir, seq);
    LOG.info("Checkpoint at sequence {} written ({} entries); older segments removed", seq, entries.size());
  }

  private void awaitRotation() throws UnavailableException {
    synchronized (this) {
      if (writer == null) {
        throw new IllegalStateException("The journal at " + dir + " is not writing (call startWriting first)");
      }
      long target = rotations + 1;
      rotateRequested = true;
      kickWriter();
      while (rotations < target && failure == null && !closing) {
        try {
          wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new UnavailableException("Interrupted while waiting for the journal");
        }
      }
      if (rotations < target) {
        throw new UnavailableException("The master's journal at " + dir + " cannot start a new segment"
            + (failure == null ? " (it is closing)" : ": " + failure.getMessage()), failure);
      }
    }
  }

  @Override
  public void close() {
    Thread w;
    synchronized (this) {
      closing = true;
      notifyAll();
      w = writer;
    }
    kickWriter();
    if (w != null) {
      try {
        w.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    synchronized (this) {
      writer = null;
      closed = true;
      notifyAll();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (writing && System.nanoTime() < until) { // a caller's write in progress uses the segment
        try {
          wait(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    try {
      if (segment != null) {
        segment.close();
      }
    } catch (IOException e) {
      LOG.warn("Closing the journal segment failed: {}", e.toString());
    }
  }
}
