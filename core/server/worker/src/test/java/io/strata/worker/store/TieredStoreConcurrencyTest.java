package io.strata.worker.store;

import static io.strata.worker.store.StoreFixture.blockFiles;
import static io.strata.worker.store.StoreFixture.bytesOnDisk;
import static io.strata.worker.store.StoreFixture.content;
import static io.strata.worker.store.StoreFixture.read;
import static io.strata.worker.store.StoreFixture.readAll;
import static io.strata.worker.store.StoreFixture.tmpFiles;
import static io.strata.worker.store.StoreFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.InternalException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.worker.store.BlockStore.BlockMeta;
import io.strata.worker.store.BlockStore.DirReport;
import io.strata.worker.store.BlockStore.ReadHandle;
import io.strata.worker.store.BlockStore.TempBlock;
import io.strata.worker.store.RecordingEvents.Moved;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bounded stress of the tiered store: writers, readers, promoting readers, removers and the tier manager
 * at once, on small quotas so blocks move and leave all the time. Every run does a fixed number of
 * operations and waits at most {@value #TIMEOUT_S} s in all: a deadlock fails the test instead of
 * hanging the build. Block contents derive from their ids, so any successful read is checked byte for
 * byte; a read may find its block gone (evicted out of the last tier), which is counted, not failed.
 */
class TieredStoreConcurrencyTest {
  private static final int WRITERS = 6;
  private static final int READERS = 6;
  private static final int OPS = 300;
  private static final long TIMEOUT_S = 60;
  private static final long TEMP_TIMEOUT_MS = 60_000;

  @TempDir
  Path root;

  private final RecordingEvents events = new RecordingEvents();
  private final MutableClock clock = new MutableClock(0);
  private ExecutorService pool;
  private long deadlineNanos;

  @BeforeEach
  void startPool() {
    pool = Executors.newCachedThreadPool();
    deadlineNanos = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
  }

  @AfterEach
  void stopPool() {
    pool.shutdownNow();
  }

  /** Waits for every future within the test's one deadline; rethrows what a task threw. */
  private <T> List<T> awaitAll(List<Future<T>> futures) throws Exception {
    List<T> out = new ArrayList<>();
    for (Future<T> f : futures) {
      out.add(f.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS));
    }
    return out;
  }

  private static int lengthOf(long id) {
    return 200 + (int) Math.floorMod(id * 7919, 1001); // 200..1200 bytes
  }

  private static void assertMatches(ReadHandle h, long id) throws IOException {
    assertThat(h.meta().blockId()).isEqualTo(id);
    assertThat(h.meta().length()).as("length of block %d", id).isEqualTo(lengthOf(id));
    assertThat(readAll(h.channel())).as("bytes of block %d", id).isEqualTo(content(id, lengthOf(id)));
  }

  /** Checks that the store's index, accounting, files and locks agree once every thread is done. */
  private static void assertQuiescentStateConsistent(TieredBlockStore store, List<Path> dirs) {
    List<BlockMeta> committed = store.committedBlocks();
    assertThat(store.usedBytes()).as("used = committed bytes")
        .isEqualTo(committed.stream().mapToLong(BlockMeta::length).sum());
    for (Path d : dirs) {
      assertThat(tmpFiles(d)).as("tmp of %s", d).isEmpty();
    }
    for (DirReport r : store.dirReports()) {
      assertThat(r.good()).as("%s is good", r.path()).isTrue();
      assertThat(r.usedBytes()).as("used of %s", r.path()).isEqualTo(bytesOnDisk(Path.of(r.path())))
          .isLessThanOrEqualTo(r.capacityBytes());
    }
    List<Long> files = new ArrayList<>();
    for (Path d : dirs) {
      for (Path f : blockFiles(d)) {
        files.add(Long.parseLong(f.getFileName().toString()));
      }
    }
    assertThat(files).as("exactly one file per committed block: no orphan copies")
        .containsExactlyInAnyOrderElementsOf(committed.stream().map(BlockMeta::blockId).toList());
    assertThat(store.locks.poolSize()).as("no lock left held").isZero();
  }

  // ---------------------------------------------------------------- the mixed workload

  @Test
  void writersReadersPromotersAndTheTierManager_together_neverCorruptLoseOrLeak() throws Exception {
    Path mem = root.resolve("mem");
    Path ssd0 = root.resolve("ssd0");
    Path ssd1 = root.resolve("ssd1");
    Path hdd = root.resolve("hdd");
    List<Path> dirs = List.of(mem, ssd0, ssd1, hdd);
    TieredBlockStore store = StoreFixture.builder()
        .tier("MEM", 8_000, mem)
        .tier("SSD", 8_000, ssd0, ssd1)
        .tier("HDD", 24_000, hdd)
        .events(events)
        .clock(clock)
        .build();
    TierManager tm = new TierManager(store, 0.9, 0.6, TEMP_TIMEOUT_MS, 4);
    List<Long> written = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch start = new CountDownLatch(1);
    CountDownLatch firstCommit = new CountDownLatch(1);
    AtomicLong exhausted = new AtomicLong();
    AtomicLong readsOk = new AtomicLong();
    AtomicLong readsGone = new AtomicLong();

    List<Future<Integer>> writers = new ArrayList<>();
    for (int w = 0; w < WRITERS; w++) {
      long base = (w + 1) * 1_000_000L;
      writers.add(pool.submit(() -> {
        start.await();
        int committed = 0;
        for (int j = 0; j < OPS; j++) {
          long id = base + j;
          byte[] data = content(id, lengthOf(id));
          TempBlock t = store.createTemp(id, data.length);
          try {
            for (int off = 0; off < data.length; off += 300) {
              t.append(ByteBuffer.wrap(data, off, Math.min(300, data.length - off)));
            }
          } catch (ResourceExhaustedException e) {
            // Every block of the dir was read-locked at that moment: the caller's retry is elsewhere.
            store.abort(t);
            exhausted.incrementAndGet();
            continue;
          }
          store.commit(t);
          store.markEvictable(List.of(id)); // blocks of persisted files: eviction may drop them
          written.add(id);
          firstCommit.countDown();
          committed++;
        }
        return committed;
      }));
    }

    List<Future<Void>> others = new ArrayList<>();
    for (int r = 0; r < READERS; r++) {
      long seed = r;
      others.add(pool.submit(() -> {
        Random rnd = new Random(seed);
        start.await();
        firstCommit.await();
        for (int j = 0; j < OPS; j++) {
          long id;
          synchronized (written) {
            id = written.get(rnd.nextInt(written.size()));
          }
          try (ReadHandle h = store.openForRead(id, false)) {
            assertMatches(h, id);
            readsOk.incrementAndGet();
          } catch (NotFoundException e) {
            readsGone.incrementAndGet();
          }
        }
        return null;
      }));
    }
    others.add(pool.submit(() -> {
      Random rnd = new Random(99);
      start.await();
      firstCommit.await();
      for (int j = 0; j < OPS; j++) {
        tm.runOnce();
        long id;
        synchronized (written) {
          id = written.get(rnd.nextInt(written.size()));
        }
        try (ReadHandle h = store.openForRead(id, true)) {
          assertMatches(h, id);
          readsOk.incrementAndGet();
        } catch (NotFoundException e) {
          readsGone.incrementAndGet();
        }
      }
      return null;
    }));

    start.countDown();
    int committed = awaitAll(writers).stream().mapToInt(Integer::intValue).sum();
    awaitAll(others);

    assertThat(committed + exhausted.get()).isEqualTo((long) WRITERS * OPS);
    assertThat(committed).as("almost every write finds room").isGreaterThan(WRITERS * OPS * 9 / 10);
    assertThat(readsOk.get() + readsGone.get()).isEqualTo((long) (READERS + 1) * OPS);
    assertThat(readsOk.get()).as("reads did find blocks").isPositive();
    assertQuiescentStateConsistent(store, dirs);

    // Nothing vanished silently: every committed write is still here or was reported removed, not both.
    Set<Long> present = new HashSet<>();
    for (BlockMeta m : store.committedBlocks()) {
      present.add(m.blockId());
      assertThat(m.length()).isEqualTo(lengthOf(m.blockId()));
      assertThat(read(store, m.blockId())).as("block %d", m.blockId())
          .isEqualTo(content(m.blockId(), lengthOf(m.blockId())));
    }
    Set<Long> removed = new HashSet<>(events.removed());
    assertThat(events.removed()).as("each block leaves once").doesNotHaveDuplicates();
    assertThat(removed).doesNotContainAnyElementsOf(present);
    Set<Long> accounted = new HashSet<>(present);
    accounted.addAll(removed);
    assertThat(accounted).containsExactlyInAnyOrderElementsOf(new HashSet<>(written));
    assertThat(removed).as("the quotas were small: blocks did leave").isNotEmpty();

    // The last move reported for a block names the tier it is in (moves of one block are serialized).
    Map<Long, String> lastMove = new HashMap<>();
    for (Moved m : events.moved()) {
      lastMove.put(m.blockId(), m.tier());
    }
    assertThat(lastMove).as("blocks did move between tiers").isNotEmpty();
    for (BlockMeta m : store.committedBlocks()) {
      if (lastMove.containsKey(m.blockId())) {
        assertThat(m.tier()).as("tier of block %d", m.blockId()).isEqualTo(lastMove.get(m.blockId()));
      }
    }
  }

  // ---------------------------------------------------------------- removal racing movers and readers

  @Test
  void remove_racingWithReadersAndPromotions_alwaysRemovesTheBlock_andTheIdIsWritableAgain() throws Exception {
    int size = 64 * 1024; // a move copies this much while holding the block's write lock
    Path mem = root.resolve("mem");
    Path ssd = root.resolve("ssd");
    TieredBlockStore store = StoreFixture.builder()
        .tier("MEM", 2L * size, mem)
        .tier("SSD", 4L * size, ssd)
        .events(events)
        .build();
    write(store, 1, size);
    store.pin(1); // MEM keeps one free slot for the promotions

    for (int round = 0; round < 150; round++) {
      long spacer = 1000 + round;
      long victim = 7;
      write(store, spacer, size); // fills MEM's free slot...
      assertThat(write(store, victim, size).tier()).isEqualTo("SSD"); // ...so the victim starts in SSD
      store.remove(spacer); // and MEM has room to promote it into
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Integer>> tasks = new ArrayList<>();
      for (int r = 0; r < 6; r++) {
        boolean promote = r % 2 == 0; // promoters hold the write lock while they copy; readers a read lock
        tasks.add(pool.submit(() -> {
          go.await();
          int ok = 0;
          for (int k = 0; k < 3; k++) {
            try (ReadHandle h = store.openForRead(victim, promote)) {
              assertThat(readAll(h.channel())).isEqualTo(content(victim, size));
              ok++;
            } catch (NotFoundException e) {
              // the removal won
            }
          }
          return ok;
        }));
      }
      Callable<Integer> remover = () -> {
        go.await();
        return store.remove(victim) ? 1 : 0;
      };
      tasks.add(pool.submit(remover));
      go.countDown();
      List<Integer> results = awaitAll(tasks);

      assertThat(results.get(6)).as("round %d: the block was there to remove", round).isEqualTo(1);
      int rd = round;
      // The last reader out hands the removal to the store's own thread.
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() -> {
        assertThatThrownBy(() -> store.get(victim)).as("round %d: removed once every lock is gone", rd)
            .isInstanceOf(NotFoundException.class);
        assertThat(store.locks.poolSize()).isZero(); // the removal's own lock too
      });
      assertThat(store.usedBytes()).isEqualTo(size); // the pinned block only
      // The id carries nothing over into the next block written with it.
      write(store, victim, content(victim + round, 100), 100);
      assertThat(read(store, victim)).as("round %d", round).isEqualTo(content(victim + round, 100));
      assertThat(store.remove(victim)).isTrue();
      assertThatThrownBy(() -> store.get(victim)).isInstanceOf(NotFoundException.class);
    }
    assertQuiescentStateConsistent(store, List.of(mem, ssd));
  }

  // ---------------------------------------------------------------- the reaper racing a live writer

  @Test
  void reaper_racingWithAWriterThatWakesUp_abortsOnlyTheTempBlock_neverFailsTheDir() throws Exception {
    Path ssd = root.resolve("ssd");
    TieredBlockStore store = StoreFixture.builder()
        .tier("SSD", 1L << 30, ssd)
        .events(events)
        .clock(clock)
        .build();
    TierManager tm = new TierManager(store, 0.9, 0.5, TEMP_TIMEOUT_MS, 0);

    for (int round = 0; round < 50; round++) {
      TempBlock t = store.createTemp(round, 1L << 30);
      CountDownLatch writing = new CountDownLatch(1);
      Future<Exception> writer = pool.submit(() -> {
        ByteBuffer chunk = ByteBuffer.allocate(512);
        try {
          while (true) {
            chunk.clear();
            t.append(chunk);
            writing.countDown();
          }
        } catch (Exception e) {
          return e;
        }
      });
      writing.await(TIMEOUT_S, TimeUnit.SECONDS);
      // Time jumps past the timeout and the reaper runs, again and again, until it catches the writer
      // between appends (after an append, the writer is not idle any more).
      while (!writer.isDone()) {
        clock.advance(Duration.ofMillis(TEMP_TIMEOUT_MS + 1));
        tm.reapAbandoned();
        assertThat(System.nanoTime()).as("deadline").isLessThan(deadlineNanos);
      }
      Exception e = awaitAll(List.of(writer)).get(0);

      assertThat(e).as("round %d", round).isInstanceOf(InternalException.class);
      assertThat(events.dirFailures()).as("round %d: an aborted write is not a failed dir", round).isEmpty();
      assertThat(store.dirReports().get(0).good()).isTrue();
      assertThat(store.usedBytes()).as("round %d: the aborted block's bytes are all released", round).isZero();
      assertThat(tmpFiles(ssd)).isEmpty();
    }
    write(store, 1000, 500);
    assertThat(read(store, 1000)).isEqualTo(content(1000, 500));
  }
}
