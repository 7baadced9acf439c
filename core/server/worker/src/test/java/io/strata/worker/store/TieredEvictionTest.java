package io.strata.worker.store;

import static io.strata.worker.store.StoreFixture.blockFiles;
import static io.strata.worker.store.StoreFixture.content;
import static io.strata.worker.store.StoreFixture.read;
import static io.strata.worker.store.StoreFixture.readAll;
import static io.strata.worker.store.StoreFixture.tmpFiles;
import static io.strata.worker.store.StoreFixture.persisted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.InternalException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.worker.store.BlockStore.BlockMeta;
import io.strata.worker.store.BlockStore.ReadHandle;
import io.strata.worker.store.BlockStore.TempBlock;
import io.strata.worker.store.RecordingEvents.Moved;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Blocks of persisted files (evictable: {@link StoreFixture#persisted}) moving between tiers: eviction one tier down and out of the last, LRU order, what read locks
 * and pins protect, promotion, the reserver's watermarks, alignment and the abandoned-writer reaper.
 *
 * <p>One dir per tier and blocks of exactly {@value #BLOCK} bytes, so every placement is exact: MEM holds
 * 3 blocks, SSD 6, HDD 20.
 */
class TieredEvictionTest {
  private static final int BLOCK = 1000;
  private static final long TEMP_TIMEOUT_MS = 60_000;

  @TempDir
  Path root;

  private final RecordingEvents events = new RecordingEvents();
  private final MutableClock clock = new MutableClock(1_000_000);
  private TieredBlockStore store;

  @BeforeEach
  void setUp() {
    store = StoreFixture.builder()
        .tier("MEM", 3 * BLOCK, root.resolve("mem"))
        .tier("SSD", 6 * BLOCK, root.resolve("ssd"))
        .tier("HDD", 20 * BLOCK, root.resolve("hdd"))
        .events(events)
        .clock(clock)
        .build();
  }

  private TierManager manager(int maxMovesPerRound) {
    return new TierManager(store, 0.9, 0.5, TEMP_TIMEOUT_MS, maxMovesPerRound);
  }

  private void writeBlocks(long fromId, long toId) throws IOException {
    for (long id = fromId; id <= toId; id++) {
      persisted(store, id, BLOCK);
    }
  }

  private String tierOf(long id) {
    StorageDir d = store.dirOf(id);
    return d == null ? null : d.tierAlias;
  }

  /** Block ids per tier alias, sorted, from committedBlocks(). */
  private Map<String, List<Long>> placement() {
    return store.committedBlocks().stream().collect(Collectors.groupingBy(BlockMeta::tier, TreeMap::new,
        Collectors.mapping(BlockMeta::blockId, Collectors.collectingAndThen(Collectors.toList(),
            l -> l.stream().sorted().toList()))));
  }

  private static List<Long> ids(long from, long to) {
    return LongStream.rangeClosed(from, to).boxed().toList();
  }

  private void assertAllReadBackExact() throws IOException {
    for (BlockMeta m : store.committedBlocks()) {
      assertThat(read(store, m.blockId())).as("block %d", m.blockId()).isEqualTo(content(m.blockId(), BLOCK));
    }
  }

  /** Files on disk per tier agree with the index: no orphan copies left behind by moves. */
  private void assertFilesMatchIndex() {
    for (String tier : List.of("MEM", "SSD", "HDD")) {
      List<Long> onDisk = blockFiles(root.resolve(tier.toLowerCase())).stream()
          .map(p -> Long.parseLong(p.getFileName().toString())).sorted().toList();
      assertThat(onDisk).as("files in %s", tier).isEqualTo(placement().getOrDefault(tier, List.of()));
      assertThat(tmpFiles(root.resolve(tier.toLowerCase()))).as("tmp of %s", tier).isEmpty();
    }
  }

  // ---------------------------------------------------------------- writes and eviction down

  @Test
  void writes_ofThreeTimesTheMemQuota_withTheReserverRunning_keepNewestInMem_olderInSsd_oldestInHdd()
      throws IOException {
    TierManager tm = manager(0);
    for (long id = 1; id <= 9; id++) {
      persisted(store, id, BLOCK);
      tm.reserveSpace(); // what the worker's scheduler does between writes
    }

    // MEM over 90% moves its coldest down to 50%; SSD the same into HDD. Age order is kept.
    assertThat(placement()).isEqualTo(Map.of("MEM", List.of(9L), "SSD", ids(4, 8), "HDD", ids(1, 3)));
    assertThat(tierOf(9)).isEqualTo("MEM");
    assertThat(tierOf(4)).isEqualTo("SSD");
    assertThat(tierOf(1)).isEqualTo("HDD");
    assertThat(events.moved()).containsExactly(
        new Moved(1, BLOCK, "SSD"), new Moved(2, BLOCK, "SSD"),
        new Moved(3, BLOCK, "SSD"), new Moved(4, BLOCK, "SSD"),
        new Moved(5, BLOCK, "SSD"), new Moved(6, BLOCK, "SSD"),
        new Moved(1, BLOCK, "HDD"), new Moved(2, BLOCK, "HDD"), new Moved(3, BLOCK, "HDD"),
        new Moved(7, BLOCK, "SSD"), new Moved(8, BLOCK, "SSD"));
    assertThat(events.removed()).isEmpty();
    assertThat(store.usedBytes()).isEqualTo(9L * BLOCK);
    assertAllReadBackExact();
    assertFilesMatchIndex();
  }

  @Test
  void writes_goToTheHighestTierWithRoom_andLoseNothing_untilTheLastTierIsFull() throws IOException {
    writeBlocks(1, 29); // exactly what the three tiers hold

    assertThat(placement()).isEqualTo(Map.of("MEM", ids(1, 3), "SSD", ids(4, 9), "HDD", ids(10, 29)));
    assertThat(events.moved()).isEmpty();
    assertThat(events.removed()).isEmpty();
    assertThat(store.usedBytes()).isEqualTo(store.capacityBytes()).isEqualTo(29L * BLOCK);
    StoreCounters c = store.counters();
    assertThat(new long[] {c.bytesWritten(0), c.bytesWritten(1), c.bytesWritten(2)})
        .containsExactly(3L * BLOCK, 6L * BLOCK, 20L * BLOCK);
    assertThat(new long[] {c.evictions(0), c.evictions(1), c.evictions(2)}).containsExactly(0, 0, 0);
    assertAllReadBackExact();
  }

  @Test
  void write_intoAFullStore_cascades_memColdestToSsd_ssdColdestToHdd_andHddColdestOut() throws IOException {
    writeBlocks(1, 29);

    BlockMeta meta = persisted(store, 30, BLOCK);

    assertThat(meta.tier()).isEqualTo("MEM");
    // Deepest first: HDD makes room for SSD's victim, which makes room for MEM's.
    assertThat(events.removed()).containsExactly(10L);
    assertThat(events.moved()).containsExactly(new Moved(4, BLOCK, "HDD"), new Moved(1, BLOCK, "SSD"));
    assertThat(tierOf(1)).isEqualTo("SSD");
    assertThat(tierOf(4)).isEqualTo("HDD");
    assertThatThrownBy(() -> store.get(10)).isInstanceOf(NotFoundException.class);
    assertThat(store.committedBlocks()).hasSize(29);
    assertThat(store.usedBytes()).isEqualTo(29L * BLOCK);
    // One block out of each tier: 1 MEM to SSD, 4 SSD to HDD, 10 out of HDD (the metrics' eviction counts).
    StoreCounters c = store.counters();
    assertThat(new long[] {c.evictions(0), c.evictions(1), c.evictions(2)}).containsExactly(1, 1, 1);
    assertThat(new long[] {c.evictedBytes(0), c.evictedBytes(1), c.evictedBytes(2)})
        .containsExactly(BLOCK, BLOCK, BLOCK);
    assertThat(c.bytesWritten(0)).isEqualTo(4L * BLOCK);
    assertAllReadBackExact();
    assertFilesMatchIndex();
  }

  @Test
  void lruOrder_decidesWhatMoves_aReadBlockStaysInMem() throws IOException {
    writeBlocks(1, 29);
    read(store, 1); // 1 is now the hottest block in MEM; 2 the coldest

    persisted(store, 30, BLOCK);

    assertThat(tierOf(1)).isEqualTo("MEM");
    assertThat(tierOf(2)).isEqualTo("SSD");
    assertThat(events.moved()).contains(new Moved(2, BLOCK, "SSD")).doesNotContain(new Moved(1, BLOCK, "SSD"));
    assertThat(placement().get("MEM")).containsExactly(1L, 3L, 30L);
  }

  // ---------------------------------------------------------------- what protects a block

  @Test
  void openReadHandle_keepsItsBlockFromMovingDown_theNextColdestMovesInstead() throws IOException {
    writeBlocks(1, 29);
    ReadHandle h = store.openForRead(1, false);
    read(store, 2);
    read(store, 3); // 1 is the coldest in MEM again, but read-locked

    persisted(store, 30, BLOCK);

    assertThat(tierOf(1)).isEqualTo("MEM");
    assertThat(tierOf(2)).isEqualTo("SSD");
    assertThat(events.moved()).extracting(Moved::blockId).doesNotContain(1L);
    assertThat(readAll(h.channel())).isEqualTo(content(1, BLOCK));
    h.close();
    assertThat(store.locks.poolSize()).isZero();
  }

  @Test
  void openReadHandle_keepsItsBlockFromBeingEvictedOutOfTheLastTier() throws IOException {
    writeBlocks(1, 29);
    ReadHandle h = store.openForRead(10, false);
    for (long id = 11; id <= 29; id++) {
      read(store, id); // 10 is HDD's coldest again, but read-locked
    }

    persisted(store, 30, BLOCK);

    assertThat(events.removed()).containsExactly(11L);
    assertThat(tierOf(10)).isEqualTo("HDD");
    assertThat(readAll(h.channel())).isEqualTo(content(10, BLOCK));
    h.close();

    // Unlocked, it is an ordinary victim again: the reserver takes HDD (full) down to half, coldest first.
    manager(0).reserveSpace();
    assertThat(events.removed()).contains(10L);
  }

  @Test
  void pinnedBlock_isNeverMovedDown_byWrites_theReserver_orAlignment() throws IOException {
    writeBlocks(1, 29);
    store.pin(1);

    persisted(store, 30, BLOCK);
    assertThat(tierOf(1)).isEqualTo("MEM");
    assertThat(events.moved()).contains(new Moved(2, BLOCK, "SSD"));

    for (long id = 4; id <= 9; id++) {
      read(store, id); // SSD blocks hotter than MEM's: alignment would swap them
    }
    TierManager tm = manager(10);
    tm.reserveSpace();
    assertThat(tm.align()).as("alignment did move blocks up, past the pinned one").isPositive();
    assertThat(events.moved()).extracting(Moved::tier).contains("MEM");
    persisted(store, 31, BLOCK);

    assertThat(tierOf(1)).isEqualTo("MEM");
    assertThat(events.moved()).extracting(Moved::blockId).doesNotContain(1L);
    assertThat(read(store, 1)).isEqualTo(content(1, BLOCK));

    store.unpin(1);
    for (long id : placement().get("MEM")) {
      if (id != 1) {
        read(store, id); // 1 is MEM's coldest
      }
    }
    assertThat(store.tier(0).get(0).usedBytes()).isEqualTo(3L * BLOCK);
    tm.reserveSpace();
    assertThat(tierOf(1)).as("unpinned, it moves down like any block").isEqualTo("SSD");
  }

  @Test
  void pinnedBlock_inTheLastTier_isNeverEvicted() throws IOException {
    writeBlocks(1, 29);
    store.pin(10);

    persisted(store, 30, BLOCK);

    assertThat(events.removed()).containsExactly(11L);
    assertThat(read(store, 10)).isEqualTo(content(10, BLOCK));
  }

  // ---------------------------------------------------------------- promotion

  @Test
  void promotingRead_movesAnHddBlockToMem_makingRoomByMovingMemsColdestDown() throws IOException {
    writeBlocks(1, 14); // MEM 1-3, SSD 4-9 (full), HDD 10-14

    try (ReadHandle h = store.openForRead(12, true)) {
      assertThat(h.meta()).isEqualTo(new BlockMeta(12, BLOCK, "MEM"));
      assertThat(readAll(h.channel())).isEqualTo(content(12, BLOCK));
    }

    assertThat(tierOf(12)).isEqualTo("MEM");
    assertThat(events.moved()).containsExactly(
        new Moved(4, BLOCK, "HDD"), new Moved(1, BLOCK, "SSD"), new Moved(12, BLOCK, "MEM"));
    assertThat(events.removed()).isEmpty();
    assertThat(placement()).isEqualTo(Map.of("MEM", List.of(2L, 3L, 12L), "SSD", List.of(1L, 5L, 6L, 7L, 8L, 9L),
        "HDD", List.of(4L, 10L, 11L, 13L, 14L)));
    assertThat(store.usedBytes()).isEqualTo(14L * BLOCK);
    assertFilesMatchIndex();
    assertAllReadBackExact();
  }

  @Test
  void promotingRead_ofABlockAlreadyInMem_movesNothing() throws IOException {
    writeBlocks(1, 3);
    try (ReadHandle h = store.openForRead(2, true)) {
      assertThat(h.meta().tier()).isEqualTo("MEM");
    }
    assertThat(events.moved()).isEmpty();
  }

  // ---------------------------------------------------------------- the reserver

  @Test
  void reserveSpace_bringsADirAboveTheHighWatermark_downToTheLowWatermark() throws IOException {
    writeBlocks(1, 5); // MEM 3000 of 3000 (over 90%), SSD 2000 of 6000 (under)

    manager(0).reserveSpace();

    // MEM must get to at most 50% of 3000: its 2 coldest move down.
    assertThat(store.tier(0).get(0).usedBytes()).isEqualTo(1000);
    assertThat(events.moved()).containsExactly(new Moved(1, BLOCK, "SSD"), new Moved(2, BLOCK, "SSD"));
    assertThat(placement()).isEqualTo(Map.of("MEM", List.of(3L), "SSD", ids(1, 5).stream()
        .filter(id -> id != 3).toList()));
    assertThat(store.tier(1).get(0).usedBytes()).as("SSD under its high watermark is left alone")
        .isEqualTo(4000);
    assertThat(events.removed()).isEmpty();
  }

  @Test
  void reserveSpace_leavesADirAtOrBelowTheHighWatermark_alone() throws IOException {
    StorageDir mem = store.tier(0).get(0);
    writeBlocks(1, 2); // 2000 of 3000: under 90%

    new TierManager(store, 0.9, 0.5, TEMP_TIMEOUT_MS, 0).reserveSpace();

    assertThat(mem.usedBytes()).isEqualTo(2000);
    assertThat(events.moved()).isEmpty();
  }

  // ---------------------------------------------------------------- alignment

  @Test
  void align_movesHotterLowerBlocksUp_pastColderUpperOnes_atMostMaxMovesPerRound() throws IOException {
    writeBlocks(1, 7); // MEM 1-3, SSD 4-7
    for (long id = 4; id <= 7; id++) {
      read(store, id); // now every SSD block is hotter than every MEM block
    }
    TierManager tm = manager(2);

    assertThat(tm.align()).isEqualTo(2);

    // The two hottest (7, then 6) went up; MEM's two coldest (1, 2) came down to make room.
    assertThat(events.moved()).containsExactly(new Moved(1, BLOCK, "SSD"), new Moved(7, BLOCK, "MEM"),
        new Moved(2, BLOCK, "SSD"), new Moved(6, BLOCK, "MEM"));
    assertThat(placement()).isEqualTo(Map.of("MEM", List.of(3L, 6L, 7L), "SSD", List.of(1L, 2L, 4L, 5L)));

    events.clear();
    assertThat(tm.align()).as("5 is hotter than 3; 4 is colder than every block left in MEM").isEqualTo(1);
    assertThat(events.moved()).containsExactly(new Moved(3, BLOCK, "SSD"), new Moved(5, BLOCK, "MEM"));

    events.clear();
    assertThat(tm.align()).as("aligned").isZero();
    assertThat(events.moved()).isEmpty();
    assertThat(placement()).isEqualTo(Map.of("MEM", List.of(5L, 6L, 7L), "SSD", List.of(1L, 2L, 3L, 4L)));
    assertAllReadBackExact();
    assertFilesMatchIndex();
  }

  /**
   * LRU with a hook run once, when the aligner asks whether block {@code cold} is colder than another
   * (the only 2-block question anyone asks): it lets a test change the store between the aligner's choice
   * of a victim and its action on it.
   */
  private static final class HookedLru implements BlockAnnotator {
    private final LruAnnotator lru = new LruAnnotator();
    private long cold = -1;
    private Runnable onPairCompare;

    @Override
    public void onAccess(long blockId) {
      lru.onAccess(blockId);
    }

    @Override
    public void onRemove(long blockId) {
      lru.onRemove(blockId);
    }

    @Override
    public List<Long> coldestFirst(java.util.Collection<Long> candidates) {
      Runnable hook;
      synchronized (this) {
        hook = candidates.size() == 2 && candidates.iterator().next() == cold ? onPairCompare : null;
        if (hook != null) {
          onPairCompare = null;
        }
      }
      if (hook != null) {
        hook.run();
      }
      return lru.coldestFirst(candidates);
    }
  }

  @Test
  void align_whenTheColdBlockItChoseWasEvictedMeanwhile_leavesItThere() throws IOException {
    HookedLru annotator = new HookedLru();
    TieredBlockStore s = StoreFixture.builder()
        .tier("MEM", 3 * BLOCK, root.resolve("m"))
        .tier("SSD", 6 * BLOCK, root.resolve("s"))
        .tier("HDD", 20 * BLOCK, root.resolve("h"))
        .annotator(annotator)
        .events(events)
        .build();
    for (long id = 1; id <= 14; id++) {
      persisted(s, id, BLOCK); // MEM 1-3, SSD 4-9 (full), HDD 10-14
    }
    for (long id : List.of(1L, 2L, 3L, 10L, 11L, 12L, 13L, 14L)) {
      read(s, id); // MEM hotter than SSD: nothing to do there; HDD hotter than SSD: swap SSD's 4 for 14
    }
    StorageDir ssd = s.tier(1).get(0);
    // Between choosing SSD's coldest (4) and locking it, a writer's eviction empties SSD into HDD.
    annotator.cold = 4;
    annotator.onPairCompare = () -> assertThat(s.freeSpace(ssd, 6 * BLOCK)).isTrue();

    int moved = new TierManager(s, 0.9, 0.5, TEMP_TIMEOUT_MS, 4).align();

    assertThat(annotator.onPairCompare).as("the race was staged").isNull();
    assertThat(s.dirOf(4).tierAlias).as("4 is in the last tier now, with no tier below").isEqualTo("HDD");
    assertThat(moved).isZero();
    assertThat(s.committedBlocks()).hasSize(14);
    assertThat(s.locks.poolSize()).isZero();
    for (long id = 1; id <= 14; id++) {
      assertThat(read(s, id)).as("block %d", id).isEqualTo(content(id, BLOCK));
    }
  }

  @Test
  void align_movesNothing_whenTheUpperTierIsHotter() throws IOException {
    writeBlocks(1, 7);
    for (long id = 1; id <= 3; id++) {
      read(store, id);
    }

    assertThat(manager(4).align()).isZero();
    assertThat(events.moved()).isEmpty();
  }

  @Test
  void align_withZeroMovesPerRound_movesNothing() throws IOException {
    writeBlocks(1, 7);
    for (long id = 4; id <= 7; id++) {
      read(store, id);
    }

    assertThat(manager(0).align()).isZero();
    assertThat(events.moved()).isEmpty();
  }

  // ---------------------------------------------------------------- abandoned writers

  @Test
  void reapAbandoned_abortsATempBlockIdlePastTheTimeout_andItsWriterCannotGoOn() throws IOException {
    TierManager tm = manager(0);
    TempBlock idle = store.createTemp(1, BLOCK);
    idle.append(ByteBuffer.wrap(content(1, 400)));
    TempBlock busy = store.createTemp(2, BLOCK);
    busy.append(ByteBuffer.wrap(content(2, 100)));
    Path memDir = root.resolve("mem");

    clock.advance(Duration.ofMillis(TEMP_TIMEOUT_MS));
    tm.reapAbandoned();
    assertThat(tmpFiles(memDir)).as("idle exactly the timeout is not yet abandoned").hasSize(2);

    busy.append(ByteBuffer.wrap(content(2, 200), 100, 100)); // the busy writer shows it is alive
    clock.advance(Duration.ofMillis(1));
    tm.reapAbandoned();

    assertThat(tmpFiles(memDir)).hasSize(1);
    assertThat(store.usedBytes()).as("only the live writer's bytes stay reserved").isEqualTo(200);
    assertThatThrownBy(() -> idle.append(ByteBuffer.wrap(new byte[1]))).isInstanceOf(InternalException.class);
    assertThatThrownBy(() -> store.commit(idle)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> store.get(1)).isInstanceOf(NotFoundException.class);
    assertThat(store.usedBytes()).isEqualTo(200);

    assertThat(store.commit(busy).length()).isEqualTo(200);
    assertThat(read(store, 2)).isEqualTo(content(2, 200));
    assertThat(persisted(store, 1, 300).length()).as("the dead writer's id is free again").isEqualTo(300);
    assertThat(tmpFiles(memDir)).isEmpty();
  }

  @Test
  void reapAbandoned_leavesAHeldTempBlock_whichItsFilesLeaseRecoveryStillAborts() throws IOException {
    TierManager tm = manager(0);
    TempBlock held = store.createTemp(io.strata.common.id.BlockId.of(5, 0), BLOCK);
    held.hold();
    held.append(ByteBuffer.wrap(content(1, 300)));
    TempBlock plain = store.createTemp(io.strata.common.id.BlockId.of(6, 0), BLOCK);
    plain.append(ByteBuffer.wrap(content(2, 100)));
    Path memDir = root.resolve("mem");

    clock.advance(Duration.ofMillis(10 * TEMP_TIMEOUT_MS));
    tm.reapAbandoned();
    assertThat(tmpFiles(memDir)).as("the plain idle writer is reaped, the held one is not").hasSize(1);
    assertThat(store.usedBytes()).isEqualTo(300);
    held.append(ByteBuffer.wrap(content(1, 400), 300, 100)); // its owner goes on after the gap

    store.abortWritesOf(java.util.List.of(6L)); // another file's recovery leaves it
    assertThat(tmpFiles(memDir)).hasSize(1);
    store.abortWritesOf(java.util.List.of(5L)); // its own file's lease recovery ends it
    assertThat(tmpFiles(memDir)).isEmpty();
    assertThat(store.usedBytes()).isZero();
    assertThatThrownBy(() -> held.append(ByteBuffer.wrap(new byte[1]))).isInstanceOf(InternalException.class);
  }

  // ---------------------------------------------------------------- no room at all

  /**
   * A block being appended to whose dir has no room that eviction can make (pinned blocks and another block being
   * written hold MEM) moves down a tier with what it holds and goes on there; the pinned blocks stay, nothing leaks.
   */
  @Test
  void append_whenItsDirIsFullOfPinnedBlocks_movesTheBlockDownATier_andLeaksNothing() throws IOException {
    writeBlocks(1, 2);
    store.pin(1);
    store.pin(2);
    TempBlock a = store.createTemp(3, BLOCK); // MEM has 1000 free: both temps start there
    TempBlock b = store.createTemp(4, BLOCK);
    assertThat(List.of(a, b)).allMatch(t -> ((Temp) t).dir.tierAlias.equals("MEM"));
    a.append(ByteBuffer.wrap(content(3, BLOCK)));
    byte[] four = content(4, BLOCK);

    b.append(ByteBuffer.wrap(four, 0, 300));
    assertThat(((Temp) b).dir.tierAlias).isEqualTo("SSD");
    b.append(ByteBuffer.wrap(four, 300, BLOCK - 300));

    assertThat(store.usedBytes()).isEqualTo(4L * BLOCK);
    assertThat(store.commit(b).tier()).isEqualTo("SSD");
    assertThat(store.commit(a).tier()).isEqualTo("MEM");
    assertThat(read(store, 4)).isEqualTo(four);
    assertThat(read(store, 3)).isEqualTo(content(3, BLOCK));
    assertThat(store.usedBytes()).isEqualTo(4L * BLOCK);
    assertThat(events.moved()).as("pinned blocks stayed").isEmpty();
    assertFilesMatchIndex();
    assertThat(store.locks.poolSize()).isZero();
  }

  /** The same with a block moved down after it held bytes already: they go with it, byte-exact. */
  @Test
  void append_whenItsDirIsFullOfReadLockedBlocks_movesTheBlockDownWithItsBytes() throws IOException {
    writeBlocks(1, 2);
    List<ReadHandle> readers = new ArrayList<>();
    readers.add(store.openForRead(1, false));
    readers.add(store.openForRead(2, false));
    TempBlock a = store.createTemp(3, BLOCK);
    TempBlock b = store.createTemp(4, BLOCK);
    byte[] four = content(4, BLOCK);
    b.append(ByteBuffer.wrap(four, 0, 400)); // room in MEM still
    assertThat(((Temp) b).dir.tierAlias).isEqualTo("MEM");
    a.append(ByteBuffer.wrap(content(3, 600))); // MEM full now

    b.append(ByteBuffer.wrap(four, 400, 10));

    assertThat(((Temp) b).dir.tierAlias).isEqualTo("SSD");
    assertThat(b.length()).isEqualTo(410);
    assertThat(store.usedBytes()).isEqualTo(2L * BLOCK + 600 + 410);
    b.append(ByteBuffer.wrap(four, 410, BLOCK - 410));
    assertThat(store.commit(b).tier()).isEqualTo("SSD");
    assertThat(read(store, 4)).isEqualTo(four);
    store.commit(a);
    assertThat(events.moved()).isEmpty();
    for (ReadHandle h : readers) {
      assertThat(readAll(h.channel())).isEqualTo(content(h.meta().blockId(), BLOCK));
      h.close();
    }
    assertThat(store.locks.poolSize()).isZero();
    assertFilesMatchIndex();
  }

  /** With no tier below that has room either, the append is RESOURCE_EXHAUSTED and leaves everything as it was. */
  @Test
  void append_whenNoTierHasRoomThatEvictionCanMake_isResourceExhausted_andLeaksNothing() throws IOException {
    writeBlocks(1, 2);
    store.pin(1);
    store.pin(2);
    TempBlock a = store.createTemp(3, BLOCK);
    TempBlock b = store.createTemp(4, BLOCK);
    a.append(ByteBuffer.wrap(content(3, BLOCK)));
    for (long id = 10; id < 36; id++) { // SSD's 6 and HDD's 20 blocks, pinned
      writeBlocks(id, id);
      store.pin(id);
    }
    assertThat(store.usedBytes()).isEqualTo(29L * BLOCK);
    ByteBuffer data = ByteBuffer.wrap(content(4, BLOCK));

    assertThatThrownBy(() -> b.append(data)).isInstanceOf(ResourceExhaustedException.class);

    assertThat(data.remaining()).isEqualTo(BLOCK);
    assertThat(b.length()).isZero();
    assertThat(((Temp) b).dir.tierAlias).isEqualTo("MEM");
    assertThat(store.usedBytes()).isEqualTo(29L * BLOCK);
    store.abort(b);
    assertThat(store.commit(a).tier()).isEqualTo("MEM");
    assertFilesMatchIndex();
  }

  // ---------------------------------------------------------------- remove and movers

  @Test
  void remove_whileAMoverHoldsTheBlock_finishesOnceTheMoveIsDone() throws IOException {
    writeBlocks(1, 2);
    var moverLock = store.tryLockForMove(1).orElseThrow();

    assertThat(store.remove(1)).isTrue();
    assertThat(store.get(1).tier()).as("deferred while the mover holds it").isEqualTo("MEM");

    moverLock.close(); // the removal is finished on its dir's removal lane, soon after

    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() -> {
      assertThat(events.removed()).containsExactly(1L);
      assertThat(store.locks.poolSize()).isZero();
    });
    assertThatThrownBy(() -> store.get(1)).isInstanceOf(NotFoundException.class);
    assertThat(store.usedBytes()).isEqualTo(BLOCK);
    BlockMeta again = persisted(store, 1, content(101, 500), 100);
    assertThat(again.length()).isEqualTo(500);
    assertThat(read(store, 1)).as("the new block with that id is readable").isEqualTo(content(101, 500));
  }

  @Test
  void aPinOfABlockNotHere_isIgnored_soALaterCopyOfItIsNotPinned() throws IOException {
    TieredBlockStore store = StoreFixture.builder().tier("MEM", 10 << 20, root.resolve("mem")).build();
    store.pin(7); // its copy was removed between its commit and the pin
    StoreFixture.write(store, 7, content(7, 100), 100); // cached again later, its file no longer pinned
    assertThat(store.isPinned(7)).isFalse();
    store.pin(7);
    assertThat(store.isPinned(7)).isTrue();
  }
}
