package io.strata.client;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.strata.common.exception.CancelledException;
import io.strata.common.exception.DeadlineExceededException;
import io.strata.common.exception.StrataException;
import io.strata.common.grpc.GrpcErrors;
import io.strata.common.time.Deadlines;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A gRPC client stream to a worker with one reply (WriteBlock, WriteUfsFile), written with flow control:
 * a message is sent only while the transport is ready (gRPC's flow-control window), so a slow worker makes
 * the writer wait rather than fill memory. {@link #finish()} half-closes and waits for the reply;
 * {@link #cancel()} aborts the call, which the worker takes as "drop what you wrote".
 *
 * <p>Not thread-safe: one writer thread; gRPC callbacks only record and signal.
 *
 * @param <Q> the request message
 * @param <R> the reply message
 */
final class OutboundStream<Q, R> {
  private final String what;
  private final long timeoutMs;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private ClientCallStreamObserver<Q> requests;
  private R response;
  private Throwable error;
  private boolean done;

  /**
   * Starts the call.
   *
   * @param what the stream in words for errors ("writing block 7 to worker h:1")
   * @param start starts the RPC with the given observer ({@code o -> stub.writeBlock(o)})
   */
  OutboundStream(String what, long timeoutMs, Consumer<ClientResponseObserver<Q, R>> start) {
    this.what = what;
    this.timeoutMs = timeoutMs;
    start.accept(new ClientResponseObserver<Q, R>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<Q> stream) {
        requests = stream;
        stream.setOnReadyHandler(OutboundStream.this::signal);
      }

      @Override
      public void onNext(R value) {
        lock.lock();
        try {
          response = value;
        } finally {
          lock.unlock();
        }
      }

      @Override
      public void onError(Throwable t) {
        lock.lock();
        try {
          error = t;
          done = true;
          changed.signalAll();
        } finally {
          lock.unlock();
        }
      }

      @Override
      public void onCompleted() {
        lock.lock();
        try {
          done = true;
          changed.signalAll();
        } finally {
          lock.unlock();
        }
      }
    });
  }

  private void signal() {
    lock.lock();
    try {
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Sends {@code message} once the transport can take it; fails when the worker ended the call. */
  void send(Q message) throws IOException {
    awaitReady();
    requests.onNext(message);
  }

  /**
   * Sends {@code message} only if the call is live and its transport can take it now, without waiting; false when
   * not sent. For a keep-alive from another thread: its caller must keep it from overlapping this stream's other
   * sends (gRPC's stream takes one sender at a time) and from following {@link #finish} or {@link #cancel}.
   */
  boolean sendIfReady(Q message) {
    lock.lock();
    try {
      if (done) {
        return false;
      }
    } finally {
      lock.unlock();
    }
    if (!requests.isReady()) {
      return false; // data is waiting for the worker already: it is not idle
    }
    requests.onNext(message);
    return true;
  }

  private void awaitReady() throws IOException {
    lock.lock();
    try {
      long deadline = Deadlines.nanoDeadline(System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(timeoutMs));
      while (!done && !requests.isReady()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          cancel();
          throw new DeadlineExceededException("The worker took no data for " + timeoutMs + " ms while " + what);
        }
        changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
      }
      if (done) {
        throw failure();
      }
    } catch (InterruptedException e) {
      cancel();
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while " + what);
    } finally {
      lock.unlock();
    }
  }

  private StrataException failure() {
    if (error != null) {
      StrataException e = GrpcErrors.fromThrowable(error);
      return e.code().toException(capitalised() + " failed: " + e.getMessage(), error);
    }
    return new CancelledException("The worker ended the call early while " + what);
  }

  private String capitalised() {
    return what.isEmpty() ? what : Character.toUpperCase(what.charAt(0)) + what.substring(1);
  }

  /** Half-closes and waits for the worker's reply. */
  R finish() throws IOException {
    requests.onCompleted();
    lock.lock();
    try {
      long deadline = Deadlines.nanoDeadline(System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(timeoutMs));
      while (!done) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          requests.cancel("timed out waiting for the reply", null);
          throw new DeadlineExceededException("The worker did not reply within " + timeoutMs + " ms after "
              + what);
        }
        changed.awaitNanos(left);
      }
      if (error != null || response == null) {
        throw failure();
      }
      return response;
    } catch (InterruptedException e) {
      requests.cancel("interrupted", e);
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while " + what);
    } finally {
      lock.unlock();
    }
  }

  /** Aborts the call; the worker drops what it received. Harmless after the call ended. */
  void cancel() {
    requests.cancel("write cancelled by client", null);
  }
}
