package io.strata.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Calls from many threads gathered into batched calls, each with its own answer or failure. */
class CallBatcherTest {
  private final ExecutorService pool = Executors.newFixedThreadPool(8);

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  /** A sender whose first batch waits for {@code release}; it records every batch it sends. */
  private static final class GatedSender implements CallBatcher.Sender<Integer, String> {
    final CountDownLatch firstEntered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final List<List<Integer>> sent = Collections.synchronizedList(new ArrayList<>());

    @Override
    public List<CallBatcher.Outcome<String>> send(List<Integer> requests) throws StrataException {
      sent.add(List.copyOf(requests));
      if (firstEntered.getCount() == 1) {
        firstEntered.countDown();
        try {
          release.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      List<CallBatcher.Outcome<String>> out = new ArrayList<>();
      for (int r : requests) {
        out.add(r % 5 == 0 ? CallBatcher.Outcome.failed(new NotFoundException("no " + r))
            : CallBatcher.Outcome.ok("answer " + r));
      }
      return out;
    }
  }

  @Test
  void callsMadeWhileOneIsInFlight_goTogether_eachWithItsOwnAnswer() throws Exception {
    GatedSender sender = new GatedSender();
    CallBatcher<Integer, String> b = new CallBatcher<>(100, sender);
    Future<String> first = pool.submit(() -> b.call(1));
    List<Future<String>> rest = queueBehindTheFirst(b, sender, 2, 7);

    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("answer 1");
    for (int i = 2; i <= 7; i++) {
      Future<String> f = rest.get(i - 2);
      if (i == 5) {
        assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(NotFoundException.class)
            .hasMessageContaining("no 5");
      } else {
        assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo("answer " + i);
      }
    }
    // The first alone, then the six queued behind it in one batch.
    assertThat(sender.sent).hasSize(2);
    assertThat(sender.sent.get(0)).containsExactly(1);
    assertThat(sender.sent.get(1)).containsExactlyInAnyOrder(2, 3, 4, 5, 6, 7);
    assertThat(b.batches()).isEqualTo(2);
    assertThat(b.calls()).isEqualTo(7);
  }

  @Test
  void aBatchIsAtMostMaxBatch() throws Exception {
    GatedSender sender = new GatedSender();
    CallBatcher<Integer, String> b = new CallBatcher<>(3, sender);
    Future<String> first = pool.submit(() -> b.call(1));
    List<Future<String>> rest = queueBehindTheFirst(b, sender, 2, 8);
    first.get(10, TimeUnit.SECONDS);
    for (Future<String> f : rest) {
      try {
        f.get(10, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        assertThat(e.getCause()).isInstanceOf(NotFoundException.class); // call 5
      }
    }
    assertThat(sender.sent).hasSize(4); // 1, then 7 queued in batches of at most 3
    assertThat(sender.sent.subList(1, 4)).allSatisfy(batch -> assertThat(batch.size()).isBetween(1, 3));
    assertThat(sender.sent.stream().mapToInt(List::size).sum()).isEqualTo(8);
  }

  @Test
  void aFailedBatch_failsEveryEntry_andTheNextCallStillGoes() throws Exception {
    AtomicReference<Boolean> fail = new AtomicReference<>(true);
    CallBatcher<Integer, String> b = new CallBatcher<>(10, reqs -> {
      if (fail.get()) {
        throw new UnavailableException("master gone");
      }
      return List.of(CallBatcher.Outcome.ok("fine"));
    });
    assertThatThrownBy(() -> b.call(1)).isInstanceOf(UnavailableException.class).hasMessage("master gone");
    fail.set(false);
    assertThat(b.call(2)).isEqualTo("fine");
  }

  @Test
  void aSenderThatThrowsUnchecked_failsItsEntries_andLeavesNoCallerStuck() throws Exception {
    CallBatcher<Integer, String> b = new CallBatcher<>(10, reqs -> {
      throw new IllegalStateException("bug");
    });
    assertThatThrownBy(() -> b.call(1)).isInstanceOf(io.strata.common.exception.InternalException.class)
        .hasMessageContaining("bug");
    assertThatThrownBy(() -> b.call(2)).hasMessageContaining("bug"); // the sender's turn was given back
  }

  @Test
  void anInterruptedCaller_notYetSent_leavesTheQueue() throws Exception {
    GatedSender sender = new GatedSender();
    CallBatcher<Integer, String> b = new CallBatcher<>(100, sender);
    Future<String> first = pool.submit(() -> b.call(1));
    assertThat(sender.firstEntered.await(10, TimeUnit.SECONDS)).isTrue();
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
    Thread t = new Thread(() -> {
      try {
        b.call(2);
      } catch (StrataException e) {
        thrown.set(e);
        stillInterrupted.set(Thread.currentThread().isInterrupted());
      }
    });
    t.start();
    waitForQueued(b, 1);
    t.interrupt();
    t.join(10_000);
    assertThat(thrown.get()).isInstanceOf(UnavailableException.class).hasMessageContaining("Interrupted");
    assertThat(stillInterrupted.get()).isTrue();
    sender.release.countDown();
    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("answer 1");
    assertThat(b.call(3)).isEqualTo("answer 3");
    assertThat(sender.sent).containsExactly(List.of(1), List.of(3)); // 2 was never sent
  }

  /**
   * A caller interrupted when its turn to send comes (the batch before it just ended) still sends: it may not
   * leave, or the callers queued behind it, and every later one, would wait for ever.
   */
  @Test
  void aCallerInterruptedAsItsTurnToSendComes_stillSends_andNoOneIsLeftWaiting() throws Exception {
    for (int round = 0; round < 20; round++) {
      GatedSender sender = new GatedSender();
      CallBatcher<Integer, String> b = new CallBatcher<>(1, sender); // one call per batch: each waits its turn
      Future<String> first = pool.submit(() -> b.call(1));
      assertThat(sender.firstEntered.await(10, TimeUnit.SECONDS)).isTrue();
      AtomicReference<Object> second = new AtomicReference<>();
      Thread t = new Thread(() -> {
        try {
          second.set(b.call(2));
        } catch (StrataException e) {
          second.set(e);
        }
      });
      t.start();
      waitForQueued(b, 1);
      Future<String> third = pool.submit(() -> b.call(3));
      waitForQueued(b, 2);
      sender.release.countDown();
      assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("answer 1");
      synchronized (b) { // as its turn is handed over (or soon after)
        t.interrupt();
      }
      t.join(10_000);
      assertThat(t.isAlive()).isFalse();
      assertThat(second.get()).isEqualTo("answer 2"); // its turn came before the interrupt: never left
      assertThat(third.get(10, TimeUnit.SECONDS)).isEqualTo("answer 3");
      assertThat(b.call(4)).isEqualTo("answer 4");
    }
  }

  /**
   * Once the first call is in flight, makes calls {@code from..to} on other threads, waits until they are all
   * queued behind it, then lets the first call end.
   */
  private List<Future<String>> queueBehindTheFirst(CallBatcher<Integer, String> b, GatedSender sender, int from,
      int to) throws InterruptedException {
    assertThat(sender.firstEntered.await(10, TimeUnit.SECONDS)).isTrue();
    List<Future<String>> rest = new ArrayList<>();
    for (int i = from; i <= to; i++) {
      int r = i;
      rest.add(pool.submit(() -> b.call(r)));
    }
    waitForQueued(b, to - from + 1);
    sender.release.countDown();
    return rest;
  }

  /** Waits until {@code n} callers are queued behind the batch in flight. */
  private static void waitForQueued(CallBatcher<Integer, String> b, int n) {
    await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5)).atMost(Duration.ofSeconds(10))
        .until(() -> b.queued() >= n);
  }

}
