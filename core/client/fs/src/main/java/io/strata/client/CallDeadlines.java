package io.strata.client;

import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Deadlines for a client's blocking unary master calls, without a timer per call. grpc-java arms a timer for
 * every call given a deadline ({@code withDeadlineAfter}) on the channel's event loop group, which wakes a
 * sleeping loop thread per call: on a busy host that wake-up was the largest cost of a getStatus beyond the wire
 * (docs/PERFORMANCE.md, "a fair bare baseline"). Here each call instead runs in a cancellable gRPC
 * {@link Context} registered with its expiry; one daemon thread wakes every {@link #TICK_MS} ms while calls are
 * registered and cancels those past their expiry (a thread of its own: a call that hangs never holds it up). An
 * idle client's thread sleeps: the first call after a pause arms the tick, and the tick re-arms itself while
 * calls remain. Such a call fails with DEADLINE_EXCEEDED, as a deadline would,
 * at most one tick late.
 *
 * <p>Thread-safe: calls run on their callers' threads; the tick thread only cancels contexts. The registry is a
 * concurrent map; no lock is held across a call.
 */
final class CallDeadlines implements AutoCloseable {
  /** How often expired calls are looked for: the most a call outlives its deadline. */
  static final long TICK_MS = 50;

  /** Why the tick cancelled a call. */
  private static final class Expired extends RuntimeException {
    Expired(long timeoutMs) {
      super("deadline of " + timeoutMs + " ms exceeded", null, false, false);
    }
  }

  /** A registered call's expiry ({@link System#nanoTime}) and its timeout. */
  private record Expiry(long atNanos, long timeoutMs) {}

  private final Map<Context.CancellableContext, Expiry> running = new ConcurrentHashMap<>();
  private final ScheduledExecutorService tick;
  /**
   * Whether a tick is scheduled. A call sets it (and schedules one) after registering; the tick clears it before it
   * looks for calls left, so a call registered meanwhile either sees it clear and schedules, or is seen.
   */
  private final java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();

  CallDeadlines() {
    ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
      Thread th = new Thread(r, "strata-client-deadlines");
      th.setDaemon(true);
      return th;
    });
    t.setRemoveOnCancelPolicy(true);
    this.tick = t;
  }

  /**
   * Runs {@code call} (a blocking gRPC call made on this thread) with a deadline {@code timeoutMs} from now; a
   * call still running then is cancelled and throws DEADLINE_EXCEEDED.
   */
  <T> T call(long timeoutMs, Supplier<T> call) {
    Context.CancellableContext c = Context.current().withCancellation();
    running.put(c, new Expiry(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs), timeoutMs));
    arm();
    Context previous = c.attach();
    try {
      return call.get();
    } catch (StatusRuntimeException e) {
      // Only a call that ended because the tick cancelled it (not one that failed otherwise meanwhile, which may be
      // retried on another master) reads DEADLINE_EXCEEDED.
      if (e.getStatus().getCode() == Status.Code.CANCELLED && c.cancellationCause() instanceof Expired x) {
        throw Status.DEADLINE_EXCEEDED.withDescription(x.getMessage()).asRuntimeException();
      }
      throw e;
    } finally {
      c.detach(previous);
      running.remove(c);
      c.cancel(null); // releases the listeners the call may have left on it
    }
  }

  /** Whether a tick is scheduled (tests: none while the client is idle). */
  boolean ticking() {
    return armed.get();
  }

  /** Calls running now (tests). */
  int running() {
    return running.size();
  }

  /** Schedules the next tick unless one is scheduled. */
  private void arm() {
    if (armed.compareAndSet(false, true)) {
      try {
        tick.schedule(this::tick, TICK_MS, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.RejectedExecutionException closed) {
        armed.set(false); // the client is closing: its channels end its calls
      }
    }
  }

  private void tick() {
    try {
      cancelExpired();
    } finally {
      armed.set(false);
      if (!running.isEmpty()) {
        arm();
      }
    }
  }

  private void cancelExpired() {
    long now = System.nanoTime();
    for (Map.Entry<Context.CancellableContext, Expiry> e : running.entrySet()) {
      if (now - e.getValue().atNanos() >= 0) {
        try {
          e.getKey().cancel(new Expired(e.getValue().timeoutMs()));
        } catch (RuntimeException ex) {
          // A listener of the call threw: the call is cancelled all the same; the tick must go on for the others.
          org.slf4j.LoggerFactory.getLogger(CallDeadlines.class).warn("Cancelling an expired master call", ex);
        }
      }
    }
  }

  @Override
  public void close() {
    tick.shutdownNow();
  }
}
