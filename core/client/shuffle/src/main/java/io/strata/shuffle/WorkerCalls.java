package io.strata.shuffle;

import io.strata.common.grpc.GrpcErrors;
import io.strata.proto.ShuffleWorkerServiceGrpc.ShuffleWorkerServiceBlockingStub;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The driver's calls out for a shuffle's lifecycle: the bounded pool that runs master calls (file
 * creates and completes) and worker calls (open, seal, drop) side by side, blocking stubs to the workers'
 * shuffle service with a deadline, and the wait for a call that turns its failure into a Strata
 * IOException naming what was being done.
 *
 * <p>Thread-safe; callers must hold no lock while they wait for a call.
 */
final class WorkerCalls implements AutoCloseable {
  /** One call to a worker's shuffle service. */
  @FunctionalInterface
  interface WorkerCall<R> {
    Object call(ShuffleWorkerServiceBlockingStub worker, R request) throws Exception;
  }

  private final ShuffleChannels channels;
  private final long rpcTimeoutMs;
  private final ExecutorService pool;

  WorkerCalls(ShuffleChannels channels, long rpcTimeoutMs, int threads) {
    this.channels = channels;
    this.rpcTimeoutMs = rpcTimeoutMs;
    this.pool = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "strata-shuffle-lifecycle");
      t.setDaemon(true);
      return t;
    });
  }

  long rpcTimeoutMs() {
    return rpcTimeoutMs;
  }

  <T> Future<T> submit(Callable<T> call) {
    return pool.submit(call);
  }

  /**
   * Calls every worker of {@code byWorker} (host:port) with its request, in parallel on the pool, each with
   * the plain RPC deadline; waits for all and throws the first failure ({@code doing} + the worker).
   */
  <R> void forEachWorker(Map<String, R> byWorker, WorkerCall<R> call, String doing) throws IOException {
    Map<String, IOException> failed = callEachWorker(byWorker, call, doing);
    if (!failed.isEmpty()) {
      throw failed.values().iterator().next();
    }
  }

  /** Calls every worker at once; returns the failures by worker (in the map's order), empty when none. */
  <R> Map<String, IOException> callEachWorker(Map<String, R> byWorker, WorkerCall<R> call, String doing) {
    Map<String, Future<Object>> calls = new LinkedHashMap<>();
    for (Map.Entry<String, R> e : byWorker.entrySet()) {
      calls.put(e.getKey(), pool.submit(() -> call.call(stub(e.getKey(), rpcTimeoutMs), e.getValue())));
    }
    Map<String, IOException> failed = new LinkedHashMap<>();
    for (Map.Entry<String, Future<Object>> e : calls.entrySet()) {
      try {
        get(e.getValue(), doing + e.getKey());
      } catch (IOException ex) {
        failed.put(e.getKey(), ex);
      }
    }
    return failed;
  }

  /** A blocking stub to the worker at {@code hostPort} whose deadline is {@code timeoutMs} from now. */
  ShuffleWorkerServiceBlockingStub stub(String hostPort, long timeoutMs) {
    int i = hostPort.lastIndexOf(':');
    return channels.blocking(hostPort.substring(0, i), Integer.parseInt(hostPort.substring(i + 1)))
        .withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
  }

  /** Waits for {@code f}; its failure as the Strata IOException it stands for, prefixed with {@code doing}. */
  static <T> T get(Future<T> f, String doing) throws IOException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException(doing + ": interrupted");
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof IOException io) {
        throw io;
      }
      io.strata.common.exception.StrataException se = GrpcErrors.fromThrowable(c);
      throw se.code().toException(doing + ": " + se.getMessage(), se);
    }
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
