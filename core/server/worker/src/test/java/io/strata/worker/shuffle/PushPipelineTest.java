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

  private static List<ShuffleStore.Batch> batch(int bytes) {
    return List.of(new ShuffleStore.Batch(0, 7, 0, 1, 0, bytes, 0, ByteBuffer.allocate(bytes)));
  }

  @Test
  void push_pastTheHighWatermark_isToldToBackOff_untilEarlierPushesAreAnswered() throws Exception {
    HandExecutor pool = new HandExecutor(100);
    ShuffleStore store = new ShuffleStore(null, null, null, 1 << 20, Runnable::run, 64 << 20, 256L << 20, 1L << 30);
    PushPipeline p = new PushPipeline(store, (r, a, s, b) -> CompletableFuture.completedFuture(null), pool, 1000, 25);
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
    ShuffleStore store = new ShuffleStore(null, null, null, 1 << 20, Runnable::run, 64 << 20, 256L << 20, 1L << 30);
    PushPipeline p = new PushPipeline(store, (r, a, s, b) -> CompletableFuture.completedFuture(null), pool,
        1 << 20, 40);
    p.push("app", 0, batch(10), false);
    PushPipeline.Outcome refused = p.push("app", 0, batch(10), false).get();
    assertThat(refused.applied()).isFalse();
    assertThat(refused.message()).contains("strata.worker.shuffle.apply.queue.max");
    assertThat(p.bufferedBytes()).isEqualTo(10);
  }
}
