package io.strata.master.journal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.UnavailableException;
import io.strata.proto.journal.JournalEntryProto;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two or three {@link Journal}s on one shared dir, as HA masters use it: a leader writes, a standby tails,
 * a new leader takes over and claims the next epoch, which fences the old one. Checks that the deposed
 * writer can no longer acknowledge anything, that replay keeps exactly what each leader wrote while it
 * led, that tailing is incremental and never applies part of an operation, and that a standby left
 * behind by a checkpoint is told to reload.
 */
class JournalFencingTest {
  private static final long SEGMENT_MAX = 1 << 20;

  @TempDir
  Path dir;
  private final List<Journal> opened = new ArrayList<>();

  @AfterEach
  void closeAll() {
    opened.forEach(Journal::close);
  }

  private Journal journal() {
    Journal j = new Journal(dir, SEGMENT_MAX);
    opened.add(j);
    return j;
  }

  /** The first leader: recovers (cutting torn tails) and writes as epoch 1. */
  private Journal firstLeader() throws IOException {
    Journal j = journal();
    j.replay(e -> {});
    j.startWriting();
    return j;
  }

  /** A standby: loads what is there without changing any file. */
  private Journal standby(List<JournalEntry> into) throws IOException {
    Journal j = journal();
    j.replayReadOnly(into::add);
    return j;
  }

  private List<JournalEntry> replayFresh() throws IOException {
    List<JournalEntry> out = new ArrayList<>();
    new Journal(dir, SEGMENT_MAX).replay(out::add);
    return out;
  }

  private static JournalEntry entry(long i) {
    return new JournalEntry.Mkdir(i, "/d" + i, 0755, 1_000 + i);
  }

  private static List<JournalEntry> entries(long from, long to) {
    List<JournalEntry> out = new ArrayList<>();
    for (long i = from; i <= to; i++) {
      out.add(entry(i));
    }
    return out;
  }

  private static void appendAll(Journal j, List<JournalEntry> es) throws UnavailableException {
    for (JournalEntry e : es) {
      j.append(e);
    }
    j.flush();
  }

  private static List<JournalEntry> concat(List<JournalEntry> a, List<JournalEntry> b) {
    List<JournalEntry> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }

  private List<Path> segmentFiles() throws IOException {
    try (Stream<Path> s = Files.list(dir.resolve("segments"))) {
      return s.sorted().collect(Collectors.toList());
    }
  }

