package io.strata.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tick of {@link CallDeadlines} cancels a call's context once its deadline passed, and the call's failure reads
 * DEADLINE_EXCEEDED. The calls here wait on their context as a blocking gRPC call does (gRPC ends such a call with
 * CANCELLED and the context's cause); {@code MasterCallDeadlineIT} runs the real thing against a frozen master.
 */
class CallDeadlinesTest {
  private final CallDeadlines deadlines = new CallDeadlines();

  @AfterEach
  void close() {
    deadlines.close();
  }

  /** Waits until the current context is cancelled, then fails as a cancelled gRPC call does. */
  private static String waitForCancel(long maxMs) {
    CountDownLatch cancelled = new CountDownLatch(1);
    Context.current().addListener(c -> cancelled.countDown(), Runnable::run);
    try {
      if (!cancelled.await(maxMs, TimeUnit.MILLISECONDS)) {
        return "not cancelled";
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    }
    throw Status.CANCELLED.withCause(Context.current().cancellationCause()).withDescription("Context cancelled")
        .asRuntimeException();
  }

  @Test
  void aCallPastItsDeadline_isCancelled_andFailsWithDeadlineExceeded() {
    long start = System.nanoTime();
    assertThatThrownBy(() -> deadlines.call(200, () -> waitForCancel(10_000)))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
          assertThat(e.getStatus().getDescription()).contains("200 ms");
        });
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(tookMs).isGreaterThanOrEqualTo(200).isLessThan(5_000);
    assertThat(deadlines.running()).isZero();
  }

  @Test
  void aCallWithinItsDeadline_returns_andOtherFailuresPassThrough() {
    assertThat(deadlines.call(10_000, () -> "answer")).isEqualTo("answer");
    assertThatThrownBy(() -> deadlines.call(10_000, () -> {
      throw Status.NOT_FOUND.withDescription("no such file").asRuntimeException();
    })).isInstanceOfSatisfying(StatusRuntimeException.class,
        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
    assertThat(deadlines.running()).isZero();
  }

  @Test
  void anIdleClient_hasNoTickScheduled_andItsNextCallArmsItAgain() throws Exception {
    assertThat(deadlines.call(10_000, () -> "quick")).isEqualTo("quick");
    // The tick stops once no call is left, and stays stopped (three ticks' time).
    await().atMost(Duration.ofSeconds(10)).until(() -> !deadlines.ticking());
    await().during(Duration.ofMillis(3 * CallDeadlines.TICK_MS)).atMost(Duration.ofSeconds(10))
        .until(() -> !deadlines.ticking());
    assertThatThrownBy(() -> deadlines.call(150, () -> waitForCancel(10_000)))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
  }

  @Test
  void theCallersContext_isLeftAsItWas() {
    Context before = Context.current();
    deadlines.call(10_000, () -> {
      assertThat(Context.current()).isNotSameAs(before);
      return null;
    });
    assertThat(Context.current()).isSameAs(before);
    assertThat(before.isCancelled()).isFalse();
  }
}
