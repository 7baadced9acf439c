package io.strata.server;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.StatusException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.grpc.ChunkMarshaller;
import io.strata.common.grpc.GrpcErrors;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A server's bounded RPC executor and the interceptor that refuses work it cannot take. gRPC runs every
 * call's callbacks (start, messages, half-close) on the server's executor; with a cached pool a burst
 * of slow calls grows threads without bound. Here the pool has a fixed number of threads and a bounded
 * queue; a task that finds both full goes to a small overflow pool (two threads, a queue of 8192) that runs it with a "saturated" mark,
 * and {@link #interceptor()} turns a marked callback into RESOURCE_EXHAUSTED for that call (naming the
 * keys to raise) instead of running the handler. A call refused after its handler started is ended for the
 * handler as a cancel, and a message it will never see is released ({@link ChunkMarshaller}), so a refused
 * call lets go of what it held. Only when the overflow pool is full as well is a task rejected (gRPC
 * then resets the stream).
 *
 * <p>Thread-safe. {@link #shutdownNow()} once, when the server stops.
 */
final class RpcAdmission implements Executor {
  private static final int OVERFLOW_QUEUE = 8192;
  private static final ThreadLocal<Boolean> SATURATED = ThreadLocal.withInitial(() -> false);

  private final ThreadPoolExecutor pool;
  private final ThreadPoolExecutor overflow;
  private final String name;
  private final int threads;
  private final int queue;
  private final AtomicLong refused = new AtomicLong();

  RpcAdmission(String name, int threads, int queue) {
    this.name = name;
    this.threads = threads;
    this.queue = queue;
    this.pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(queue),
        GrpcServer.namedDaemon(name + "-rpc"));
    pool.allowCoreThreadTimeOut(true);
    // Refusing is cheap, so the overflow pool takes bursts far larger than the main queue.
    this.overflow = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(OVERFLOW_QUEUE),
        GrpcServer.namedDaemon(name + "-rpc-refuse"));
    overflow.allowCoreThreadTimeOut(true);
  }

  @Override
  public void execute(Runnable task) {
    try {
      pool.execute(task);
    } catch (RejectedExecutionException e) {
      if (pool.isShutdown()) {
        throw e;
      }
      overflow.execute(() -> {
        SATURATED.set(true);
        try {
          task.run();
        } finally {
          SATURATED.set(false);
        }
      });
    }
  }

  /** Calls refused so far because the server was saturated. */
  long refused() {
    return refused.get();
  }

  /** Tasks the pool has run so far. */
  long tasksRun() {
    return pool.getCompletedTaskCount();
  }

  /** Tasks waiting for a thread now. */
  int queued() {
    return pool.getQueue().size();
  }

  /** Threads running RPC callbacks now. */
  int activeThreads() {
    return pool.getActiveCount();
  }

  void shutdownNow() {
    pool.shutdownNow();
    overflow.shutdownNow();
  }

  /** True on a thread running a task the pool had no room for (it must refuse, not run, its call). */
  boolean saturatedHere() {
    return SATURATED.get();
  }

  /** The refusal of a call the pool had no room for (counted). */
  StatusException refusal() {
    return saturated();
  }

  private StatusException saturated() {
    refused.incrementAndGet();
    return GrpcErrors.toStatus(new ResourceExhaustedException("The " + name + " is saturated: all " + threads
        + " RPC threads are busy and " + queue + " tasks wait (" + ServerKeys.RPC_THREADS.name() + ", "
        + ServerKeys.RPC_QUEUE_MAX.name() + "); retry later"));
  }

  /**
   * Lets go of a received message no handler will see: one parsed over the transport's buffers by a
   * {@link ChunkMarshaller} (a block write's chunk) holds them until released.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static <Q> void dropped(io.grpc.MethodDescriptor<Q, ?> method, Q message) {
    if (method.getRequestMarshaller() instanceof ChunkMarshaller chunks) {
      chunks.release((com.google.protobuf.Message) message);
    }
  }

  /** Refuses callbacks the pool had no room for; must be the outermost interceptor. */
  ServerInterceptor interceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        if (SATURATED.get()) {
          StatusException s = saturated();
          call.close(s.getStatus(), s.getTrailers());
          return new ServerCall.Listener<>() {};
        }
        ServerCall.Listener<Q> inner = next.startCall(call, headers);
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(inner) {
          /** Set (on the call's serialised callbacks) once this call is refused: the handler has heard its end. */
          private boolean closed;

          /**
           * True when this callback must not run: the call is refused (once) instead. A call refused after its
           * handler started is ended for the handler too, as a cancel (a server-side close reaches a handler only
           * as completion, which a streaming handler does not see), so it lets go of what it holds (a block
           * being written); gRPC's own end of the call is then not passed on, so the handler hears one end.
           */
          private boolean refuse() {
            if (closed) {
              return true;
            }
            if (!SATURATED.get()) {
              return false;
            }
            closed = true;
            StatusException s = saturated();
            call.close(s.getStatus(), s.getTrailers());
            super.onCancel();
            return true;
          }

          @Override
          public void onMessage(Q message) {
            boolean run = false;
            try {
              run = !refuse();
            } finally {
              if (!run) {
                dropped(call.getMethodDescriptor(), message); // also when the handler's cancel threw
              }
            }
            if (run) {
              super.onMessage(message);
            }
          }

          @Override
          public void onHalfClose() {
            if (!refuse()) {
              super.onHalfClose();
            }
          }

          @Override
          public void onCancel() {
            if (!closed) {
              super.onCancel();
            }
          }

          @Override
          public void onComplete() {
            if (!closed) {
              super.onComplete();
            }
          }

          @Override
          public void onReady() {
            if (!refuse()) {
              super.onReady();
            }
          }
        };
      }
    };
  }
}