  private static void appendBytes(Path file, ByteBuffer bytes) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
      while (bytes.hasRemaining()) {
        ch.write(bytes);
      }
    }
  }

  // ------------------------------------------------------------------ fencing

  @Test
  void newLeadersClaim_fencesTheOldWriter_andReplayKeepsTheOldEntriesBeforeTheClaimThenTheNewOnes()
      throws Exception {
    Journal a = firstLeader();
    assertThat(a.epoch()).isEqualTo(1);
    appendAll(a, entries(1, 3));

    List<JournalEntry> seenByB = new ArrayList<>();
    Journal b = standby(seenByB);
    assertThat(seenByB).containsExactlyElementsOf(entries(1, 3));
    appendAll(a, entries(4, 5)); // written after B loaded: its take-over must apply them

    assertThat(b.takeOver(seenByB::add)).isEqualTo(5);
    assertThat(seenByB).containsExactlyElementsOf(entries(1, 5));
    b.startWriting();
    assertThat(b.epoch()).isEqualTo(2);

    a.append(entry(6));
    assertThatThrownBy(() -> a.awaitFlushed(6))
        .isInstanceOf(UnavailableException.class)
        .hasMessageContaining("another master took over");
    // Once deposed, the old writer refuses everything after, too.
    a.append(entry(7));
    assertThatThrownBy(a::flush).isInstanceOf(UnavailableException.class);

    List<JournalEntry> fromB = List.of(entry(101), entry(102), entry(103));
    appendAll(b, fromB);
    assertThat(b.appendedSequence()).isEqualTo(8);

    assertThat(replayFresh()).containsExactlyElementsOf(concat(entries(1, 5), fromB));
    assertThat(Files.readString(dir.resolve("EPOCHS"), StandardCharsets.UTF_8)).isEqualTo("1 1\n2 6\n");
  }

  @Test
  void oldLeadersWrite_afterTheNewLeaderCaughtUp_butBeforeItWrites_isRefused_soNoAcknowledgedEntryIsVoided()
      throws Exception {
    Journal a = firstLeader();
    appendAll(a, entries(1, 5));
    Journal b = standby(new ArrayList<>());
    assertThat(b.takeOver(e -> {})).isEqualTo(5);

    // The old leader is still running between the new one's catch-up and its first write. Were entry 6
    // acknowledged now, the new leader (which never read it) would start its epoch at 6 and void it.
    a.append(entry(6));
    assertThatThrownBy(() -> a.awaitFlushed(6))
        .isInstanceOf(UnavailableException.class)
        .hasMessageContaining("another master took over");

    b.startWriting();
    appendAll(b, List.of(entry(106)));
    assertThat(replayFresh()).containsExactlyElementsOf(concat(entries(1, 5), List.of(entry(106))));
  }

  @Test
  void entryTheOldLeaderWroteAfterTheClaim_isVoid_onReplayAndForAStandbyTailingThroughTheTakeOver()
      throws Exception {
    Journal a = firstLeader();
    appendAll(a, entries(1, 5));
    Path oldSegment = segmentFiles().get(0);
    List<JournalEntry> seenByC = new ArrayList<>();
    Journal c = standby(seenByC);

    Journal b = standby(new ArrayList<>());
    b.takeOver(e -> {});
    b.startWriting();
    // The race fencing must survive: the old leader checked its epoch just before the claim, and its write
    // (epoch 1, sequence 6) lands after it, in its own segment.
    appendBytes(oldSegment, RecordFile.encode(List.of(stamped(6, entry(6), 1))));
    appendAll(b, List.of(entry(106), entry(107)));
    assertThat(segmentFiles()).hasSize(2);

    List<JournalEntry> expected = concat(entries(1, 5), List.of(entry(106), entry(107)));
    assertThat(replayFresh()).containsExactlyElementsOf(expected);
    assertThat(c.tail(seenByC::add)).isEqualTo(7);
    assertThat(seenByC).containsExactlyElementsOf(expected);
  }

  /**
   * The race a standby must survive: the new leader fenced and caught up, and the old one (which checked its epoch
   * just before the fence) wrote one more entry, which the new leader's claim will void. A standby tailing between
   * the fence and the claim must not apply it: it would then skip the new leader's entry of the same sequence and
   * hold another namespace than the leader's.
   */
  @Test
  void entryTheOldLeaderWroteBetweenTheFenceAndTheClaim_isNotAppliedByAStandbyTailingThen() throws Exception {
    Journal a = firstLeader();
    appendAll(a, entries(1, 5));
    Path oldSegment = segmentFiles().get(0);
    List<JournalEntry> seenByC = new ArrayList<>();
    Journal c = standby(seenByC);

    Journal b = standby(new ArrayList<>());
    assertThat(b.takeOver(e -> {})).isEqualTo(5); // fenced: epoch 2 reserved, not yet claimed
    appendBytes(oldSegment, RecordFile.encode(List.of(stamped(6, entry(6), 1))));
    assertThat(c.tail(seenByC::add)).as("the old leader's entry waits for the claim").isEqualTo(5);

    b.startWriting(); // claims epoch 2 from sequence 6: the old entry 6 is void
    appendAll(b, List.of(entry(106), entry(107)));
    List<JournalEntry> expected = concat(entries(1, 5), List.of(entry(106), entry(107)));
    assertThat(c.tail(seenByC::add)).isEqualTo(7);
    assertThat(seenByC).containsExactlyElementsOf(expected);
    assertThat(replayFresh()).containsExactlyElementsOf(expected);
  }

  @Test
  void takeOverThatNeverStartedWriting_voidsNothing_andTheNextLeaderClaimsALaterEpoch() throws Exception {
    Journal a = firstLeader();
    appendAll(a, entries(1, 5));
    Journal b = standby(new ArrayList<>());
    b.takeOver(e -> {});
    b.close(); // won the election, fenced the old leader, and died before its first write

    a.append(entry(6));
    assertThatThrownBy(a::flush).isInstanceOf(UnavailableException.class);

    List<JournalEntry> seenByC = new ArrayList<>();
    Journal c = standby(seenByC);
    c.takeOver(seenByC::add);
    c.startWriting();
    assertThat(c.epoch()).isEqualTo(3);
    appendAll(c, List.of(entry(206)));

    assertThat(seenByC).containsExactlyElementsOf(entries(1, 5));
    assertThat(replayFresh()).containsExactlyElementsOf(concat(entries(1, 5), List.of(entry(206))));
  }

  @Test
  void mastersFencingAtOnce_eachReserveAnEpochOfTheirOwn_andEveryReservationStaysInEpochs() throws Exception {
    // Each thread is a master of its own (its own JournalEpochs) fencing the shared dir again and again.
    int masters = 4;
    int rounds = 25;
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(masters);
    java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(masters);
    List<java.util.concurrent.Future<List<Long>>> reserved = new ArrayList<>();
    try {
      for (int m = 0; m < masters; m++) {
        reserved.add(pool.submit(() -> {
          start.await(10, java.util.concurrent.TimeUnit.SECONDS);
          List<Long> mine = new ArrayList<>();
          for (int r = 0; r < rounds; r++) {
            mine.add(new JournalEpochs(dir).fence());
          }
          return mine;
        }));
      }
      List<Long> all = new ArrayList<>();
      for (var f : reserved) {
        all.addAll(f.get(60, java.util.concurrent.TimeUnit.SECONDS));
      }
      assertThat(all).as("no two masters got the same epoch").doesNotHaveDuplicates().hasSize(masters * rounds);
      assertThat(new JournalEpochs(dir).read()).extracting(e -> e[0])
          .containsExactlyInAnyOrderElementsOf(all);
    } finally {
      pool.shutdownNow();
    }
  }

  // ------------------------------------------------------------------ tailing

  @Test
  void standbyTail_appliesWhatEachFlushAdded_incrementally() throws Exception {
    Journal w = firstLeader();
    List<JournalEntry> seen = new ArrayList<>();
    Journal s = standby(seen);
    assertThat(seen).isEmpty();

    long next = 1;
    for (int round = 1; round <= 4; round++) {
      List<JournalEntry> batch = entries(next, next + round - 1);
      appendAll(w, batch);
      next += round;
      int before = seen.size();
      assertThat(s.tail(seen::add)).isEqualTo(next - 1);
      assertThat(seen.subList(before, seen.size())).containsExactlyElementsOf(batch);
    }
    // Nothing new: a tail applies nothing again.
    assertThat(s.tail(seen::add)).isEqualTo(10);
    assertThat(seen).containsExactlyElementsOf(entries(1, 10));
  }

  /** Leader {@code w} writes entries 1 and 2; a standby loads them into {@code seen}. */
  private Journal standbyThatSawTwo(Journal w, List<JournalEntry> seen) throws IOException {
    appendAll(w, entries(1, 2));
    return standby(seen);
  }

  @Test
  void standbyTail_thatFailedPartWay_isNeverResumedFromItsOldPlace_soNothingIsAppliedTwice() throws Exception {
    Journal w = firstLeader();
    List<JournalEntry> seen = new ArrayList<>();
    Journal s = standbyThatSawTwo(w, seen);
    appendAll(w, entries(3, 6));

    // The state rejects entry 5 (a bug, or no memory left): 3 and 4 are applied, the catch-up throws.
    assertThatThrownBy(() -> s.tail(e -> {
      if (e.equals(entry(5))) {
        throw new IllegalStateException("cannot apply " + e);
      }
      seen.add(e);
    })).isInstanceOf(IllegalStateException.class);
    assertThat(seen).containsExactlyElementsOf(entries(1, 4));

    // Resuming after entry 2 would apply 3 and 4 again: the journal refuses, and the caller reloads.
    assertThatThrownBy(() -> s.tail(seen::add)).isInstanceOf(CorruptJournalException.class)
        .hasMessageContaining("failed part-way");
    assertThat(seen).containsExactlyElementsOf(entries(1, 4));
    List<JournalEntry> reloaded = new ArrayList<>();
    Journal again = standby(reloaded);
    assertThat(reloaded).containsExactlyElementsOf(entries(1, 6));
    appendAll(w, List.of(entry(7)));
    assertThat(again.tail(reloaded::add)).isEqualTo(7);
    assertThat(reloaded).containsExactlyElementsOf(entries(1, 7));
  }

  @Test
  void standbyTail_thatFailedBeforeApplyingAnything_simplyStartsThereAgain() throws Exception {
    Journal w = firstLeader();
    List<JournalEntry> seen = new ArrayList<>();
    Journal s = standbyThatSawTwo(w, seen);
    appendAll(w, entries(3, 4));
    // EPOCHS cannot be read for a moment (here: a directory in its place): the catch-up fails before it applies any.
    Path epochs = dir.resolve("EPOCHS");
    Path aside = dir.resolve("EPOCHS.aside");
    Files.move(epochs, aside);
    Files.createDirectory(epochs);
    assertThatThrownBy(() -> s.tail(seen::add)).isInstanceOf(IOException.class)
        .isNotInstanceOf(CorruptJournalException.class);
    assertThat(seen).containsExactlyElementsOf(entries(1, 2));
    Files.delete(epochs);
    Files.move(aside, epochs);
    assertThat(s.tail(seen::add)).isEqualTo(4);
    assertThat(seen).containsExactlyElementsOf(entries(1, 4));
  }

  @Test
  void standbyTail_neverAppliesPartOfAnOperation_whileItsLastEntriesAreNotOnDiskYet() throws Exception {
    Journal w = firstLeader();
    w.append(entry(1));
    w.append(List.of(entry(2), entry(3), entry(4))); // one operation
    w.flush();
    w.close();
    Path seg = segmentFiles().get(0);
    byte[] whole = Files.readAllBytes(seg);
    List<Long> offsets = RecordFile.scan(seg).offsets();
    assertThat(offsets).hasSize(4);

    // The standby sees the writer's batch while it is being written: first up to the operation's second
    // entry, then up to the middle of its last record, then whole.
    Files.write(seg, Arrays.copyOf(whole, offsets.get(2).intValue()));
    List<JournalEntry> seen = new ArrayList<>();
    Journal s = standby(seen);
    assertThat(seen).containsExactly(entry(1));

    int midLast = offsets.get(3).intValue() + RecordFile.HEADER + 2;
    appendBytes(seg, ByteBuffer.wrap(whole, offsets.get(2).intValue(), midLast - offsets.get(2).intValue()));
    assertThat(s.tail(seen::add)).isEqualTo(1);
    assertThat(seen).containsExactly(entry(1));
    assertThat(Files.size(seg)).as("a standby never cuts the file").isEqualTo(midLast);

    appendBytes(seg, ByteBuffer.wrap(whole, midLast, whole.length - midLast));
    assertThat(s.tail(seen::add)).isEqualTo(4);
    assertThat(seen).containsExactly(entry(1), entry(2), entry(3), entry(4));
  }

  @Test
  void standbyBehindACheckpoint_thatRemovedItsSegments_isToldToReload_evenBeforeTheLeaderWritesAgain()
      throws Exception {
    Journal w = firstLeader();
    appendAll(w, entries(1, 5));
    List<JournalEntry> seen = new ArrayList<>();
    Journal s = standby(seen);
    assertThat(seen).hasSize(5);
    appendAll(w, entries(6, 10));
    w.checkpoint(10, List.of(entry(500), entry(501)));
    // Only the new, still empty segment is left: entries 6..10 exist only in the checkpoint.
    assertThat(segmentFiles()).extracting(p -> p.getFileName().toString())
        .containsExactly(String.format("%020d.log", 11));

    assertThatThrownBy(() -> s.tail(seen::add)).isInstanceOf(CorruptJournalException.class);
    assertThat(seen).containsExactlyElementsOf(entries(1, 5));

    appendAll(w, entries(11, 12));
    assertThatThrownBy(() -> s.tail(seen::add)).isInstanceOf(CorruptJournalException.class)
        .hasMessageContaining("missing");
    assertThat(seen).containsExactlyElementsOf(entries(1, 5));

    // What the master does then: load the journal again, from the checkpoint.
    List<JournalEntry> reloaded = new ArrayList<>();
    Journal again = standby(reloaded);
    assertThat(reloaded).containsExactly(entry(500), entry(501), entry(11), entry(12));
    appendAll(w, List.of(entry(13)));
    assertThat(again.tail(reloaded::add)).isEqualTo(13);
    assertThat(reloaded).endsWith(entry(12), entry(13));
  }

  @Test
  void standbyAhead_ofACheckpoint_keepsTailingWithoutAReload() throws Exception {
    Journal w = firstLeader();
    appendAll(w, entries(1, 10));
    List<JournalEntry> seen = new ArrayList<>();
    Journal s = standby(seen);
    w.checkpoint(10, List.of(entry(500)));
    assertThat(s.tail(seen::add)).isEqualTo(10);
    appendAll(w, entries(11, 12));
    assertThat(s.tail(seen::add)).isEqualTo(12);
    assertThat(seen).containsExactlyElementsOf(entries(1, 12));
  }

  /** A record as a writer of {@code epoch} stamps it. */
  private static JournalEntryProto stamped(long seq, JournalEntry e, long epoch) {
    return JournalCodec.toProto(seq, e, false).toBuilder().setEpoch(epoch).build();
  }
}
