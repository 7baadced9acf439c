package io.strata.master.journal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.proto.journal.JournalEntryProto;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal on a real directory: append and replay, group commit, torn tails cut, corruption in the
 * middle refused, checkpoints and segment removal, format. Each journal a test opens is closed after it.
 */
class JournalTest {
  private static final long SEGMENT_MAX = 1 << 20;

  @TempDir
  Path dir;
  private final List<Journal> opened = new ArrayList<>();

  @AfterEach
  void closeAll() {
    opened.forEach(Journal::close);
  }

  /** A journal over {@code dir} that has replayed (into {@code into}) and writes. */
  private Journal openWriting(List<JournalEntry> into) throws IOException {
    Journal j = new Journal(dir, SEGMENT_MAX);
    opened.add(j);
    j.replay(into::add);
    j.startWriting();
    return j;
  }

  private Journal openWriting() throws IOException {
    return openWriting(new ArrayList<>());
  }

  /** Everything a fresh journal instance replays from {@code dir}. */
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

  /** Appends entries from..to, waits until they are durable, and closes the journal. */
  private void writeAndClose(long from, long to) throws IOException {
    Journal j = openWriting();
    for (JournalEntry e : entries(from, to)) {
      j.append(e);
    }
    j.flush();
    j.close();
  }

  private List<Path> segmentFiles() throws IOException {
    try (Stream<Path> s = Files.list(dir.resolve("segments"))) {
      return s.sorted().collect(Collectors.toList());
    }
  }

  /** The newest segment that holds anything (opening a journal to write starts an empty one). */
  private Path newestNonEmptySegment() throws IOException {
    List<Path> segs = segmentFiles();
    Collections.reverse(segs);
    for (Path p : segs) {
      if (Files.size(p) > 0) {
        return p;
      }
    }
    throw new AssertionError("no segment holds entries");
  }

