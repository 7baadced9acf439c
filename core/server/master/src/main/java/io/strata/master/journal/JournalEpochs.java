package io.strata.master.journal;

import io.strata.proto.journal.JournalEntryProto;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The journal's leadership epochs, in {@code EPOCHS}: one line {@code <epoch> <first sequence>} per master
 * that wrote, oldest first. They fence a deposed leader: an entry of epoch e with sequence s is void when
 * a later epoch starts at or before s, and a writer checks before and after each write that no later
 * epoch exists ({@link #deposed}). {@code EPOCHS} is replaced whole (temp file, fsync, atomic rename).
 *
 * <p>{@link #fence} and {@link #claim} read, change and replace {@code EPOCHS} holding an exclusive OS lock on
 * {@code EPOCHS.lock} in the journal dir (and, as the OS lock is per process, a monitor per dir in this JVM): two
 * masters taking over at once (one handling a stale leadership notice while the next one fences) each get an epoch
 * of their own, and neither loses the other's line. Lock order: the {@link Journal}'s monitor, then the dir's
 * monitor, then the OS lock; held only for the file's read and replacement.
 *
 * <p>Not thread-safe otherwise: the {@link Journal} calls {@link #fence} and {@link #claim} under its monitor before
 * its writer thread starts, and then only the writer thread calls {@link #deposed}.
 */
final class JournalEpochs {
  private static final Logger LOG = LoggerFactory.getLogger(JournalEpochs.class);

  /** The monitor of each journal dir (by real path) that this JVM's masters change {@code EPOCHS} under. */
  private static final java.util.concurrent.ConcurrentHashMap<Path, Object> CHANGING =
      new java.util.concurrent.ConcurrentHashMap<>();

  private final Path dir;
  /** This master's leadership epoch once it writes; 0 while it only reads. */
  private long epoch;
  /** Size of EPOCHS when this master claimed its epoch: a bigger file means someone took over. */
  private long epochsSizeAtClaim = -1;
  /** The epoch {@link #fence} reserved (0: none); {@link #claim} claims it. */
  private long fencedEpoch;

  JournalEpochs(Path dir) {
    this.dir = dir;
  }

  /** Whether this master reserved an epoch already. */
  boolean fenced() {
    return fencedEpoch != 0;
  }

  /**
   * The leadership epochs, oldest first: {epoch, first sequence}. A master that starts writing appends
   * its own line ({@code <epoch> <first sequence>}) to {@code EPOCHS}; an entry of epoch e with sequence s
   * is void when a later epoch starts at or before s (it was written by a deposed leader after its
   * successor had taken over). A master taking over first reserves its epoch with start
   * {@code Long.MAX_VALUE} (fencing without voiding anything) and sets the real start once caught up.
   */
  List<long[]> read() throws IOException {
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

  /**
   * True when {@code p} may yet be voided: a later epoch is fenced (reserved with no start) and not superseded by a
   * claim of a later one, so its start, which voids every entry of an earlier epoch from there on, is not known. A
   * standby does not apply such an entry until the claim (or a later one) is written; a leader's own catch-up,
   * which reads after its fence, does.
   */
  static boolean undecided(JournalEntryProto p, List<long[]> epochs) {
    for (long[] fence : epochs) {
      if (fence[1] == Long.MAX_VALUE && fence[0] > p.getEpoch() && !claimedAfter(fence[0], epochs)) {
        return true;
      }
    }
    return false;
  }

  private static boolean claimedAfter(long epoch, List<long[]> epochs) {
    for (long[] e : epochs) {
      if (e[0] > epoch && e[1] != Long.MAX_VALUE) {
        return true;
      }
    }
    return false;
  }

  /** True when {@code p} is not voided by a later epoch starting at or before its sequence. */
  static boolean valid(JournalEntryProto p, List<long[]> epochs) {
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
  long fence() throws IOException {
    changing(() -> {
      List<long[]> epochs = read();
      fencedEpoch = newestEpoch(epochs) + 1;
      epochs.add(new long[] {fencedEpoch, Long.MAX_VALUE});
      write(epochs);
    });
    LOG.info("Journal at {}: epoch {} reserved; the previous leader can no longer write", dir, fencedEpoch);
    return fencedEpoch;
  }

  private interface Change {
    void run() throws IOException;
  }

  /** Runs a read, change and replacement of {@code EPOCHS} as the only one, in this JVM and across processes. */
  private void changing(Change change) throws IOException {
    Files.createDirectories(dir);
    Object monitor = CHANGING.computeIfAbsent(dir.toRealPath(), k -> new Object());
    synchronized (monitor) {
      try (FileChannel ch = FileChannel.open(dir.resolve("EPOCHS.lock"), StandardOpenOption.CREATE,
          StandardOpenOption.WRITE); java.nio.channels.FileLock held = ch.lock()) {
        change.run();
      }
    }
  }

  /**
   * Claims this master's epoch (the one {@link #fence} reserved, else the next), starting at the
   * sequence after the last one replayed.
   */
  void claim(long firstSeq) throws IOException {
    changing(() -> {
      List<long[]> epochs = read();
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
      epochs.add(new long[] {epoch, firstSeq});
      write(epochs);
      epochsSizeAtClaim = Files.size(dir.resolve("EPOCHS"));
    });
    LOG.info("Journal at {}: this master writes as epoch {} from sequence {}", dir, epoch, firstSeq);
  }

  /** Replaces EPOCHS whole (temp file, fsync, atomic rename). */
  private void write(List<long[]> epochs) throws IOException {
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
    JournalFiles.syncDir(dir);
  }

  /** The epoch this master writes with (0 before it writes). */
  long epoch() {
    return epoch;
  }

  /** Fencing: true when a later master has claimed an epoch since this one did. */
  boolean deposed() throws IOException {
    Path f = dir.resolve("EPOCHS");
    // One stat per check (twice per journal write): a missing file is the rare case, taken by its exception.
    long size;
    try {
      size = Files.size(f);
    } catch (java.nio.file.NoSuchFileException e) {
      return false;
    }
    if (size == epochsSizeAtClaim) {
      return false;
    }
    for (long[] e : read()) {
      if (e[0] > epoch) {
        return true;
      }
    }
    return false;
  }

  IOException deposedError() {
    return new IOException("another master took over the journal (a later epoch than " + epoch + " is in "
        + dir.resolve("EPOCHS") + "); this master no longer writes");
  }
}
