package io.strata.master.journal;

import io.strata.common.exception.UnavailableException;
import io.strata.proto.journal.JournalEntryProto;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's write-ahead journal on a local (or shared) directory, with group commit and checkpoints.
 *
 * <p>Layout: {@code VERSION} (marks a formatted journal), {@code segments/<first sequence, 20 digits>.log}
 * (entries in sequence order, framed by {@link RecordFile}), {@code checkpoints/<sequence>.ckpt} (the
 * entries that rebuild the whole state as of that sequence; written to a temp name, fsynced, then
 * renamed, so a checkpoint file is always whole).
 *
 * <p>Protocol: state changes are applied in memory and {@link #append}ed while the changed structure's
 * lock is held (so journal order is apply order); the RPC then calls {@link #awaitFlushed} before it
 * answers. One writer thread drains everything queued, writes it with one {@code write} and one
 * {@code fsync}: concurrent callers share an fsync (group commit). Recovery = newest checkpoint, then
 * the segments after it; a torn last record is cut, any other damage stops the master
 * ({@link CorruptJournalException}). The entries of one operation ({@link #append(List)}) carry a
 * "continues" flag on all but the last; replay applies an operation only when its last entry is read, and
 * cuts an operation whose last entry never reached the disk, so a crash never leaves one half-applied.
 *
 * <p>Thread-safe. The queue and sequence counters are guarded by this object's monitor; file I/O runs on
 * the writer thread outside it. The monitor is a leaf of the master's lock order (appends come under the
 * tree's or the commit lock); {@link #awaitFlushed} waits on it and is called with no other lock held.
 */
public final class Journal implements JournalSink, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Journal.class);
  static final String VERSION = "strata-journal 1\n";

  private final Path dir;
  private final Path segmentsDir;
  private final Path checkpointsDir;
  private final long segmentMaxBytes;
  private final List<JournalEntryProto> pending = new ArrayList<>();
  private long appended;
  private long flushed;
  private IOException failure;
  private boolean closing;
  private boolean rotateRequested;
  /** Segments the writer has closed and replaced; a checkpoint waits for one so it can drop the old. */
  private long rotations;
  /** Batches written with one write and one fsync each (group commit: fewer than entries). */
  private long batches;
  private Thread writer;
  private FileChannel segment;
  /** This master's leadership epoch once it writes; 0 while it only reads. */
  private long epoch;
  /** Size of EPOCHS when this master claimed its epoch: a bigger file means someone took over. */
  private long epochsSizeAtClaim = -1;
  /** The epoch {@link #takeOver} reserved (0: none); {@link #startWriting} claims it. */
  private long fencedEpoch;
  /** Reading (recovery, a standby's tailing): the last entry applied. */
  private long tailSeq;

  public Journal(Path dir, long segmentMaxBytes) {
    this.dir = dir;
    this.segmentsDir = dir.resolve("segments");
    this.checkpointsDir = dir.resolve("checkpoints");
    this.segmentMaxBytes = segmentMaxBytes;
  }

  public Path dir() {
    return dir;
  }

  // ------------------------------------------------------------------ format

  /** True when the dir holds journal entries or checkpoints. */
  public static boolean hasContent(Path dir) throws IOException {
    for (String sub : List.of("segments", "checkpoints")) {
      Path p = dir.resolve(sub);
      if (Files.isDirectory(p)) {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(p)) {
          if (s.iterator().hasNext()) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /** Initialises an empty journal; refuses to wipe one that holds entries unless {@code force}. */
  public static void format(Path dir, boolean force) throws IOException {
    if (hasContent(dir) && !force) {
      throw new IOException("The journal at " + dir + " holds entries; formatting would erase the namespace. "
          + "Use --force to wipe it.");
    }
    for (String sub : List.of("segments", "checkpoints")) {
      Path p = dir.resolve(sub);
      if (Files.isDirectory(p)) {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(p)) {
          for (Path f : s) {
            Files.delete(f);
          }
        }
      }
    }
    // A wiped journal starts its epochs again too: none of the old leaders' entries remain to void.
    Files.deleteIfExists(dir.resolve("EPOCHS"));
    Files.createDirectories(dir.resolve("segments"));
    Files.createDirectories(dir.resolve("checkpoints"));
    Files.writeString(dir.resolve("VERSION"), VERSION, StandardCharsets.UTF_8);
    LOG.info("Formatted the journal at {}", dir);
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
    if (!Files.exists(dir.resolve("VERSION"))) {
      if (Files.isDirectory(dir) && hasContent(dir)) {
        throw new CorruptJournalException(dir + " holds journal files but no VERSION marker: not a journal "
            + "this master wrote; refusing to start");
      }
      format(dir, false);
    }
    String version = Files.readString(dir.resolve("VERSION"), StandardCharsets.UTF_8);
    if (!version.equals(VERSION)) {
      throw new CorruptJournalException(dir + "/VERSION says '" + version.trim() + "', expected '"
          + VERSION.trim() + "'");
    }
    long seq = 0;
    TreeMap<Long, Path> checkpoints = numbered(checkpointsDir, ".ckpt");
    if (!checkpoints.isEmpty()) {
      var newest = checkpoints.lastEntry();
      RecordFile.Scan scan = RecordFile.scan(newest.getValue());
      if (scan.tornAt() >= 0) {
        throw new CorruptJournalException("Checkpoint " + newest.getValue() + " is damaged at offset "
            + scan.tornAt());
      }
      for (JournalEntryProto p : scan.entries()) {
        applier.accept(JournalCodec.fromProto(p));
      }
      seq = newest.getKey();
      LOG.info("Loaded checkpoint {} ({} entries)", newest.getValue().getFileName(), scan.entries().size());
    }
    long checkpointSeq = seq;
    seq = applySegments(seq, applier, cutTornTail);
    LOG.info("Journal at {} replayed: {} entries after the checkpoint, last sequence {}", dir, seq - checkpointSeq,
        seq);
    synchronized (this) {
      appended = seq;
      flushed = seq;
      tailSeq = seq;
    }
    return seq;
  }

  /**
   * Applies every valid whole operation after {@code seq} found in the segments, in order; returns the
   * last sequence applied. With {@code cut}, a torn tail or an operation cut short at the end of the
   * newest segment is truncated away; without it, both are left for a later call.
   */
  private long applySegments(long seq, Consumer<JournalEntry> applier, boolean cut) throws IOException {
    List<long[]> epochs = readEpochs();
    TreeMap<Long, Path> segments = numbered(segmentsDir, ".log");
    Path last = segments.isEmpty() ? null : segments.lastEntry().getValue();
    List<Long> starts = new ArrayList<>(segments.keySet());
    long applied = seq;
    // The entries of an operation whose last entry is not read yet, and where its first record starts.
    List<JournalEntryProto> operation = new ArrayList<>();
    long operationStart = -1;
    for (int s = 0; s < starts.size(); s++) {
      Path seg = segments.get(starts.get(s));
      boolean newest = seg.equals(last);
      if (!cut && s + 1 < starts.size() && starts.get(s + 1) <= applied + 1) {
        continue; // a standby skips segments wholly before what it has
      }
      RecordFile.Scan scan = RecordFile.scan(seg);
      if (scan.tornAt() >= 0 && scan.resumesAt() >= 0) {
        throw new CorruptJournalException(seg + ": the record at offset " + scan.tornAt() + " is damaged but a "
            + "whole record follows at offset " + scan.resumesAt() + ": the journal is corrupt in the middle; "
            + "refusing to start rather than lose the entries after it");
      }
      if (scan.tornAt() >= 0 && !newest) {
        throw new CorruptJournalException(seg + " is damaged at offset " + scan.tornAt()
            + " but is not the newest segment: the journal is corrupt in the middle");
      }
      long before = applied;
      long pending = applied;
      for (int i = 0; i < scan.entries().size(); i++) {
        JournalEntryProto p = scan.entries().get(i);
        if (p.getSequence() <= pending || !valid(p, epochs)) {
          continue; // already applied (or in the checkpoint), or written by a deposed leader
        }
        if (p.getSequence() != pending + 1) {
          throw new CorruptJournalException(seg + ": entry " + p.getSequence() + " follows entry " + pending
              + "; entries are missing");
        }
        pending = p.getSequence();
        if (operation.isEmpty()) {
          operationStart = scan.offsets().get(i);
        }
        operation.add(p);
        if (!p.getContinues()) {
          for (JournalEntryProto e : operation) {
            applier.accept(JournalCodec.fromProto(e));
          }
          applied = pending;
          operation.clear();
        }
      }
      if (pending == before && starts.get(s) > before + 1) {
        // No entry here to show the gap (the segment a checkpoint just started is empty): its name does.
        throw new CorruptJournalException(seg + " starts at entry " + starts.get(s) + " but the entries read "
            + "end at " + before + "; entries are missing (a checkpoint removed segments this reader had not "
            + "reached)");
      }
      long cutAt = scan.tornAt();
      if (!operation.isEmpty()) {
        // The writer never splits an operation across segments, so only a crash (or, for a standby, a
        // write in progress) ends one early.
        if (!newest) {
          throw new CorruptJournalException(seg + " ends inside an operation (entries " + (applied + 1) + " to "
              + pending + ") but is not the newest segment: the journal is corrupt in the middle");
        }
        if (cut) {
          LOG.warn("Dropping entries {} to {} of {}: an operation whose last entry never reached the disk",
              applied + 1, pending, seg);
        }
        cutAt = operationStart;
        operation.clear();
      }
      if (cut && cutAt >= 0) {
        LOG.warn("Cutting the torn tail of {} at offset {} (a write the master never acknowledged)", seg, cutAt);
        try (FileChannel ch = FileChannel.open(seg, StandardOpenOption.WRITE)) {
          ch.truncate(cutAt);
          ch.force(true);
        }
      }
    }
    return applied;
  }

  /**
   * A standby's catch-up: applies the operations written since the last call. Read-only; an incomplete
   * last record or operation is left for the next call. Throws {@link CorruptJournalException} when
   * entries are missing (a checkpoint removed segments this reader had not reached): the caller reloads.
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
      if (fencedEpoch == 0) {
        fence();
      }
    }
    return catchUp(applier, true);
  }

  private long catchUp(Consumer<JournalEntry> applier, boolean cut) throws IOException {
    long from;
    synchronized (this) {
      from = tailSeq;
    }
    long seq = applySegments(from, applier, cut);
    synchronized (this) {
      tailSeq = seq;
      appended = seq;
      flushed = seq;
    }
    return seq;
  }


  private static TreeMap<Long, Path> numbered(Path d, String suffix) throws IOException {
    TreeMap<Long, Path> out = new TreeMap<>();
    if (!Files.isDirectory(d)) {
      return out;
    }
    try (DirectoryStream<Path> s = Files.newDirectoryStream(d)) {
      for (Path p : s) {
        String name = p.getFileName().toString();
        if (name.endsWith(suffix)) {
          try {
            out.put(Long.parseLong(name.substring(0, name.length() - suffix.length())), p);
          } catch (NumberFormatException e) {
            LOG.warn("Ignoring {} in the journal: not a journal file name", p);
          }
        }
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ epochs

  /**
   * The leadership epochs, oldest first: {epoch, first sequence}. A master that starts writing appends
   * its own line ({@code <epoch> <first sequence>}) to {@code EPOCHS}; an entry of epoch e with sequence s
   * is void when a later epoch starts at or before s (it was written by a deposed leader after its
   * successor had taken over). A master taking over first reserves its epoch with start
   * {@code Long.MAX_VALUE} (fencing without voiding anything) and sets the real start once caught up.
   */
  private List<long[]> readEpochs() throws IOException {
    Path f = dir.resolve("EPOCHS");
    List<long[]> out = new ArrayList<>();
    if (!Files.exists(f)) {
      return out;
    }
    for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
      String t = line.trim();
      if (t.isEmpty()) {
        continue;
      }
      String[] parts = t.split("\\s+");
      try {
        out.add(new long[] {Long.parseLong(parts[0]), Long.parseLong(parts[1])});
      } catch (RuntimeException e) {
        throw new CorruptJournalException(f + " has a bad line '" + t + "'");
      }
    }
    return out;
  }

  /** True when {@code p} is not voided by a later epoch starting at or before its sequence. */
  private static boolean valid(JournalEntryProto p, List<long[]> epochs) {
    for (long[] e : epochs) {
      if (e[0] > p.getEpoch() && e[1] <= p.getSequence()) {
        return false;
      }
    }
    return true;
  }

  private static long newestEpoch(List<long[]> epochs) {
    long last = 0;
    for (long[] e : epochs) {
      last = Math.max(last, e[0]);
    }
    return last;
  }

  /**
   * Reserves the next epoch with no start yet ({@code <epoch> <Long.MAX_VALUE>}): it voids no entry, but
   * the old leader sees a later epoch and acknowledges nothing more. Done before the new leader's last
   * catch-up, so everything the old leader acknowledged is on disk when that catch-up reads, and the
   * epoch's real start (claimed after it) can only void entries nobody was told are durable. Claiming
   * only after the catch-up would leave a window where the old leader acknowledges an entry the new one
   * never read and then voids.
   */
  private void fence() throws IOException {
    List<long[]> epochs = readEpochs();
    fencedEpoch = newestEpoch(epochs) + 1;
    epochs.add(new long[] {fencedEpoch, Long.MAX_VALUE});
    writeEpochs(epochs);
    LOG.info("Journal at {}: epoch {} reserved; the previous leader can no longer write", dir, fencedEpoch);
  }

  /**
   * Claims this master's epoch (the one {@link #takeOver} reserved, else the next), starting at the
   * sequence after the last one replayed.
   */
  private void claimEpoch() throws IOException {
    List<long[]> epochs = readEpochs();
    long last = newestEpoch(epochs);
    if (fencedEpoch > 0) {
      if (last > fencedEpoch) {
        throw new IOException("another master took over the journal at " + dir + " (epoch " + last
            + ") while this one was taking over as epoch " + fencedEpoch);
      }
      epoch = fencedEpoch;
      epochs.removeIf(e -> e[0] == fencedEpoch);
    } else {
      epoch = last + 1;
    }
    epochs.add(new long[] {epoch, appended + 1});
    writeEpochs(epochs);
    epochsSizeAtClaim = Files.size(dir.resolve("EPOCHS"));
    LOG.info("Journal at {}: this master writes as epoch {} from sequence {}", dir, epoch, appended + 1);
  }

  /** Replaces EPOCHS whole (temp file, fsync, atomic rename). */
  private void writeEpochs(List<long[]> epochs) throws IOException {
    StringBuilder sb = new StringBuilder();
    for (long[] e : epochs) {
      sb.append(e[0]).append(' ').append(e[1]).append('\n');
    }
    Path tmp = dir.resolve("EPOCHS.tmp");
    Files.writeString(tmp, sb.toString(), StandardCharsets.UTF_8);
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
      ch.force(true);
    }
    Files.move(tmp, dir.resolve("EPOCHS"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    syncDir(dir);
  }

  /** The epoch this master writes with (0 before it writes). */
  public synchronized long epoch() {
    return epoch;
  }

  /** Fencing: true when a later master has claimed an epoch since this one did. */
  private boolean deposed() throws IOException {
    Path f = dir.resolve("EPOCHS");
    if (!Files.exists(f) || Files.size(f) == epochsSizeAtClaim) {
      return false;
    }
    for (long[] e : readEpochs()) {
      if (e[0] > epoch) {
        return true;
      }
    }
    return false;
  }

  private IOException deposedError() {
    return new IOException("another master took over the journal (a later epoch than " + epoch + " is in "
        + dir.resolve("EPOCHS") + "); this master no longer writes");
  }

  // ------------------------------------------------------------------ writing

  /** Opens a new segment after the last replayed entry and starts the writer thread. */
  public synchronized void startWriting() throws IOException {
    claimEpoch();
    openSegment(appended + 1);
    writer = new Thread(this::writeLoop, "journal-writer");
    writer.setDaemon(true);
    writer.start();
  }

  private void openSegment(long firstSeq) throws IOException {
    Files.createDirectories(segmentsDir);
    Path p = segmentsDir.resolve(String.format("%020d.log", firstSeq));
    segment = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    syncDir(segmentsDir);
  }

  /** Appends an operation of one entry. */
  public void append(JournalEntry entry) {
    append(List.of(entry));
  }

  /**
   * Appends the entries of one operation with consecutive sequences. They are queued together, so the
   * writer never splits them across batches or segments.
   */
  @Override
  public synchronized void append(List<JournalEntry> operation) {
    for (int i = 0; i < operation.size(); i++) {
      // Stamped with this master's epoch: replay voids entries of an older epoch past a newer one's start.
      pending.add(JournalCodec.toProto(++appended, operation.get(i), i < operation.size() - 1).toBuilder()
          .setEpoch(epoch).build());
    }
    notifyAll();
  }

  /** Batches written so far, each with one fsync (tests check that commits are grouped). */
  synchronized long batchesWritten() {
    return batches;
  }

  /** The sequence of the newest appended entry. */
  public synchronized long appendedSequence() {
    return appended;
  }

  /** Waits until every entry up to {@code seq} is on disk; throws when the journal has failed. */
  public void awaitFlushed(long seq) throws UnavailableException {
    synchronized (this) {
      while (flushed < seq && failure == null) {
        if (closing && writer == null) {
          break;
        }
        try {
          wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new UnavailableException("Interrupted while waiting for the journal");
        }
      }
      if (flushed < seq) {
        throw new UnavailableException("The master's journal at " + dir + " cannot be written"
            + (failure == null ? " (it is closing)" : ": " + failure.getMessage()) + "; the change is not durable",
            failure);
      }
    }
  }

  /** Waits until everything appended so far is durable. */
  public void flush() throws UnavailableException {
    awaitFlushed(appendedSequence());
  }

  private void writeLoop() {
    while (true) {
      List<JournalEntryProto> batch;
      boolean rotate;
      synchronized (this) {
        while (pending.isEmpty() && !closing && !rotateRequested) {
          try {
            wait();
          } catch (InterruptedException e) {
            if (!closing) {
              failure = new IOException("The journal writer was interrupted");
              notifyAll();
            }
            return;
          }
        }
        if (pending.isEmpty() && closing) {
          return;
        }
        batch = new ArrayList<>(pending);
        pending.clear();
        rotate = rotateRequested;
        rotateRequested = false;
      }
      try {
        if (!batch.isEmpty()) {
          if (deposed()) {
            throw deposedError();
          }
          ByteBuffer buf = RecordFile.encode(batch);
          while (buf.hasRemaining()) {
            segment.write(buf);
          }
          segment.force(false);
          // Checked again before acknowledging: a successor that fenced during the write may not have
          // read these entries, and its epoch may void them.
          if (deposed()) {
            throw deposedError();
          }
        }
        long last = batch.isEmpty() ? -1 : batch.get(batch.size() - 1).getSequence();
        boolean full = segment.size() >= segmentMaxBytes;
        if (rotate || full) {
          segment.close();
          long next;
          synchronized (this) {
            next = (last >= 0 ? last : flushed) + 1;
          }
          openSegment(next);
        }
        synchronized (this) {
          if (last >= 0) {
            flushed = last;
            batches++;
          }
          if (rotate || full) {
            rotations++;
          }
          notifyAll();
        }
      } catch (IOException e) {
        writerFailed(e);
        return;
      } catch (RuntimeException | Error e) {
        // Any end of the writer must fail the waiters: otherwise every write call waits for ever.
        writerFailed(new IOException("The journal writer failed: " + e, e));
        return;
      }
    }
  }

  private void writerFailed(IOException e) {
    LOG.error("Writing the journal at {} failed; the master can no longer accept changes", dir, e);
    synchronized (this) {
      failure = e;
      notifyAll();
    }
  }

  // ------------------------------------------------------------------ checkpoints

  /**
   * Writes a checkpoint of the state as of sequence {@code seq} (the caller collected {@code entries}
   * while holding the locks that keep state and sequence consistent), then removes the segments it
   * makes unnecessary.
   */
  public void checkpoint(long seq, List<JournalEntry> entries) throws IOException {
    awaitFlushed(seq);
    Files.createDirectories(checkpointsDir);
    Path tmp = checkpointsDir.resolve(seq + ".ckpt.tmp");
    List<JournalEntryProto> protos = new ArrayList<>(entries.size());
    for (JournalEntry e : entries) {
      protos.add(JournalCodec.toProto(0, e));
    }
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer buf = RecordFile.encode(protos);
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      ch.force(true);
    }
    Files.move(tmp, checkpointsDir.resolve(seq + ".ckpt"), StandardCopyOption.ATOMIC_MOVE);
    syncDir(checkpointsDir);
    // Start a new segment so that every older one ends at or before seq, then drop them. Entries up to
    // seq are flushed already, so once any rotation after this request is done, they are all in closed
    // segments.
    awaitRotation();
    TreeMap<Long, Path> segments = numbered(segmentsDir, ".log");
    List<Long> starts = new ArrayList<>(segments.keySet());
    for (int i = 0; i + 1 < starts.size(); i++) {
      if (starts.get(i + 1) - 1 <= seq) {
        Files.deleteIfExists(segments.get(starts.get(i)));
      }
    }
    for (Path old : numbered(checkpointsDir, ".ckpt").headMap(seq, false).values()) {
      Files.deleteIfExists(old);
    }
    LOG.info("Checkpoint at sequence {} written ({} entries); older segments removed", seq, entries.size());
  }

  private void awaitRotation() throws UnavailableException {
    synchronized (this) {
      if (writer == null) {
        throw new IllegalStateException("The journal at " + dir + " is not writing (call startWriting first)");
      }
      long target = rotations + 1;
      rotateRequested = true;
      notifyAll();
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

  private static void syncDir(Path d) {
    try (FileChannel ch = FileChannel.open(d, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      // Some file systems cannot fsync a directory; the data files themselves are synced.
      LOG.debug("Cannot fsync dir {}: {}", d, e.toString());
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
    if (w != null) {
      try {
        w.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    synchronized (this) {
      writer = null;
      notifyAll();
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
