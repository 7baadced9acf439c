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
 * the bounded handler pool ({@link RpcAdmission}), one at a time per call, in the call's gRPC context.
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
    return new ServerCall.Listener<>() {
      @Override
      public void onMessage(Q message) {
        serial.execute(() -> inner.onMessage(message));
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
        serial.execute(inner::onComplete);
      }

      @Override
      public void onReady() {
        serial.execute(inner::onReady);
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

    @Override
    public void run() {
      Context previous = context.attach();
      try {
        Runnable r;
        while ((r = queue.poll()) != null) {
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
      } finally {
        context.detach(previous);
        scheduled.set(false);
      }
      if (!queue.isEmpty()) {
        schedule(); // a callback queued after the last poll, before scheduled was cleared
      }
    }
  }
}
