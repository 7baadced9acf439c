package io.strata.worker.store;

import static io.strata.worker.store.StoreFixture.content;
import static io.strata.worker.store.StoreFixture.deleteTree;
import static io.strata.worker.store.StoreFixture.read;
import static io.strata.worker.store.StoreFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.InternalException;
import io.strata.common.exception.NotFoundException;
import io.strata.worker.store.BlockStore.BlockMeta;
import io.strata.worker.store.BlockStore.DirReport;
import io.strata.worker.store.BlockStore.TempBlock;
import io.strata.worker.store.RecordingEvents.DirFailed;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Storage-dir failure (after Kafka KIP-112): a dir that fails is taken out of service, its blocks are
 * reported lost, and the store goes on with the others. Two SSD dirs plus an HDD tier, so a failed dir
 * has a sibling in its tier and a tier below.
 */
class StorageDirFailureTest {
  private static final long QUOTA = 10_000;
  private static final int BLOCK = 1000;

  @TempDir
  Path root;

  private Path ssd0;
  private Path ssd1;
  private Path hdd;
  private final RecordingEvents events = new RecordingEvents();
  private TieredBlockStore store;
  private TierManager manager;

  @BeforeEach
  void setUp() {
    ssd0 = root.resolve("ssd0");
    ssd1 = root.resolve("ssd1");
    hdd = root.resolve("hdd");
    store = newStore(ssd0, ssd1, hdd);
    manager = new TierManager(store, 0.9, 0.5, 60_000, 4);
  }

  private TieredBlockStore newStore(Path a, Path b, Path c) {
    return StoreFixture.builder().tier("SSD", QUOTA, a, b).tier("HDD", QUOTA, c).events(events).build();
  }

  /** Writes blocks 1..n; MaxFree spreads them over both SSD dirs. Returns the ids in each dir. */
  private Map<Path, List<Long>> writeSpread(int n) throws IOException {
    for (long id = 1; id <= n; id++) {
      write(store, id, BLOCK);
    }
    return store.committedBlocks().stream().map(BlockMeta::blockId).sorted()
        .collect(Collectors.groupingBy(id -> store.dirOf(id).root));
  }

  private DirReport report(Path dir) {
    return store.dirReports().stream().filter(r -> r.path().equals(dir.toString())).findFirst().orElseThrow();
  }

  // ---------------------------------------------------------------- a dir fails while serving

  @Test
  void dirWhoseTreeIsDeleted_isMarkedBadByTheHealthCheck_itsBlocksLost_theOthersServed() throws IOException {
    Map<Path, List<Long>> byDir = writeSpread(8);
    List<Long> lost = byDir.get(ssd0);
    List<Long> kept = byDir.get(ssd1);
    assertThat(lost).hasSize(4);
    assertThat(kept).hasSize(4);
    long capacityBefore = store.capacityBytes();

    deleteTree(ssd0);
    manager.checkDirs();

    assertThat(events.dirFailures()).hasSize(1);
    DirFailed failure = events.dirFailures().get(0);
    assertThat(failure.path()).isEqualTo(ssd0.toString());
    assertThat(failure.lostBlocks()).containsExactlyInAnyOrderElementsOf(lost);
    for (long id : lost) {
      assertThatThrownBy(() -> store.get(id)).isInstanceOf(NotFoundException.class);
      assertThatThrownBy(() -> store.openForRead(id, false)).isInstanceOf(NotFoundException.class);
    }
    for (long id : kept) {
      assertThat(read(store, id)).as("block %d", id).isEqualTo(content(id, BLOCK));
    }
    assertThat(store.committedBlocks()).extracting(BlockMeta::blockId).containsExactlyInAnyOrderElementsOf(kept);
    assertThat(store.capacityBytes()).isEqualTo(capacityBefore - QUOTA);
    assertThat(store.usedBytes()).isEqualTo(4L * BLOCK);
    DirReport bad = report(ssd0);
    assertThat(bad.good()).isFalse();
    assertThat(bad.lostBlocks()).isEqualTo(4);
    assertThat(bad.usedBytes()).isZero();
    assertThat(report(ssd1)).extracting(DirReport::good, DirReport::lostBlocks, DirReport::usedBytes)
        .containsExactly(true, 0L, 4L * BLOCK);
    assertThat(events.allDirsFailedCount()).isZero();
    assertThat(store.locks.poolSize()).isZero();

    manager.checkDirs();
    assertThat(events.dirFailures()).as("a bad dir fails once").hasSize(1);
  }

  /** Something a test does at a sync, after the real one. */
  private interface SyncHook<T> {
    void after(T synced) throws IOException;
  }