  private static void flipByte(Path file, long offset) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, offset);
      b.flip();
      byte v = b.get();
      ch.write(ByteBuffer.wrap(new byte[] {(byte) (v ^ 0x5A)}), offset);
    }
  }

  private static void truncate(Path file, long size) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.truncate(size);
    }
  }

  private static List<Long> recordOffsets(Path segment) throws IOException {
    return RecordFile.scan(segment).offsets();
  }

  // ------------------------------------------------------------------ append and replay

  @Test
  void appendedAndFlushedEntries_replayInOrder_intoAFreshJournal() throws Exception {
    writeAndClose(1, 25);

    List<JournalEntry> replayed = new ArrayList<>();
    long last = new Journal(dir, SEGMENT_MAX).replay(replayed::add);

    assertThat(replayed).containsExactlyElementsOf(entries(1, 25));
    assertThat(last).isEqualTo(25);
  }

  @Test
  void awaitFlushed_returnsOnlyOnceTheEntryIsInTheFile_asASecondInstanceReplaysIt() throws Exception {
    Journal j = openWriting();
    j.append(entry(1));
    j.append(entry(2));
    j.awaitFlushed(j.appendedSequence());

    // The writer is still open: only what is in the file can be seen.
    assertThat(replayFresh()).containsExactly(entry(1), entry(2));
    assertThat(j.appendedSequence()).isEqualTo(2);
  }

  /**
   * A brief wait never writes on the caller's thread: the background writer, woken, makes the entries durable (a
   * second instance replays them); a closed journal answers false at once instead of waiting.
   */
  @Test
  void awaitFlushedBriefly_isAnsweredByTheBackgroundWriter_andFalseOnceTheJournalCannotBeWritten() throws Exception {
    Journal j = openWriting();
    j.append(entry(1));
    assertThat(j.awaitFlushedBriefly(j.appendedSequence(), 10_000)).isTrue();
    assertThat(j.backgroundBatchesWritten()).as("written by the background writer").isEqualTo(1);
    assertThat(replayFresh()).containsExactly(entry(1));
    assertThat(j.awaitFlushedBriefly(j.appendedSequence(), 1)).as("nothing new: at once").isTrue();
    j.close();
    long start = System.nanoTime();
    assertThat(j.awaitFlushedBriefly(j.appendedSequence() + 1, 10_000)).as("closed").isFalse();
    assertThat(System.nanoTime() - start).as("without waiting out the time").isLessThan(5_000_000_000L);
  }

  @Test
  void reopenedJournal_continuesTheSequence_andReplaysBothRuns() throws Exception {
    writeAndClose(1, 3);
    List<JournalEntry> first = new ArrayList<>();
    Journal j = openWriting(first);
    assertThat(first).containsExactlyElementsOf(entries(1, 3));
    assertThat(j.appendedSequence()).isEqualTo(3);
    j.append(entry(4));
    j.flush();
    j.close();

    assertThat(replayFresh()).containsExactlyElementsOf(entries(1, 4));
  }

  @Test
  void flush_writesOnTheCallersThread_withoutWaitingForTheBackgroundWriter() throws Exception {
    Journal j = openWriting();
    for (int i = 1; i <= 200; i++) {
      j.append(entry(i));
      j.flush();
    }
    // Each flush wrote its own entry (the background writer wakes every 20 ms and may take one now and
    // then); before, every flush waited for a writer thread to wake, write and wake it in turn.
    assertThat(j.batchesWritten()).isEqualTo(200);
    assertThat(j.backgroundBatchesWritten()).isLessThan(20);
    j.close();
    assertThat(replayFresh()).containsExactlyElementsOf(entries(1, 200));
  }

  @Test
  void entriesNobodyWaitsFor_areWrittenByTheBackgroundWriter() throws Exception {
    Journal j = openWriting();
    j.append(entry(1));
    j.append(entry(2));
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .until(() -> j.backgroundBatchesWritten() >= 1 && j.batchesWritten() >= 1);
    // On disk without any flush call: a fresh reader sees both.
    assertThat(new Journal(dir, SEGMENT_MAX).replayReadOnly(e -> { })).isEqualTo(2);
  }

  @Test
  void concurrentAppenders_allReplay_withContiguousSequences_inFewerBatchesThanEntries() throws Exception {
    int threads = 8;
    int perThread = 500;
    Journal j = openWriting();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      long base = (t + 1) * 10_000L;
      done.add(pool.submit(() -> {
        go.await();
        for (int i = 0; i < perThread; i++) {
          j.append(entry(base + i));
          j.flush(); // as an RPC does before it answers
        }
        return null;
      }));
    }
    go.countDown();
    for (Future<?> f : done) {
      f.get(60, TimeUnit.SECONDS);
    }
    pool.shutdown();
    long batches = j.batchesWritten();
    j.close();

    int total = threads * perThread;
    List<Long> sequences = new ArrayList<>();
    for (Path seg : segmentFiles()) {
      for (JournalEntryProto p : RecordFile.scan(seg).entries()) {
        sequences.add(p.getSequence());
      }
    }
    List<Long> expected = new ArrayList<>();
    for (long s = 1; s <= total; s++) {
      expected.add(s);
    }
    assertThat(sequences).containsExactlyElementsOf(expected);

    List<JournalEntry> replayed = replayFresh();
    assertThat(replayed).hasSize(total);
    for (int t = 0; t < threads; t++) {
      long base = (t + 1) * 10_000L;
      // Each thread's entries are all there, in the order that thread appended them.
      List<JournalEntry> mine = replayed.stream()
          .filter(e -> ((JournalEntry.Mkdir) e).id() / 10_000 == base / 10_000)
          .collect(Collectors.toList());
      assertThat(mine).containsExactlyElementsOf(entries(base, base + perThread - 1));
    }
    assertThat(batches).isPositive().isLessThan(total);
  }

  // ------------------------------------------------------------------ operations of several entries

  @Test
  void operationOfSeveralEntries_replaysWhole() throws Exception {
    Journal j = openWriting();
    j.append(entry(1));
    j.append(List.of(entry(2), entry(3), entry(4)));
    j.flush();
    j.close();

    assertThat(replayFresh()).containsExactlyElementsOf(entries(1, 4));
    List<JournalEntryProto> protos = RecordFile.scan(newestNonEmptySegment()).entries();
    assertThat(protos).extracting(JournalEntryProto::getContinues).containsExactly(false, true, true, false);
  }

  @Test
  void operationWhoseLastEntryIsTorn_isDroppedWhole_andTheFileCutBeforeIt() throws Exception {
    Journal j = openWriting();
    j.append(entry(1));
    j.append(List.of(entry(2), entry(3), entry(4)));
    j.flush();
    j.close();
    Path seg = newestNonEmptySegment();
    List<Long> offsets = recordOffsets(seg);
    truncate(seg, Files.size(seg) - 2); // the third entry of the operation is cut short

    assertThat(replayFresh()).containsExactly(entry(1));
    assertThat(Files.size(seg)).isEqualTo(offsets.get(1));

    // The dropped sequences are handed out again, and the journal replays on.
    List<JournalEntry> seen = new ArrayList<>();
    Journal again = openWriting(seen);
    assertThat(seen).containsExactly(entry(1));
    assertThat(again.appendedSequence()).isEqualTo(1);
    again.append(entry(5));
    again.flush();
    again.close();
    assertThat(replayFresh()).containsExactly(entry(1), entry(5));
  }

  // ------------------------------------------------------------------ torn tails

  /** Writes 1..10, damages the newest segment's tail, and checks 1..9 replay, the cut, and appending on. */
  private void assertTornLastRecordIsCut(TailDamage damage) throws Exception {
    writeAndClose(1, 10);
    Path seg = newestNonEmptySegment();
    List<Long> offsets = recordOffsets(seg);
    long lastRecord = offsets.get(9);
    long wholeEnd = Files.size(seg);
    damage.apply(seg, lastRecord, wholeEnd);

    List<JournalEntry> replayed = new ArrayList<>();
    long last = new Journal(dir, SEGMENT_MAX).replay(replayed::add);

    assertThat(replayed).containsExactlyElementsOf(entries(1, damage.keepsLast() ? 10 : 9));
    assertThat(last).isEqualTo(damage.keepsLast() ? 10 : 9);
    assertThat(Files.size(seg)).isEqualTo(damage.keepsLast() ? wholeEnd : lastRecord);

    Journal j = openWriting();
    assertThat(j.appendedSequence()).isEqualTo(last);
    j.append(entry(100));
    j.append(entry(101));
    j.flush();
    j.close();
    List<JournalEntry> expected = entries(1, last);
    expected.add(entry(100));
    expected.add(entry(101));
    assertThat(replayFresh()).containsExactlyElementsOf(expected);
  }

  private interface TailDamage {
    void apply(Path segment, long lastRecordOffset, long end) throws IOException;

    /** The damage is after the last whole record, which therefore survives. */
    default boolean keepsLast() {
      return false;
    }
  }

  @Test
  void tornTail_lastBytesChoppedOff_isCutAtTheLastWholeRecord() throws Exception {
    assertTornLastRecordIsCut((seg, lastRecord, end) -> truncate(seg, end - 3));
  }

  @Test
  void tornTail_onlyPartOfTheLastHeaderWritten_isCutAtTheLastWholeRecord() throws Exception {
    assertTornLastRecordIsCut((seg, lastRecord, end) -> truncate(seg, lastRecord + 5));
  }

  @Test
  void tornTail_byteFlippedInTheLastRecordsPayload_isCutBeforeThatRecord() throws Exception {
    assertTornLastRecordIsCut((seg, lastRecord, end) -> flipByte(seg, lastRecord + RecordFile.HEADER + 2));
  }

  @Test
  void tornTail_garbageAppended_isCutAtTheEndOfTheLastWholeRecord() throws Exception {
    assertTornLastRecordIsCut(new TailDamage() {
      @Override
      public void apply(Path seg, long lastRecord, long end) throws IOException {
        byte[] garbage = new byte[200];
        new Random(42).nextBytes(garbage);
        Files.write(seg, garbage, StandardOpenOption.APPEND);
        assertThat(Files.size(seg)).isEqualTo(end + 200);
      }

      @Override
      public boolean keepsLast() {
        return true;
      }
    });
  }

  @Test
  void tornTail_zeroFilledAfterACrash_isCutAtTheEndOfTheLastWholeRecord() throws Exception {
    assertTornLastRecordIsCut(new TailDamage() {
      @Override
      public void apply(Path seg, long lastRecord, long end) throws IOException {
        Files.write(seg, new byte[4096], StandardOpenOption.APPEND);
      }

      @Override
      public boolean keepsLast() {
        return true;
      }
    });
  }

  @Test
  void tornTail_lastRecordDamagedAndGarbageAfterIt_isCutBeforeThatRecord() throws Exception {
    assertTornLastRecordIsCut((seg, lastRecord, end) -> {
      flipByte(seg, lastRecord + RecordFile.HEADER + 1);
      byte[] garbage = new byte[37];
      new Random(7).nextBytes(garbage);
      Files.write(seg, garbage, StandardOpenOption.APPEND);
    });
  }

  // ------------------------------------------------------------------ corruption in the middle

  @Test
  void byteFlippedInAnEarlierRecordsPayload_stopsReplay_namingTheFile_andLeavesItAlone() throws Exception {
    writeAndClose(1, 10);
    Path seg = newestNonEmptySegment();
    long third = recordOffsets(seg).get(2);
    flipByte(seg, third + RecordFile.HEADER + 2);
    long size = Files.size(seg);
    List<JournalEntry> replayed = new ArrayList<>();

    assertThatThrownBy(() -> new Journal(dir, SEGMENT_MAX).replay(replayed::add))
        .isInstanceOf(CorruptJournalException.class)
        .hasMessageContaining(seg.toString())
        .hasMessageContaining("offset " + third)
        .hasMessageContaining("corrupt in the middle");
    assertThat(Files.size(seg)).as("nothing is cut").isEqualTo(size);
    assertThat(replayed).as("nothing is applied before the damage is known").isEmpty();
  }

  @Test
  void damagedLengthOfAnEarlierRecord_stopsReplay_asCorruptInTheMiddle() throws Exception {
    writeAndClose(1, 10);
    Path seg = newestNonEmptySegment();
    long fourth = recordOffsets(seg).get(3);
    try (FileChannel ch = FileChannel.open(seg, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(4).putInt(0, 0x7fff_0000), fourth);
    }

    assertThatThrownBy(this::replayFresh)
        .isInstanceOf(CorruptJournalException.class)
        .hasMessageContaining(seg.toString())
        .hasMessageContaining("corrupt in the middle");
  }

  @Test
  void tornSegmentThatIsNotTheNewest_stopsReplay() throws Exception {
    writeAndClose(1, 5);
    Path first = newestNonEmptySegment();
    writeAndClose(6, 10); // the reopened journal writes a second segment
    Path second = newestNonEmptySegment();
    assertThat(second).isNotEqualTo(first);
    truncate(first, Files.size(first) - 3);

    assertThatThrownBy(this::replayFresh)
        .isInstanceOf(CorruptJournalException.class)
        .hasMessageContaining(first.toString())
        .hasMessageContaining("not the newest segment");
  }

  @Test
  void missingEntriesBetweenSegments_stopReplay() throws Exception {
    writeAndClose(1, 5);
    Path first = newestNonEmptySegment();
    writeAndClose(6, 10);
    Path second = newestNonEmptySegment();
    Files.delete(first);

    assertThatThrownBy(this::replayFresh)
        .isInstanceOf(CorruptJournalException.class)
        .hasMessageContaining(second.toString())
        .hasMessageContaining("entry 6 follows entry 0");
  }

  // ------------------------------------------------------------------ checkpoints

  @Test
  void checkpoint_replaysItsEntries_thenOnlyLaterOnes_andRemovesOlderSegments() throws Exception {
    Journal j = openWriting();
    for (JournalEntry e : entries(1, 10)) {
      j.append(e);
    }
    j.flush();
    List<JournalEntry> state = List.of(entry(500), entry(501));
    j.checkpoint(10, state);
    j.append(entry(11));
    j.append(entry(12));
    j.flush();
    j.close();

    assertThat(segmentFiles()).extracting(p -> p.getFileName().toString())
        .containsExactly(String.format("%020d.log", 11));
    assertThat(Files.exists(dir.resolve("checkpoints/10.ckpt"))).isTrue();

    List<JournalEntry> replayed = new ArrayList<>();
    long last = new Journal(dir, SEGMENT_MAX).replay(replayed::add);
    assertThat(replayed).containsExactly(entry(500), entry(501), entry(11), entry(12));
    assertThat(last).isEqualTo(12);
  }

  @Test
  void aBatchPastOneMegabyte_isStreamed_andReplaysWhole() throws Exception {
    Journal j = openWriting();
    List<JournalEntry> big = new ArrayList<>();
    for (long i = 1; i <= 600; i++) {
      big.add(new JournalEntry.Mkdir(i, "/d" + i + "x".repeat(2000), 0755, 1_000 + i));
    }
    j.append(big); // one operation, one batch of about 1.2 MB: past RecordFile.WRITE_BUFFER
    j.flush();
    j.close();
    assertThat(Files.size(newestNonEmptySegment())).isGreaterThan(RecordFile.WRITE_BUFFER);
    assertThat(replayFresh()).containsExactlyElementsOf(big);
  }

  @Test
  void streamedRecords_throughABufferSmallerThanSomeRecords_scanBackWhole_inOrder_atTheOffsetsWritten()
      throws Exception {
    // A checkpoint streams its records through a bounded buffer (RecordFile.write); here the buffer is 64 bytes, so
    // most writes flush it part-full and the entries with long paths (bigger than the buffer) go on their own.
    List<JournalEntryProto> protos = new ArrayList<>();
    for (long i = 1; i <= 300; i++) {
      String name = "/d" + i + (i % 7 == 0 ? "x".repeat((int) (100 + i)) : "");
      protos.add(JournalCodec.toProto(i, new JournalEntry.Mkdir(i, name, 0755, 1_000 + i)));
    }
    Path file = dir.resolve("streamed.ckpt");
    long written;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      written = RecordFile.write(ch, protos, 64);
    }
    assertThat(written).isEqualTo(Files.size(file));
    RecordFile.Scan scan = RecordFile.scan(file);
    assertThat(scan.tornAt()).isEqualTo(-1);
    assertThat(scan.entries()).containsExactlyElementsOf(protos);
    ByteBuffer whole = RecordFile.encode(protos);
    assertThat(written).as("the same bytes as one encoded buffer").isEqualTo(whole.remaining());
    byte[] expected = new byte[whole.remaining()];
    whole.get(expected);
    assertThat(Files.readAllBytes(file)).isEqualTo(expected);
  }

  @Test
  void checkpoint_whileASegmentHoldsLaterEntries_keepsThatSegment_andSkipsTheCoveredEntries() throws Exception {
    Journal j = openWriting();
    for (JournalEntry e : entries(1, 10)) {
      j.append(e);
    }
    j.flush();
    // Entries 9 and 10 are durable but not in the checkpoint at 8: their segment must stay.
    j.checkpoint(8, List.of(entry(800)));
    j.close();

    assertThat(segmentFiles()).extracting(p -> p.getFileName().toString())
        .contains(String.format("%020d.log", 1));
    assertThat(replayFresh()).containsExactly(entry(800), entry(9), entry(10));
  }

  @Test
  void newerCheckpoint_replacesTheOlder_andALeftoverTempCheckpointIsIgnored() throws Exception {
    Journal j = openWriting();
    j.append(entry(1));
    j.flush();
    j.checkpoint(1, List.of(entry(100)));
    j.append(entry(2));
    j.flush();
    j.checkpoint(2, List.of(entry(200)));
    j.append(entry(3));
    j.flush();
    j.close();
    // A checkpoint being written when the master died: never renamed, possibly half written.
    Files.write(dir.resolve("checkpoints/3.ckpt.tmp"), new byte[] {0, 0, 0, 9, 1, 2});

    try (Stream<Path> s = Files.list(dir.resolve("checkpoints"))) {
      assertThat(s.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("2.ckpt", "3.ckpt.tmp");
    }
    assertThat(replayFresh()).containsExactly(entry(200), entry(3));
  }

  @Test
  void damagedCheckpoint_stopsReplay() throws Exception {
    Journal j = openWriting();
    j.append(entry(1));
    j.flush();
    j.checkpoint(1, List.of(entry(100), entry(101)));
    j.close();
    Path ckpt = dir.resolve("checkpoints/1.ckpt");
    truncate(ckpt, Files.size(ckpt) - 1);

    assertThatThrownBy(this::replayFresh)
        .isInstanceOf(CorruptJournalException.class)
        .hasMessageContaining(ckpt.toString())
        .hasMessageContaining("damaged");
  }

  // ------------------------------------------------------------------ format

  @Test
  void format_refusesAJournalWithEntries_withoutForce_andKeepsThem() throws Exception {
    writeAndClose(1, 3);

    assertThatThrownBy(() -> Journal.format(dir, false))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("--force")
        .hasMessageContaining(dir.toString());
    assertThat(replayFresh()).containsExactlyElementsOf(entries(1, 3));
  }

  @Test
  void format_withForce_wipesTheJournal() throws Exception {
    Journal j = openWriting();
    j.append(entry(1));
    j.flush();
    j.checkpoint(1, List.of(entry(100)));
    j.append(entry(2));
    j.flush();
    j.close();

    Journal.format(dir, true);

    assertThat(Journal.hasContent(dir)).isFalse();
    assertThat(Files.readString(dir.resolve("VERSION"))).isEqualTo(JournalFiles.VERSION);
    assertThat(replayFresh()).isEmpty();
  }

  @Test
  void format_ofAnEmptyDir_initialisesIt() throws Exception {
    Path fresh = dir.resolve("new-journal");

    Journal.format(fresh, false);

    assertThat(Files.readString(fresh.resolve("VERSION"))).isEqualTo(JournalFiles.VERSION);
    assertThat(Files.isDirectory(fresh.resolve("segments"))).isTrue();
    assertThat(Journal.hasContent(fresh)).isFalse();
  }

  @Test
  void dirWithSegmentsButNoVersion_isRefused() throws Exception {
    writeAndClose(1, 3);
    Files.delete(dir.resolve("VERSION"));

    assertThatThrownBy(this::replayFresh)
        .isInstanceOf(CorruptJournalException.class)
        .hasMessageContaining("no VERSION");
    assertThat(Files.exists(dir.resolve("VERSION"))).as("not formatted over").isFalse();
  }

  @Test
  void versionFromAnotherFormat_isRefused() throws Exception {
    writeAndClose(1, 1);
    Files.writeString(dir.resolve("VERSION"), "strata-journal 99\n");

    assertThatThrownBy(this::replayFresh)
        .isInstanceOf(CorruptJournalException.class)
        .hasMessageContaining("strata-journal 99");
  }
}
