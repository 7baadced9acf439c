package io.strata.server;

import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a call's callbacks run on a server whose transport runs them inline (gRPC's direct executor):
 * methods named in {@code inline} stay on the transport thread (they answer from memory and never wait,
 * or hand their blocking part off themselves); every other method's callbacks are queued, in order, on
 * the bounded handler pool ({@link RpcAdmission}), one at a time per call, in the call's gRPC context: a unary
 * call wakes a pool thread once (its message and readiness wait for its half-close), and its completion runs on
 * the transport thread when nothing of the call is left on the pool.
 * So a getStatus costs no thread hand-off, while anything that may wait (the journal, a monitor held
 * across a block report, a UFS) never holds a transport thread. Must be the outermost interceptor, so the
 * admission interceptor's saturation check runs on the pool thread.
 *
 * <p>Thread-safe; each call's callbacks are serialised by its own {@link Serial}.
 */
final class CallDispatch implements ServerInterceptor {
  private static final Logger LOG = LoggerFactory.getLogger(CallDispatch.class);

  private final Set<String> inline;
  private final Executor pool;

  CallDispatch(Set<String> inline, Executor pool) {
    this.inline = Set.copyOf(inline);
    this.pool = pool;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    if (inline.contains(call.getMethodDescriptor().getFullMethodName())) {
      return next.startCall(call, headers);
    }
    Serial serial = new Serial(pool, Context.current(), call);
    // Starting a unary or server-streaming call runs no service code (that is onHalfClose), so it may stay
    // here; the master, the only server with inline methods, has no client-streaming ones.
    ServerCall.Listener<Q> inner = next.startCall(call, headers);
    // A unary call's message and readiness only wait for its half-close (or cancel, or completion), one of which
    // always follows them: queued without waking a pool thread, so the call costs one hand-off, not two or three.
    boolean unary = call.getMethodDescriptor().getType() == io.grpc.MethodDescriptor.MethodType.UNARY;
    return new ServerCall.Listener<>() {
      @Override
      public void onMessage(Q message) {
        if (unary) {
          serial.enqueue(() -> inner.onMessage(message));
        } else {
          serial.execute(() -> inner.onMessage(message));
        }
      }

      @Override
      public void onHalfClose() {
        serial.execute(inner::onHalfClose);
      }

      @Override
      public void onCancel() {
        serial.execute(inner::onCancel);
      }

      @Override
      public void onComplete() {
        // The call's answer is sent; its completion callbacks only observe that. Run here when no callback of the
        // call is queued or running, sparing a pool thread's wake-up per call.
        serial.runHereIfIdle(inner::onComplete);
      }

      @Override
      public void onReady() {
        if (unary) {
          serial.enqueue(inner::onReady);
        } else {
          serial.execute(inner::onReady);
        }
      }
    };
  }

  /** Runs one call's callbacks on the pool, one at a time and in order. */
  private static final class Serial implements Runnable {
    private final Executor pool;
    private final Context context;
    private final ServerCall<?, ?> call;
    private final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();

    Serial(Executor pool, Context context, ServerCall<?, ?> call) {
      this.pool = pool;
      this.context = context;
      this.call = call;
    }

    void execute(Runnable callback) {
      queue.add(callback);
      schedule();
    }

    /** Queues a callback to run when the next one {@link #execute}d does (a callback that always follows it). */
    void enqueue(Runnable callback) {
      queue.add(callback);
    }

    /**
     * Runs the callback on this thread when none of the call's is queued or running (so the order holds), else
     * queues it as {@link #execute} does.
     */
    void runHereIfIdle(Runnable callback) {
      if (!queue.isEmpty() || !scheduled.compareAndSet(false, true)) {
        execute(callback);
        return;
      }
      drain(callback);
    }

    private void schedule() {
      if (scheduled.compareAndSet(false, true)) {
        try {
          pool.execute(this);
        } catch (RuntimeException e) {
          scheduled.set(false); // both pools full: gRPC resets the stream, as with its own executor
          throw e;
        }
      }
    }

    private void runOne(Runnable r) {
      try {
        r.run();
      } catch (RuntimeException e) {
        LOG.error("RPC callback of {} failed", call.getMethodDescriptor().getFullMethodName(), e);
        try {
          call.close(Status.INTERNAL.withDescription("Unexpected server error: " + e), new Metadata());
        } catch (IllegalStateException alreadyClosed) {
          // nothing more to tell the client
        }
      }
    }

    @Override
    public void run() {
      drain(null);
    }

    /**
     * Runs {@code first} (if any) and then every queued callback, on this thread, with {@code scheduled} held. A
     * callback queued after the last poll, before scheduled was cleared, is run here too, not by a new task, which a
     * full pool could refuse, leaving the call's completion or cancel never run.
     */
    private void drain(Runnable first) {
      Runnable next = first;
      do {
        Context previous = context.attach();
        try {
          if (next != null) {
            runOne(next);
            next = null;
          }
          Runnable r;
          while ((r = queue.poll()) != null) {
            runOne(r);
          }
        } finally {
          context.detach(previous);
          scheduled.set(false);
        }
      } while (!queue.isEmpty() && scheduled.compareAndSet(false, true));
    }
  }
}
