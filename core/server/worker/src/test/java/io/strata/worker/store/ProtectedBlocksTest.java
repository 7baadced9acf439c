package io.strata.worker.store;

import static io.strata.worker.store.StoreFixture.content;
import static io.strata.worker.store.StoreFixture.read;
import static io.strata.worker.store.StoreFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.worker.store.BlockStore.BlockMeta;
import io.strata.worker.store.BlockStore.TempBlock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No eviction of data that exists nowhere else: a block the store was not told is persisted
 * ({@link BlockStore#markEvictable}) may move between tiers but never leaves the last one; a full store
 * refuses a write at once naming what holds it, or, for a whole-block reservation, makes the writer wait
 * until room appears.
 *
 * <p>Two tiers, one dir each, blocks of {@value #BLOCK} bytes: MEM holds 2, HDD 3.
 */
class ProtectedBlocksTest {
  private static final int BLOCK = 1000;

  @TempDir
  Path root;

  private final RecordingEvents events = new RecordingEvents();
  private TieredBlockStore store;
  private ExecutorService pool;

  @BeforeEach
  void setUp() {
    store = StoreFixture.builder()
        .tier("MEM", 2 * BLOCK, root.resolve("mem"))
        .tier("HDD", 3 * BLOCK, root.resolve("hdd"))
        .events(events)
        .build();
    pool = Executors.newCachedThreadPool();
  }

  @AfterEach
  void tearDown() {
    pool.shutdownNow();
  }

  @Test
  void unpersistedBlocks_moveDownTiers_butAreNeverEvicted_theWriteThatDoesNotFitFailsNamingWhatHoldsTheTier()
      throws IOException {
    for (long id = 1; id <= 5; id++) {
      write(store, id, BLOCK); // fills both tiers: MEM 1-2, HDD 3-5
    }
    store.openForRead(4, true).close(); // promoting 4 needs MEM's coldest (1) moved down
    assertThat(store.dirOf(1).tierAlias).as("HDD is full of unpersisted blocks: 1 cannot move down")
        .isEqualTo("MEM");
    store.remove(5);
    store.openForRead(4, true).close(); // now HDD has room: 1 moves down, 4 up
    assertThat(store.dirOf(1).tierAlias).isEqualTo("HDD");
    assertThat(store.dirOf(4).tierAlias).isEqualTo("MEM");
    write(store, 5, BLOCK);
    events.clear();

    assertThatThrownBy(() -> write(store, 6, BLOCK))
        .isInstanceOf(ResourceExhaustedException.class)
        .hasMessageContaining("Tier MEM")
        .hasMessageContaining("2000 of 2000 bytes used");

    assertThat(events.removed()).as("no block left the worker").isEmpty();
    for (long id = 1; id <= 5; id++) {
      assertThat(read(store, id)).as("block %d", id).isEqualTo(content(id, BLOCK));
    }
  }

  @Test
  void fullLastTier_ofUnpersistedBlocks_refusesAtOnce_sayingWhatHoldsIt() throws IOException {
    TieredBlockStore single = StoreFixture.builder().tier("MEM", 2 * BLOCK, root.resolve("only")).build();
    write(single, 1, BLOCK);
    write(single, 2, 600);
    TempBlock t = single.createTemp(3, BLOCK);
    t.append(ByteBuffer.wrap(new byte[300])); // 300 reserved by a block being written
    single.pin(2);

    assertThatThrownBy(() -> write(single, 4, 200))
        .isInstanceOf(ResourceExhaustedException.class)
        .hasMessageContaining("Tier MEM")
        .hasMessageContaining("1900 of 2000 bytes used")
        .hasMessageContaining("1000 bytes of blocks of files not yet persisted (never evicted from the last tier)")
        .hasMessageContaining("600 bytes of pinned blocks")
        .hasMessageContaining("300 bytes reserved by blocks being written");
    assertThat(read(single, 1)).isEqualTo(content(1, BLOCK));
  }

  @Test
  void persistedBlock_isEvictedFromTheLastTier_anUnpersistedOneNever() throws IOException {
    for (long id = 1; id <= 5; id++) {
      write(store, id, BLOCK); // HDD 1-3 (1 coldest), MEM 4-5
    }
    store.markEvictable(List.of(2L)); // only 2's file is persisted

    BlockMeta six = write(store, 6, BLOCK);

    assertThat(six.tier()).isEqualTo("MEM");
    assertThat(events.removed()).containsExactly(2L); // not 1, the coldest: it exists nowhere else
    assertThatThrownBy(() -> store.get(2)).isInstanceOf(NotFoundException.class);
    for (long id : new long[] {1, 3, 4, 5, 6}) {
      assertThat(read(store, id)).as("block %d", id).isEqualTo(content(id, BLOCK));
    }
  }

  @Test
  void theReserver_leavesUnpersistedBlocksInTheLastTier() throws IOException {
    TieredBlockStore single = StoreFixture.builder().tier("MEM", 2 * BLOCK, root.resolve("only")).events(events)
        .build();
    write(single, 1, BLOCK);
    write(single, 2, BLOCK);
    single.markEvictable(List.of(2L));

    new TierManager(single, 0.9, 0.5, 60_000, 4).runOnce();

    assertThat(events.removed()).containsExactly(2L);
    assertThat(read(single, 1)).isEqualTo(content(1, BLOCK));
  }

  @Test
  void aNewCopyOfAnEvictableId_isProtectedAgain() throws IOException {
    TieredBlockStore single = StoreFixture.builder().tier("MEM", 2 * BLOCK, root.resolve("only")).build();
    write(single, 1, BLOCK);
    single.markEvictable(List.of(1L));
    single.remove(1);
    write(single, 1, BLOCK);

    assertThat(single.isEvictable(1)).isFalse();
  }

  @Test
  void blocksFoundAtRestart_areProtected() throws IOException {
    write(store, 1, BLOCK);
    store.markEvictable(List.of(1L));
    TieredBlockStore restarted = StoreFixture.builder()
        .tier("MEM", 2 * BLOCK, root.resolve("mem"))
        .tier("HDD", 3 * BLOCK, root.resolve("hdd"))
        .build();

    assertThat(restarted.isEvictable(1)).as("the master says again which are persisted").isFalse();
  }

  // ---------------------------------------------------------------- whole-block reservations

  @Test
  void reservedBlock_holdsItsWholeLengthUpFront_andReturnsTheUnusedPartAtCommit() throws IOException {
    TempBlock t = store.createReserved(1, BLOCK, 0);
    assertThat(store.usedBytes()).isEqualTo(BLOCK);
    TempBlock taken = store.reserved(1);
    assertThat(taken).isSameAs(t);
    assertThatThrownBy(() -> store.reserved(1)).as("handed out once").isInstanceOf(NotFoundException.class);

    taken.append(ByteBuffer.wrap(content(1, 400)));
    assertThat(store.usedBytes()).isEqualTo(BLOCK);
    store.commit(taken);

    assertThat(store.usedBytes()).isEqualTo(400);
    assertThat(read(store, 1)).isEqualTo(content(1, 400));
  }

  @Test
  void abortedReservation_givesBackItsWholeLength() throws IOException {
    TempBlock t = store.createReserved(1, BLOCK, 0);
    t.append(ByteBuffer.wrap(new byte[100]));
    store.abort(t);

    assertThat(store.usedBytes()).isZero();
  }

  @Test
  void reservation_inAStoreFullOfUnpersistedBlocks_failsAfterItsWait_namingWhatHoldsTheSpace() throws IOException {
    for (long id = 1; id <= 5; id++) {
      write(store, id, BLOCK);
    }
    long start = System.nanoTime();

    assertThatThrownBy(() -> store.createReserved(6, BLOCK, 200))
        .isInstanceOf(ResourceExhaustedException.class)
        .hasMessageContaining("after waiting 200 ms")
        .hasMessageContaining("Tier HDD")
        .hasMessageContaining("3000 bytes of blocks of files not yet persisted");

    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(200);
    assertThat(store.awaitedBytes()).isZero();
    assertThat(store.usedBytes()).isEqualTo(5 * BLOCK);
    assertThat(write(store, 7, 0).length()).as("the id claim was dropped; other ids still work").isZero();
  }

  @Test
  void waitingReservation_isWokenWhenABlockBecomesEvictable_andEvictsIt() throws Exception {
    for (long id = 1; id <= 5; id++) {
      write(store, id, BLOCK);
    }
    Future<TempBlock> waiting = pool.submit(() -> store.createReserved(6, BLOCK, 30_000));
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .until(() -> store.awaitedBytes() == BLOCK);
    assertThat(waiting.isDone()).isFalse();

    store.markEvictable(List.of(3L)); // its file got persisted

    TempBlock t = waiting.get(10, TimeUnit.SECONDS);
    assertThat(store.reserved(6)).isSameAs(t);
    t.append(ByteBuffer.wrap(content(6, BLOCK)));
    store.commit(t);
    assertThat(events.removed()).containsExactly(3L);
    assertThat(read(store, 6)).isEqualTo(content(6, BLOCK));
    assertThat(store.awaitedBytes()).isZero();
  }

  @Test
  void waitingReservation_isWokenByARemoval() throws Exception {
    for (long id = 1; id <= 5; id++) {
      write(store, id, BLOCK);
    }
    Future<TempBlock> waiting = pool.submit(() -> store.createReserved(6, BLOCK, 30_000));
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .until(() -> store.awaitedBytes() == BLOCK);

    store.remove(5); // its file was deleted

    assertThat(waiting.get(10, TimeUnit.SECONDS).blockId()).isEqualTo(6);
  }

  @Test
  void manyReservingWriters_andAPersister_together_loseNoUnpersistedBlock_andAllFinish() throws Exception {
    int writers = 6;
    int perWriter = 8; // 48 blocks through a store that holds 5
    Set<Long> persisted = ConcurrentHashMap.newKeySet();
    Set<Long> committed = ConcurrentHashMap.newKeySet();
    List<Future<Integer>> done = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      long base = (w + 1) * 1000L;
      done.add(pool.submit(() -> {
        int n = 0;
        for (int j = 0; j < perWriter; j++) {
          long id = base + j;
          TempBlock t = store.createReserved(id, BLOCK, 30_000);
          store.reserved(id).append(ByteBuffer.wrap(content(id, BLOCK)));
          store.commit(t);
          committed.add(id);
          n++;
        }
        return n;
      }));
    }
    // The "persist scheduler": marks committed blocks persisted, oldest first, a few at a time.
    Future<?> persister = pool.submit(() -> {
      while (!Thread.currentThread().isInterrupted()) {
        List<Long> batch = new ArrayList<>();
        for (long id : committed) {
          if (persisted.add(id)) {
            batch.add(id);
          }
          if (batch.size() == 2) {
            break;
          }
        }
        store.markEvictable(batch);
        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // pace it: 2 cores
      }
      return null;
    });
    int total = 0;
    for (Future<Integer> f : done) {
      total += f.get(60, TimeUnit.SECONDS);
    }
    persister.cancel(true);

    assertThat(total).isEqualTo(writers * perWriter);
    assertThat(persisted).as("only blocks marked persisted ever left").containsAll(events.removed());
    for (BlockMeta b : store.committedBlocks()) {
      assertThat(read(store, b.blockId())).isEqualTo(content(b.blockId(), BLOCK));
    }
    assertThat(store.usedBytes()).isEqualTo((long) store.committedBlocks().size() * BLOCK);
    assertThat(store.awaitedBytes()).isZero();
  }
}
