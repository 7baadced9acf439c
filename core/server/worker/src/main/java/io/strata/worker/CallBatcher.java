package io.strata.worker;

import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Gathers calls of one kind made from many threads at once into batched calls, as a journal's group commit
 * gathers appends: a call made while none is in flight is sent at once, alone (so a lone caller waits no
 * longer than before); calls made while one is in flight queue, and when it ends the first queued caller
 * sends every queued call (up to {@code maxBatch}) in one. A worker sealing a thousand shuffle partition files
 * on sixteen threads so makes a few dozen master calls instead of a thousand.
 *
 * <p>Each call gets its own answer or its own failure ({@link Sender} answers per entry); a failure of the
 * batched call as a whole fails each of its entries with it. An interrupted caller whose call is queued and not
 * yet its turn to send leaves the queue with an {@link UnavailableException}; one whose call is in flight, or
 * whose turn it is to send, waits for its answer (the batched call has a deadline) and keeps its interrupt. The
 * sending caller clears its interrupt while it sends (the call carries others' calls) and restores it after.
 *
 * <p>Thread-safe. This object's monitor guards the queue and who sends; it is a leaf and never held across
 * the batched call, which the sending caller makes on its own thread with no lock held.
 *
 * @param <Q> one call's request
 * @param <A> one call's answer
 */
final class CallBatcher<Q, A> {
  /** Makes one batched call: answers (or failures) for {@code requests}, one each, in order. */
  @FunctionalInterface
  interface Sender<Q, A> {
    List<Outcome<A>> send(List<Q> requests) throws StrataException;
  }

  /** One entry's answer, or its failure ({@code error} not null). */
  record Outcome<A>(A answer, StrataException error) {
    static <A> Outcome<A> ok(A answer) {
      return new Outcome<>(answer, null);
    }

    static <A> Outcome<A> failed(StrataException error) {
      return new Outcome<>(null, error);
    }
  }

  private static final class Pending<Q, A> {
    final Q request;
    /** Guarded by the batcher: set once. */
    Outcome<A> outcome;
    /** Guarded by the batcher: this caller sends the next batch. */
    boolean sends;

    Pending(Q request) {
      this.request = request;
    }
  }

  private final int maxBatch;
  private final Sender<Q, A> sender;
  private final ArrayDeque<Pending<Q, A>> queue = new ArrayDeque<>();
  /** Whether a caller is sending (or about to send) a batch; false only with the queue empty. */
  private boolean sending;
  private long batches;
  private long calls;

  CallBatcher(int maxBatch, Sender<Q, A> sender) {
    if (maxBatch < 1) {
      throw new IllegalArgumentException("maxBatch must be at least 1, got " + maxBatch);
    }
    this.maxBatch = maxBatch;
    this.sender = sender;
  }

  /** Makes one call, alone or in a batch with others made at the same time; blocks for its answer. */
  A call(Q request) throws StrataException {
    Pending<Q, A> mine = new Pending<>(request);
    boolean interrupted = false;
    List<Pending<Q, A>> batch;
    synchronized (this) {
      queue.add(mine);
      if (!sending) {
        sending = true;
        mine.sends = true;
      }
      while (mine.outcome == null && !mine.sends) {
        try {
          wait();
        } catch (InterruptedException e) {
          // Leaves only when no one counts on it: not in a batch in flight, and not handed the turn to send (the
          // batch before it ended and named it; leaving then would leave every later caller waiting for ever).
          if (!mine.sends && queue.remove(mine)) {
            Thread.currentThread().interrupt();
            throw new UnavailableException("Interrupted before the call was sent");
          }
          interrupted = true; // in flight, or its turn to send: its answer comes either way
        }
      }
      if (mine.outcome != null) {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
        return answer(mine.outcome);
      }
      batch = new ArrayList<>(Math.min(maxBatch, queue.size()));
      while (!queue.isEmpty() && batch.size() < maxBatch) {
        batch.add(queue.poll()); // the sender's own call is first: it was at the head
      }
      batches++;
      calls += batch.size();
    }
    List<Outcome<A>> got = null;
    StrataException failed = null;
    // The batch carries other callers' calls: this caller's interrupt must not cancel theirs. Kept for after.
    interrupted |= Thread.interrupted();
    try {
      List<Q> requests = new ArrayList<>(batch.size());
      for (Pending<Q, A> p : batch) {
        requests.add(p.request);
      }
      got = sender.send(requests);
      if (got.size() != batch.size()) {
        failed = new io.strata.common.exception.InternalException("A batched call of " + batch.size()
            + " entries was answered with " + got.size());
      }
    } catch (StrataException e) {
      failed = e;
    } catch (RuntimeException e) {
      failed = new io.strata.common.exception.InternalException("A batched call failed: " + e, e);
    } finally {
      if (failed == null && got == null) { // the sender threw an Error: its callers still get an answer
        failed = new io.strata.common.exception.InternalException("A batched call ended without an answer");
      }
      synchronized (this) {
        for (int i = 0; i < batch.size(); i++) {
          batch.get(i).outcome = failed != null ? Outcome.failed(failed) : got.get(i);
        }
        if (queue.isEmpty()) {
          sending = false;
        } else {
          queue.peek().sends = true;
        }
        notifyAll();
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return answer(mine.outcome);
  }

  private A answer(Outcome<A> o) throws StrataException {
    if (o.error() != null) {
      throw o.error();
    }
    return o.answer();
  }

  /** Calls waiting to be sent. */
  synchronized int queued() {
    return queue.size();
  }

  /** Batched calls sent so far. */
  synchronized long batches() {
    return batches;
  }

  /** Calls answered through those batches so far. */
  synchronized long calls() {
    return calls;
  }
}
