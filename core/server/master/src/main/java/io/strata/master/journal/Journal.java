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
 * ({@link CorruptJournalException}).
 *
 * <p>Thread-safe. The queue and sequence counters are guarded by this object's monitor; file I/O runs on
 * the writer thread outside it.
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
  private Thread writer;
  private FileChannel segment;

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
    Files.createDirectories(dir.resolve("segments"));
    Files.createDirectories(dir.resolve("checkpoints"));
    Files.writeString(dir.resolve("VERSION"), VERSION, StandardCharsets.UTF_8);
    LOG.info("Formatted the journal at {}", dir);
  }

  // ------------------------------------------------------------------ recovery

  /**
   * Replays the newest checkpoint and every later entry into {@code applier}; cuts a torn tail. A missing
   * or empty dir is formatted first. Returns the last sequence replayed.
   */
  public long replay(Consumer<JournalEntry> applier) throws IOException {
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
    TreeMap<Long, Path> segments = numbered(segmentsDir, ".log");
    int replayed = 0;
    Path last = segments.isEmpty() ? null : segments.lastEntry().getValue();
    for (Path seg : segments.values()) {
      RecordFile.Scan scan = RecordFile.scan(seg);
      for (JournalEntryProto p : scan.entries()) {
        if (p.getSequence() <= seq) {
          continue; // already in the checkpoint
        }
        if (p.getSequence() != seq + 1) {
          throw new CorruptJournalException(seg + ": entry " + p.getSequence() + " follows entry " + seq
              + "; entries are missing");
        }
        applier.accept(JournalCodec.fromProto(p));
        seq = p.getSequence();
        replayed++;
      }
      if (scan.tornAt() >= 0) {
        if (!seg.equals(last)) {
          throw new CorruptJournalException(seg + " is damaged at offset " + scan.tornAt()
              + " but is not the newest segment: the journal is corrupt in the middle");
        }
        LOG.warn("Cutting a torn last record in {} at offset {} (a write the master never acknowledged)", seg,
            scan.tornAt());
        try (FileChannel ch = FileChannel.open(seg, StandardOpenOption.WRITE)) {
          ch.truncate(scan.validEnd());
          ch.force(true);
        }
      }
    }
    LOG.info("Journal at {} replayed: {} entries after the checkpoint, last sequence {}", dir, replayed, seq);
    synchronized (this) {
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

  // ------------------------------------------------------------------ writing

  /** Opens a new segment after the last replayed entry and starts the writer thread. */
  public synchronized void startWriting() throws IOException {
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

  @Override
  public synchronized void append(JournalEntry entry) {
    long seq = ++appended;
    pending.add(JournalCodec.toProto(seq, entry));
    notifyAll();
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
          ByteBuffer buf = RecordFile.encode(batch);
          while (buf.hasRemaining()) {
            segment.write(buf);
          }
          segment.force(false);
        }
        long last = batch.isEmpty() ? -1 : batch.get(batch.size() - 1).getSequence();
        if (rotate || segment.size() >= segmentMaxBytes) {
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
          }
          notifyAll();
        }
      } catch (IOException e) {
        LOG.error("Writing the journal at {} failed; the master can no longer accept changes", dir, e);
        synchronized (this) {
          failure = e;
          notifyAll();
        }
        return;
      }
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
    // Start a new segment so that every older one ends at or before seq, then drop them.
    synchronized (this) {
      rotateRequested = true;
      notifyAll();
    }
    long waitFor = appendedSequence();
    awaitFlushed(waitFor);
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
