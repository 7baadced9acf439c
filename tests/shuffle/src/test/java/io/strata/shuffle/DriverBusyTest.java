package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.SparkException;
import org.junit.jupiter.api.Test;

/**
 * An executor's ask of the driver's endpoint that is answered busy ({@link DriverEndpoint.Busy}, wrapped by Spark's
 * RPC as it arrives) is asked again after a pause, up to a number of tries; any other failure is thrown at once
 * ({@link StrataShuffleManager#whileBusy}). And the endpoint answers revives on a pool of their own.
 */
class DriverBusyTest {
  /** What Spark's askSync throws (a checked exception in Java, thrown from Scala), as the supplier's failure. */
  private static RuntimeException busyAnswer() {
    return StrataShuffleReader.sneaky(new SparkException("Exception thrown in awaitResult: ",
        new DriverEndpoint.Busy("The Strata shuffle driver is busy: 8 requests in progress and 4096 queued; "
            + "ask again")));
  }

  @Test
  void aBusyDriver_isAskedAgain_untilItAnswers() {
    AtomicInteger asked = new AtomicInteger();
    long start = System.nanoTime();
    String got = StrataShuffleManager.whileBusy(() -> {
      if (asked.incrementAndGet() < 3) {
        throw busyAnswer();
      }
      return "sealed";
    }, 8, 10);
    assertThat(got).isEqualTo("sealed");
    assertThat(asked).hasValue(3);
    // Two pauses: at least half of 10 ms, then half of 20 ms.
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(15_000_000L);
  }

  @Test
  void aDriverBusyEveryTime_failsAfterTheTries_andOtherFailuresAtOnce() {
    AtomicInteger asked = new AtomicInteger();
    assertThatThrownBy(() -> StrataShuffleManager.whileBusy(() -> {
      asked.incrementAndGet();
      throw busyAnswer();
    }, 4, 1)).hasRootCauseInstanceOf(DriverEndpoint.Busy.class).hasRootCauseMessage("The Strata shuffle driver is "
        + "busy: 8 requests in progress and 4096 queued; ask again");
    assertThat(asked).hasValue(4);
    asked.set(0);
    assertThatThrownBy(() -> StrataShuffleManager.whileBusy(() -> {
      asked.incrementAndGet();
      throw StrataShuffleReader.sneaky(new SparkException("Exception thrown in awaitResult: ",
          new java.io.IOException("Shuffle 3 is not registered")));
    }, 4, 1)).hasRootCauseMessage("Shuffle 3 is not registered");
    assertThat(asked).hasValue(1);
  }

  /**
   * Readers waiting on a seal hold every thread of the endpoint's seal pool, and a revive is still worked on at once:
   * it has a pool of its own. Before, one pool served both, and revives queued behind the seal waits.
   */
  @Test
  void revives_areNotQueuedBehindReadersWaitingOnASeal() throws Exception {
    DriverEndpoint endpoint = new DriverEndpoint(null, null);
    java.util.concurrent.CountDownLatch sealDone = new java.util.concurrent.CountDownLatch(1);
    try {
      DriverEndpoint.GetSealed ask = new DriverEndpoint.GetSealed(0, 0, 1);
      for (int i = 0; i < DriverEndpoint.THREADS * 2; i++) {
        endpoint.poolFor(ask).execute(() -> {
          try {
            sealDone.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
      }
      java.util.concurrent.CountDownLatch revived = new java.util.concurrent.CountDownLatch(1);
      endpoint.poolFor(new DriverEndpoint.Revive(0, 0, 0, java.util.Set.of())).execute(revived::countDown);
      assertThat(revived.await(10, java.util.concurrent.TimeUnit.SECONDS)).as("the revive ran").isTrue();
    } finally {
      sealDone.countDown();
      endpoint.onStop();
    }
  }
}