  /** The real fsync, then {@code afterFile} (at a temp block's channel sync) or {@code afterDir} (at a dir sync). */
  private static Durability fsyncThen(SyncHook<java.nio.channels.FileChannel> afterFile, SyncHook<Path> afterDir) {
    return new StoreFixture.Fsync() {
      @Override
      public void syncFile(java.nio.channels.FileChannel channel) throws IOException {
        super.syncFile(channel);
        afterFile.after(channel);
      }

      @Override
      public void syncDir(Path dir) throws IOException {
        super.syncDir(dir);
        afterDir.after(dir);
      }
    };
  }

  /** A store after {@link #promoteWhileADirFails}, its two tiers' dirs, and the meta the promoting read saw. */
  private record Promoted(TieredBlockStore store, Path fast, Path slow, BlockMeta seen) {}

  /**
   * A two-tier store (an SSD with room for one block over an HDD) whose block 2, in the HDD, is promoted into the SSD
   * while a dir fails: the SSD (the move's target) when {@code targetFails}, else the HDD (its source), once the copy
   * has its name in the SSD.
   */
  private Promoted promoteWhileADirFails(String name, boolean targetFails) throws IOException {
    Path fast = root.resolve(name + "-fast");
    Path slow = root.resolve(name + "-slow");
    TieredBlockStore[] s = {null};
    java.util.concurrent.atomic.AtomicBoolean failOnSync = new java.util.concurrent.atomic.AtomicBoolean();
    Durability failing = fsyncThen(file -> { }, dir -> {
      if (dir.startsWith(fast) && failOnSync.getAndSet(false)) {
        // The copy has its name in the target dir; now one of the two dirs dies and the store learns it.
        deleteTree(targetFails ? fast : slow);
        assertThat(s[0].dirFailed(s[0].tier(targetFails ? 0 : 1).get(0), null)).isTrue();
      }
    });
    s[0] = StoreFixture.builder().tier("SSD", BLOCK, fast).tier("HDD", QUOTA, slow).events(events)
        .durability(failing).build();
    write(s[0], 1, BLOCK); // fills the SSD
    write(s[0], 2, BLOCK); // so this one lands in the HDD
    assertThat(s[0].dirOf(2).root).isEqualTo(slow);
    s[0].remove(1); // room in the SSD again

    failOnSync.set(true);
    BlockMeta seen;
    try (BlockStore.ReadHandle h = s[0].openForRead(2, true)) { // promotes: a move into the SSD
      seen = h.meta();
    }
    assertThat(failOnSync.get()).as("a dir failed during the move").isFalse();
    return new Promoted(s[0], fast, slow, seen);
  }

  /**
   * A block moved (here promoted) into a dir that fails while the copy lands there stays where it was: its
   * source is whole and still the copy the store lists, and nothing of it is deleted. (The move once checked
   * only its source dir, recorded the block in the failed dir and deleted its only good copy.)
   */
  @Test
  void blockMovedIntoADirThatFailsDuringTheMove_staysWhereItWas() throws IOException {
    Promoted p = promoteWhileADirFails("into", true);
    assertThat(p.seen()).isEqualTo(new BlockMeta(2, BLOCK, "HDD"));
    assertThat(p.store().dirOf(2).root).isEqualTo(p.slow());
    assertThat(read(p.store(), 2)).isEqualTo(content(2, BLOCK));
    assertThat(events.moved()).isEmpty();
    assertThat(events.dirFailures()).extracting(DirFailed::path).containsExactly(p.fast().toString());
    assertThat(p.store().usedBytes()).isEqualTo(BLOCK);
  }

  /**
   * A block moved (here promoted) out of a dir that fails while the copy lands in its target is kept in the target:
   * the dir's failure reported it lost, but the copy is whole (copied, synced, renamed) and may be its only one. (The
   * move once deleted it with the failed source.) It is announced as moved, which the master takes as added.
   */
  @Test
  void blockMovedOutOfADirThatFailsDuringTheMove_isKeptInItsTarget() throws IOException {
    Promoted p = promoteWhileADirFails("outOf", false);
    assertThat(p.seen().blockId()).isEqualTo(2);
    assertThat(events.dirFailures()).extracting(DirFailed::path).containsExactly(p.slow().toString());
    // The bytes are held by the copy in the SSD: listed, readable whole, and announced.
    assertThat(p.store().dirOf(2).root).isEqualTo(p.fast());
    assertThat(read(p.store(), 2)).isEqualTo(content(2, BLOCK));
    assertThat(events.moved()).hasSize(1);
    assertThat(p.store().usedBytes()).isEqualTo(BLOCK);
  }

