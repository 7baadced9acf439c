package io.strata.worker.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.exception.NotFoundException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

/**
 * Admission of pushes: past the high watermark of buffered bytes, or with the apply queue full, a push is
 * answered BACK_OFF at once with nothing applied; bytes count until the push is answered. The apply pool
 * is an executor the test runs by hand, so "buffered" is exact.
 */
class PushPipelineTest {
  /** Holds tasks until the test runs them; refuses past {@code max} queued. */
  private static final class HandExecutor implements Executor {
    final ArrayDeque<Runnable> queued = new ArrayDeque<>();
    final int max;

    HandExecutor(int max) {
      this.max = max;
    }

    @Override
    public void execute(Runnable r) {
      if (queued.size() >= max) {
        throw new RejectedExecutionException("full");
      }
      queued.add(r);
    }

    void runAll() {
      while (!queued.isEmpty()) {
        queued.poll().run();
      }
    }
  }

  /** A pipeline over a store with no partitions, whose forwards are acked at once; forwards bound 2x the watermark. */
  private static PushPipeline pipeline(HandExecutor pool, long watermark, long backOffMs) {
    ShuffleStore store = new ShuffleStore(null, null, null, 1 << 20, Runnable::run, 64 << 20, 256L << 20, 1L << 30);
    return new PushPipeline(store, (r, a, s, b) -> CompletableFuture.completedFuture(null), pool, watermark,
        backOffMs);
  }

  private static List<ShuffleStore.Batch> batch(int bytes) {
    return List.of(new ShuffleStore.Batch(0, 7, 0, 1, 0, bytes, 0, ByteBuffer.allocate(bytes)));
  }

  @Test
  void push_pastTheHighWatermark_isToldToBackOff_untilEarlierPushesAreAnswered() throws Exception {
    HandExecutor pool = new HandExecutor(100);
    PushPipeline p = pipeline(pool, 1000, 25);
    CompletableFuture<PushPipeline.Outcome> first = p.push("app", 0, batch(600), false);
    assertThat(p.bufferedBytes()).isEqualTo(600);
    PushPipeline.Outcome second = p.push("app", 0, batch(600), false).get();
    assertThat(second.applied()).isFalse();
    assertThat(second.retryAfterMs()).isEqualTo(25);
    assertThat(second.message()).contains("strata.worker.shuffle.buffer.high.watermark").contains("600");
    assertThat(p.backOffs()).isEqualTo(1);
    assertThat(p.bufferedBytes()).isEqualTo(600);
    pool.runAll(); // the first is applied: its partition is unknown here, so it fails, naming it
    assertThat(first).isCompletedExceptionally();
    try {
      first.get();
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(NotFoundException.class).hasMessageContaining("Unknown shuffle partition");
    }
    assertThat(p.bufferedBytes()).isZero();
    assertThat(p.appliedBytes()).isZero(); // nothing was appended: the pushed-bytes metric does not move
    assertThat(p.appliedBatches()).isZero();
    // Answered, its bytes no longer count: the same push is admitted now.
    CompletableFuture<PushPipeline.Outcome> again = p.push("app", 0, batch(600), false);
    assertThat(again).isNotDone();
    assertThat(p.bufferedBytes()).isEqualTo(600);
  }

  @Test
  void push_withTheApplyQueueFull_isToldToBackOff() throws Exception {
    HandExecutor pool = new HandExecutor(1);
    PushPipeline p = pipeline(pool, 1 << 20, 40);
    p.push("app", 0, batch(10), false);
    PushPipeline.Outcome refused = p.push("app", 0, batch(10), false).get();
    assertThat(refused.applied()).isFalse();
    assertThat(refused.message()).contains("strata.worker.shuffle.apply.queue.max");
    assertThat(p.bufferedBytes()).isEqualTo(10);
  }

  @Test
  void forwards_areBoundedTooAndCountedApart_soAPushMarkedForwardedCannotSkipTheWorkersMemoryBound() throws Exception {
    HandExecutor pool = new HandExecutor(100);
    PushPipeline p = pipeline(pool, 1000, 25); // forwards: 2000
    p.push("app", 0, batch(900), false);
    CompletableFuture<PushPipeline.Outcome> f1 = p.push("app", 0, batch(1500), true);
    assertThat(f1).as("a forward is not held back by the clients' pushes").isNotDone();
    PushPipeline.Outcome f2 = p.push("app", 0, batch(600), true).get();
    assertThat(f2.applied()).as("past the bound for forwards").isFalse();
    assertThat(f2.message()).contains("forwarded by primaries").contains("1500");
    assertThat(p.bufferedBytes()).isEqualTo(2400);
    PushPipeline.Outcome c = p.push("app", 0, batch(200), false).get();
    assertThat(c.applied()).as("the clients' watermark is theirs alone").isFalse();
    assertThat(c.message()).contains("strata.worker.shuffle.buffer.high.watermark");
  }

  @Test
  void aForwardItsPrimaryGaveUp_keepsCounting_untilItsQueuedTaskHasRun() throws Exception {
    HandExecutor pool = new HandExecutor(100);
    PushPipeline p = pipeline(pool, 1000, 25);
    CompletableFuture<PushPipeline.Outcome> forward = p.push("app", 0, batch(700), true);
    forward.cancel(false); // the primary's call was cancelled: answered, but the request waits in the queue
    assertThat(p.bufferedBytes()).as("its bytes are still held by the queued task").isEqualTo(700);
    pool.runAll();
    assertThat(p.bufferedBytes()).isZero();
  }

  @Test
  void openPartitions_pastTheLimit_isRefusedWhole_namingTheKey_andReopeningThoseOpenStillWorks() throws Exception {
    ShuffleStore store = new ShuffleStore(null, null, null, 1 << 20, Runnable::run, 64 << 20, 256L << 20, 1L << 30,
        3);
    store.open(List.of(spec(1), spec(2)));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.open(List.of(spec(3), spec(4))))
        .isInstanceOf(io.strata.common.exception.ResourceExhaustedException.class)
        .hasMessageContaining("strata.worker.shuffle.partitions.max (3)");
    store.open(List.of(spec(1), spec(2), spec(3))); // one new: fits
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.open(List.of(spec(4))))
        .isInstanceOf(io.strata.common.exception.ResourceExhaustedException.class);
    store.open(List.of(spec(2))); // already open: no new one
    assertThat(store.find("app", 1, 3, 3)).isNotNull();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.find("app", 1, 4, 4))
        .isInstanceOf(NotFoundException.class);
  }

  private static ShuffleStore.PartitionSpec spec(long id) {
    return new ShuffleStore.PartitionSpec("app", 1, (int) id, id, 1 << 20, null);
  }
}
