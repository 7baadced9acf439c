package io.strata.worker.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** What every {@link BlockAnnotator} must do; run once per implementation by its subclasses. */
abstract class BlockAnnotatorContractTest {
  abstract BlockAnnotator newAnnotator();

  /** Blocks remembered by the annotator, for the memory bound. */
  abstract int trackedBlocks(BlockAnnotator annotator);

  private static void access(BlockAnnotator annotator, long... ids) {
    for (long id : ids) {
      annotator.onAccess(id);
    }
  }

  @Test
  void coldestFirst_ofNoCandidates_isEmpty() {
    BlockAnnotator annotator = newAnnotator();
    access(annotator, 1, 2);
    assertThat(annotator.coldestFirst(List.of())).isEmpty();
  }

  @Test
  void coldestFirst_putsBlocksAccessedOnceInAccessOrder() {
    BlockAnnotator annotator = newAnnotator();
    access(annotator, 30, 10, 20);
    assertThat(annotator.coldestFirst(List.of(10L, 20L, 30L))).containsExactly(30L, 10L, 20L);
  }

  @Test
  void coldestFirst_putsNeverSeenBlocksFirst_inAscendingIdOrder() {
    BlockAnnotator annotator = newAnnotator();
    access(annotator, 5, 6);
    assertThat(annotator.coldestFirst(List.of(6L, 99L, 5L, 7L))).containsExactly(7L, 99L, 5L, 6L);
  }

  @Test
  void coldestFirst_putsABlockBothMostRecentAndMostFrequentLast() {
    BlockAnnotator annotator = newAnnotator();
    access(annotator, 1, 2, 3, 1, 1, 1);
    assertThat(annotator.coldestFirst(List.of(1L, 2L, 3L))).endsWith(1L);
  }

  @Test
  void coldestFirst_returnsOnlyTheCandidates_eachOnce() {
    BlockAnnotator annotator = newAnnotator();
    access(annotator, 1, 2, 3, 4);
    assertThat(annotator.coldestFirst(List.of(3L, 1L, 3L))).containsExactly(1L, 3L);
  }

  @Test
  void coldestFirst_returnsAModifiableList() {
    BlockAnnotator annotator = newAnnotator();
    List<Long> order = annotator.coldestFirst(List.of(1L, 2L));
    order.remove(0);
    assertThat(order).containsExactly(2L);
  }

  @Test
  void onRemove_forgetsTheBlock_soItCountsAsNeverSeen() {
    BlockAnnotator annotator = newAnnotator();
    access(annotator, 1, 2, 3, 2, 2);
    annotator.onRemove(2);
    assertThat(trackedBlocks(annotator)).isEqualTo(2);
    assertThat(annotator.coldestFirst(List.of(1L, 2L, 3L))).containsExactly(2L, 1L, 3L);
  }

  @Test
  void onRemove_ofAnUnknownBlock_isANoOp() {
    BlockAnnotator annotator = newAnnotator();
    access(annotator, 1, 2);
    annotator.onRemove(42);
    assertThat(trackedBlocks(annotator)).isEqualTo(2);
    assertThat(annotator.coldestFirst(List.of(2L, 1L))).containsExactly(1L, 2L);
  }

  @Test
  void memory_staysBounded_whenBlocksComeAndGo() {
    BlockAnnotator annotator = newAnnotator();
    for (long id = 0; id < 10_000; id++) {
      annotator.onAccess(id);
      annotator.onAccess(id);
      if (id >= 3) {
        annotator.onRemove(id - 3);
      }
    }
    assertThat(trackedBlocks(annotator)).isEqualTo(3);
  }

  @Test
  void concurrentAccesses_keepEachThreadsAccessOrder_andLoseNoBlock() throws Exception {
    BlockAnnotator annotator = newAnnotator();
    int threads = 4;
    int perThread = 1_000;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        long base = t * 1_000_000L;
        futures.add(pool.submit(() -> {
          start.await();
          for (int i = 0; i < perThread; i++) {
            annotator.onAccess(base + i);
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
    List<Long> all = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      for (int i = 0; i < perThread; i++) {
        all.add(t * 1_000_000L + i);
      }
    }
    List<Long> order = annotator.coldestFirst(all);
    assertThat(order).hasSize(threads * perThread);
    assertThat(trackedBlocks(annotator)).isEqualTo(threads * perThread);
    // Each block was accessed once, so within one thread's blocks the order is that thread's order.
    for (int t = 0; t < threads; t++) {
      long base = t * 1_000_000L;
      List<Long> mine = order.stream().filter(id -> id / 1_000_000L == base / 1_000_000L).toList();
      assertThat(mine).as("thread %d", t).isSorted().hasSize(perThread);
    }
    Set<Long> distinct = order.stream().collect(Collectors.toSet());
    assertThat(distinct).hasSize(threads * perThread);
  }
}