  /**
   * A commit whose dir fails under it lets go of its own claim on the block id only: the dir's failure freed the
   * id, a retry claimed it again in another dir, and that retry's claim stays (a third writer of the id is refused,
   * and the retry commits).
   */
  @Test
  void commitFailingWithItsDir_leavesTheClaimOfARetryInAnotherDir() throws IOException {
    Path a = root.resolve("a");
    Path b = root.resolve("b");
    TieredBlockStore[] s = {null};
    TempBlock[] retry = {null};
    TempBlock[] writing = {null};
    java.util.concurrent.atomic.AtomicBoolean failOnSync = new java.util.concurrent.atomic.AtomicBoolean();
    Durability failingDir = fsyncThen(file -> {
      if (failOnSync.getAndSet(false)) {
        // The first writer's dir dies during its commit; the client retries the block, in the other dir.
        StorageDir failing = ((Temp) writing[0]).dir;
        deleteTree(failing.root);
        assertThat(s[0].dirFailed(failing, null)).isTrue();
        retry[0] = s[0].createTemp(7, BLOCK);
        retry[0].append(ByteBuffer.wrap(content(7, BLOCK)));
      }
    }, dir -> { });
    s[0] = StoreFixture.builder().tier("SSD", QUOTA, a, b).events(events).durability(failingDir).build();
    TempBlock first = s[0].createTemp(7, BLOCK);
    first.append(ByteBuffer.wrap(content(7, BLOCK)));
    writing[0] = first;
    failOnSync.set(true);
    assertThatThrownBy(() -> s[0].commit(first)).isInstanceOf(InternalException.class);
    assertThat(retry[0]).as("the retry began while the first commit failed").isNotNull();
    assertThatThrownBy(() -> s[0].createTemp(7, BLOCK)).as("the retry still holds the id")
        .hasMessageContaining("is being written");
    assertThat(s[0].commit(retry[0]).length()).isEqualTo(BLOCK);
    assertThat(read(s[0], 7)).isEqualTo(content(7, BLOCK));
  }

  @Test
  void afterADirFails_newBlocksGoOnlyToGoodDirs() throws IOException {
    writeSpread(4);
    deleteTree(ssd0);
    manager.checkDirs();

    for (long id = 100; id < 112; id++) { // 12 blocks: more than ssd1 holds, so some spill to HDD
      BlockMeta meta = write(store, id, BLOCK);
      assertThat(store.dirOf(id).root).as("dir of block %d", id).isNotEqualTo(ssd0);
      assertThat(read(store, id)).isEqualTo(content(id, BLOCK));
      assertThat(meta.tier()).isIn("SSD", "HDD");
    }
    assertThat(Files.exists(ssd0)).as("nothing recreated the failed dir").isFalse();
    assertThat(store.committedBlocks()).extracting(BlockMeta::tier).contains("SSD", "HDD");
    assertThat(store.usedBytes()).isEqualTo(store.committedBlocks().size() * (long) BLOCK);
  }

  @Test
  void dirReplacedByARegularFile_isMarkedBadByTheNextReadOfOneOfItsBlocks() throws IOException {
    Map<Path, List<Long>> byDir = writeSpread(6);
    long victim = byDir.get(ssd0).get(0);
    deleteTree(ssd0);
    Files.write(ssd0, new byte[] {1, 2, 3});

    assertThatThrownBy(() -> store.openForRead(victim, false)).isInstanceOf(NotFoundException.class);

    assertThat(events.dirFailures()).extracting(DirFailed::path).containsExactly(ssd0.toString());
    assertThat(events.dirFailures().get(0).lostBlocks()).containsExactlyInAnyOrderElementsOf(byDir.get(ssd0));
    assertThat(report(ssd0).good()).isFalse();
    assertThat(report(ssd0).lostBlocks()).isEqualTo(3);
    for (long id : byDir.get(ssd1)) {
      assertThat(read(store, id)).isEqualTo(content(id, BLOCK));
    }
    assertThat(store.locks.poolSize()).isZero();
  }

  @Test
  void dirWhoseBlocksSubdirIsReplacedByAFile_failsTheHealthCheck() throws IOException {
    Map<Path, List<Long>> byDir = writeSpread(4);
    deleteTree(ssd1.resolve("blocks"));
    Files.write(ssd1.resolve("blocks"), new byte[1]);

    manager.runOnce();

    assertThat(events.dirFailures()).extracting(DirFailed::path).containsExactly(ssd1.toString());
    assertThat(events.dirFailures().get(0).lostBlocks()).containsExactlyInAnyOrderElementsOf(byDir.get(ssd1));
    assertThat(report(ssd1).good()).isFalse();
    assertThat(report(ssd0).good()).isTrue();
  }

