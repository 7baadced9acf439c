package io.strata.master.journal;

import io.strata.proto.journal.JournalEntryProto;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the journal's segments: applies every whole operation after a sequence, in order, skipping
 * entries voided by a later epoch ({@link JournalEpochs}). A torn last record, or an operation whose last
 * entry never reached the disk, at the end of the newest segment is a crash's leftover: cut away (a
 * writing master's recovery) or left for a later read (a standby). Damage anywhere else stops the master
 * ({@link CorruptJournalException}).
 *
 * <p>Stateless; reads files only, except the cut.
 */
final class JournalReader {
  private static final Logger LOG = LoggerFactory.getLogger(JournalReader.class);

  private JournalReader() {}

  /**
   * Applies every valid whole operation after {@code seq} found in the segments, in order; returns the
   * last sequence applied. With {@code cut}, a torn tail or an operation cut short at the end of the
   * newest segment is truncated away; without it, both are left for a later call.
   */
  /** Reads the journal's epochs (EPOCHS) now. */
  @FunctionalInterface
  interface Epochs {
    List<long[]> read() throws IOException;
  }

  /**
   * As below, with the epochs read once. A standby ({@code cut} false) reads them again after each segment it
   * scans, so an entry an old leader wrote after a new one fenced it is judged with that fence in view, and an entry
   * a fence leaves undecided ({@link JournalEpochs#undecided}) is not applied until the claim is written.
   */
  static long applySegments(Path dir, Epochs epochs, long seq, Consumer<JournalEntry> applier, boolean cut)
      throws IOException {
    return applySegments(dir, epochs, null, seq, applier, cut);
  }

  static long applySegments(Path dir, List<long[]> epochs, long seq, Consumer<JournalEntry> applier, boolean cut)
      throws IOException {
    return applySegments(dir, null, epochs, seq, applier, cut);
  }

  private static long applySegments(Path dir, Epochs source, List<long[]> fixed, long seq,
      Consumer<JournalEntry> applier, boolean cut) throws IOException {
    List<long[]> epochs = fixed;
    TreeMap<Long, Path> segments = JournalFiles.numbered(JournalFiles.segmentsDir(dir), ".log");
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
      if (source != null) {
        epochs = source.read(); // after the scan: any fence that came before what was read is seen
      }
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
      boolean deferred = false;
      for (int i = 0; i < scan.entries().size(); i++) {
        JournalEntryProto p = scan.entries().get(i);
        if (p.getSequence() <= pending || !JournalEpochs.valid(p, epochs)) {
          continue; // already applied (or in the checkpoint), or written by a deposed leader
        }
        if (!cut && JournalEpochs.undecided(p, epochs)) {
          deferred = true; // a takeover is under way: the new leader's claim decides whether it counts
          break;
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
      if (deferred) {
        return applied; // the next call reads the epochs again (an operation begun is left whole for it)
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
}
