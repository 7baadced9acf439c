package io.strata.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.strata.common.net.WorkerAddress;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A reader waiting for the open ahead of its next block never waits for ever: the context's executor drops the
 * opens still queued when it closes (shutdownNow), and such an open never completes. A real one-thread executor,
 * kept busy so the open stays queued; no worker is reached (the open never runs).
 */
class ShortCircuitAheadTest {
  private static final WorkerAddress WORKER = new WorkerAddress("localhost", 40_000);

  /** One thread, kept busy until the executor is shut down: what is started on it stays queued. */
  private static ExecutorService busyExecutor() {
    ExecutorService background = Executors.newSingleThreadExecutor();
    CountDownLatch never = new CountDownLatch(1);
    background.execute(() -> {
      try {
        never.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    return background;
  }

  @Test
  void anOpenDroppedByAClosingContext_isGivenUp_andTheReaderOpensItself() throws Exception {
    ExecutorService background = busyExecutor();
    AtomicBoolean closed = new AtomicBoolean();
    ShortCircuitAhead ahead = new ShortCircuitAhead(null, background, false, closed::get);
    ahead.start(WORKER, 7, false, 0); // queued behind the busy task
    closed.set(true);
    assertThat(background.shutdownNow()).hasSize(1); // the open, dropped unrun
    assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertThat(ahead.take(WORKER, 7)).isNull());
  }

  @Test
  void anInterruptedReader_stopsWaiting_withItsFlagSetAgain() throws Exception {
    ExecutorService background = busyExecutor();
    try {
      ShortCircuitAhead ahead = new ShortCircuitAhead(null, background, false, () -> false);
      ahead.start(WORKER, 7, false, 0);
      assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
        Thread.currentThread().interrupt();
        assertThat(ahead.take(WORKER, 7)).isNull();
        assertThat(Thread.interrupted()).isTrue();
      });
    } finally {
      background.shutdownNow();
    }
  }
}