  @Test
  void writerInAFailedDir_isRefused_andItsBlockIdCanBeWrittenAgainElsewhere() throws IOException {
    TempBlock t = store.createTemp(1, BLOCK); // both dirs empty: MaxFree picks ssd0
    assertThat(((Temp) t).dir.root).isEqualTo(ssd0);
    t.append(ByteBuffer.wrap(content(1, 300)));

    deleteTree(ssd0);
    manager.checkDirs();

    assertThatThrownBy(() -> t.append(ByteBuffer.wrap(new byte[10]))).isInstanceOf(InternalException.class);
    assertThatThrownBy(() -> store.commit(t)).isInstanceOf(IllegalStateException.class);
    store.abort(t);
    assertThat(store.usedBytes()).isZero();

    // The client retries the block on this worker: it must land in a good dir, not be refused forever.
    BlockMeta again = write(store, 1, BLOCK);
    assertThat(store.dirOf(1).root).isEqualTo(ssd1);
    assertThat(again.length()).isEqualTo(BLOCK);
    assertThat(read(store, 1)).isEqualTo(content(1, BLOCK));
  }

  @Test
  void append_byAnInterruptedWriter_failsThatWrite_butNotTheDir() throws IOException {
    writeSpread(4);
    TempBlock t = store.createTemp(50, BLOCK);
    Path dir = ((Temp) t).dir.root;
    t.append(ByteBuffer.wrap(content(50, 100)));

    Thread.currentThread().interrupt(); // an interrupted thread's channel write closes the channel
    try {
      assertThatThrownBy(() -> t.append(ByteBuffer.wrap(new byte[100]))).isInstanceOf(InternalException.class);
    } finally {
      Thread.interrupted();
    }

    assertThat(events.dirFailures()).as("an interrupt is not an I/O failure of the dir").isEmpty();
    assertThat(report(dir).good()).isTrue();
    assertThat(store.committedBlocks()).hasSize(4);
    store.abort(t);
    assertThat(store.usedBytes()).isEqualTo(4L * BLOCK);
    assertThat(StoreFixture.tmpFiles(dir)).isEmpty();
    assertThat(write(store, 50, BLOCK).length()).isEqualTo(BLOCK);
  }

  @Test
  void lastDirFailing_raisesAllDirsFailed_exactlyOnce() throws IOException {
    writeSpread(6);

    deleteTree(ssd0);
    manager.checkDirs();
    deleteTree(hdd);
    manager.checkDirs();
    assertThat(events.allDirsFailedCount()).as("ssd1 still serves").isZero();
    assertThat(store.capacityBytes()).isEqualTo(QUOTA);

    deleteTree(ssd1);
    manager.checkDirs();
    manager.checkDirs();
    manager.runOnce();

    assertThat(events.allDirsFailedCount()).isEqualTo(1);
    assertThat(events.dirFailures()).extracting(DirFailed::path)
        .containsExactly(ssd0.toString(), hdd.toString(), ssd1.toString());
    assertThat(store.capacityBytes()).isZero();
    assertThat(store.usedBytes()).isZero();
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(store.dirReports()).noneMatch(DirReport::good);
    assertThat(store.dirReports().stream().mapToLong(DirReport::lostBlocks).sum()).isEqualTo(6);
    assertThatThrownBy(() -> store.createTemp(50, BLOCK)).isInstanceOf(io.strata.common.exception.UnavailableException.class)
        .hasMessageContaining("No good storage dir is left on this worker"); // broken, not full: writers go elsewhere
    assertThat(events.allDirsFailedCount()).isEqualTo(1);
  }

  // ---------------------------------------------------------------- a dir unusable at start

  @Test
  void storeStartedWithADirThatIsARegularFile_startsWithoutIt_andReportsItBad() throws IOException {
    Path file = root.resolve("not-a-dir");
    Files.write(file, new byte[] {42});

    TieredBlockStore s = newStore(file, ssd1, hdd);

    List<DirReport> reports = s.dirReports();
    assertThat(reports).extracting(DirReport::path, DirReport::good).containsExactly(
        org.assertj.core.groups.Tuple.tuple(file.toString(), false),
        org.assertj.core.groups.Tuple.tuple(ssd1.toString(), true),
        org.assertj.core.groups.Tuple.tuple(hdd.toString(), true));
    assertThat(s.capacityBytes()).isEqualTo(2 * QUOTA);
    List<Path> dirsUsed = new ArrayList<>();
    for (long id = 1; id <= 6; id++) {
      write(s, id, BLOCK);
      dirsUsed.add(s.dirOf(id).root);
    }
    assertThat(dirsUsed).doesNotContain(file).contains(ssd1);
    assertThat(Files.readAllBytes(file)).as("the file is left as it was").containsExactly(42);
    assertThat(s.usedBytes()).isEqualTo(6L * BLOCK);
  }

  @Test
  void storeWithEveryDirUnusable_cannotBeConstructed() throws IOException {
    Path f1 = root.resolve("f1");
    Path f2 = root.resolve("f2");
    Path f3 = root.resolve("f3");
    for (Path f : List.of(f1, f2, f3)) {
      Files.write(f, new byte[1]);
    }

    assertThatThrownBy(() -> newStore(f1, f2, f3)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("f1").hasMessageContaining("f3");
  }
}
