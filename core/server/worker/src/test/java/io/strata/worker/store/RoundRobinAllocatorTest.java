package io.strata.worker.store;

import static io.strata.worker.store.FakeDir.free;
import static io.strata.worker.store.FakeDir.onTier;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class RoundRobinAllocatorTest extends AllocatorContractTest {
  @Override
  Allocator newAllocator() {
    return new RoundRobinAllocator();
  }

  private static List<Integer> indexesOf(Allocator allocator, List<FakeDir> dirs, long bytes, int times) {
    List<Integer> picked = new ArrayList<>();
    for (int i = 0; i < times; i++) {
      DirView dir = allocator.allocate(dirs, bytes);
      picked.add(dir == null ? null : dir.dirIndex());
    }
    return picked;
  }

  @Test
  void allocate_takesTheDirsInTurn_andWrapsAround() {
    List<FakeDir> dirs = List.of(free(0, 500), free(1, 500), free(2, 500));
    assertThat(indexesOf(newAllocator(), dirs, 10, 7)).containsExactly(0, 1, 2, 0, 1, 2, 0);
  }

  @Test
  void allocate_skipsAFullDir_andKeepsTheTurnForTheOthers() {
    List<FakeDir> dirs = List.of(free(0, 500), free(1, 5), free(2, 500));
    assertThat(indexesOf(newAllocator(), dirs, 10, 5)).containsExactly(0, 2, 0, 2, 0);
  }

  @Test
  void allocate_skipsABadDir() {
    List<FakeDir> dirs = List.of(free(0, 500).bad(), free(1, 500), free(2, 500));
    assertThat(indexesOf(newAllocator(), dirs, 10, 4)).containsExactly(1, 2, 1, 2);
  }

  @Test
  void allocate_afterAFailure_resumesTheTurnWhereItWas() {
    Allocator allocator = newAllocator();
    List<FakeDir> dirs = List.of(free(0, 500), free(1, 500), free(2, 500));
    assertThat(allocator.allocate(dirs, 10).dirIndex()).isEqualTo(0);
    assertThat(allocator.allocate(dirs, 1000)).isNull();
    assertThat(allocator.allocate(dirs, 10).dirIndex()).isEqualTo(1);
  }

  @Test
  void allocate_keepsTheTurn_whenTheCallerLeavesTheNextDirOut() {
    Allocator allocator = newAllocator();
    FakeDir d0 = free(0, 500);
    FakeDir d1 = free(1, 500);
    FakeDir d2 = free(2, 500);
    assertThat(allocator.allocate(List.of(d0, d1, d2), 10)).isSameAs(d0);
    // d1 dropped out of the list (went bad and was removed): the turn goes on to d2, not back to d0.
    assertThat(allocator.allocate(List.of(d0, d2), 10)).isSameAs(d2);
    assertThat(allocator.allocate(List.of(d0, d1, d2), 10)).isSameAs(d0);
  }

  @Test
  void allocate_keepsASeparateTurnPerTier() {
    Allocator allocator = newAllocator();
    List<FakeDir> mem = List.of(onTier(0, 0, 500), onTier(0, 1, 500));
    List<FakeDir> ssd = List.of(onTier(1, 0, 500), onTier(1, 1, 500), onTier(1, 2, 500));

    assertThat(allocator.allocate(mem, 10)).isSameAs(mem.get(0));
    assertThat(allocator.allocate(ssd, 10)).isSameAs(ssd.get(0));
    assertThat(allocator.allocate(ssd, 10)).isSameAs(ssd.get(1));
    assertThat(allocator.allocate(mem, 10)).isSameAs(mem.get(1));
    assertThat(allocator.allocate(mem, 10)).isSameAs(mem.get(0));
    assertThat(allocator.allocate(ssd, 10)).isSameAs(ssd.get(2));
  }

  @Test
  void allocate_fromManyThreads_spreadsBlocksExactlyEvenly() throws Exception {
    Allocator allocator = newAllocator();
    List<FakeDir> dirs = List.of(free(0, 500), free(1, 500), free(2, 500));
    int threads = 4;
    int perThread = 300;
    AtomicIntegerArray counts = new AtomicIntegerArray(dirs.size());
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        futures.add(pool.submit(() -> {
          start.await();
          for (int i = 0; i < perThread; i++) {
            counts.incrementAndGet(allocator.allocate(dirs, 10).dirIndex());
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> f : futures) {
        f.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    // A cursor that lost updates under contention would hand some dir more turns than the others.
    int each = threads * perThread / dirs.size();
    for (int i = 0; i < dirs.size(); i++) {
      assertThat(counts.get(i)).as("blocks in dir %d", i).isEqualTo(each);
    }
  }
}
