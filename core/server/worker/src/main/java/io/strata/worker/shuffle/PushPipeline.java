package io.strata.worker.shuffle;

import io.strata.common.net.WorkerAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How a push is applied: admitted against the high watermark of buffered bytes (the bytes of pushes
 * received and not yet answered), queued on the bounded apply pool (never applied on a network thread),
 * checked whole (partitions, sizes, CRCs) before any batch is appended, appended, then forwarded to the
 * partitions' replicas (one request per replica) and answered only once every replica acked. A push past
 * the watermark, or that the full apply queue refuses, is answered {@link Outcome#backOff} at once with
 * nothing applied; the client retries it after the given delay.
 *
 * <p>A forward that fails after the local append fails the push (UNAVAILABLE, retryable, naming the
 * replica: {@link io.strata.common.exception.ReplicaUnavailableException}): the client pushes the same
 * batches again and readers drop the duplicates by (map, attempt, batch id); when it gives up, it blames
 * the replica, not this primary.
 *
 * <p>Thread-safe; {@link #push} is called from gRPC network threads and returns at once.
 */
public final class PushPipeline {
  /** Sends batches to a replica; the future completes when it acked them (exceptionally when it failed). */
  @FunctionalInterface
  public interface Forwarder {
    CompletableFuture<Void> forward(WorkerAddress replica, String appId, int shuffleId,
        List<ShuffleStore.Batch> batches);
  }

  /** A push's answer: applied (and replicated), or refused for now. */
  public record Outcome(boolean applied, long retryAfterMs, String message) {
    static final Outcome OK = new Outcome(true, 0, "");

    static Outcome backOff(long retryAfterMs, String why) {
      return new Outcome(false, retryAfterMs, why);
    }
  }

  private final ShuffleStore store;
  private final Forwarder forwarder;
  private final Executor applyPool;
  private final long highWatermarkBytes;
  private final long backOffMs;
  private final AtomicLong buffered = new AtomicLong();
  private final AtomicLong backOffs = new AtomicLong();
  private final AtomicLong appliedBatches = new AtomicLong();
  private final java.util.concurrent.atomic.LongAdder appliedBytes = new java.util.concurrent.atomic.LongAdder();

  public PushPipeline(ShuffleStore store, Forwarder forwarder, Executor applyPool, long highWatermarkBytes,
      long backOffMs) {
    this.store = store;
    this.forwarder = forwarder;
    this.applyPool = applyPool;
    this.highWatermarkBytes = highWatermarkBytes;
    this.backOffMs = backOffMs;
  }

  /** Admits and queues a push; the future fails with the StrataException that names a bad input. */
  public CompletableFuture<Outcome> push(String appId, int shuffleId, List<ShuffleStore.Batch> batches,
      boolean forwarded) {
    long bytes = 0;
    for (ShuffleStore.Batch b : batches) {
      bytes += b.data().remaining();
    }
    long now = buffered.addAndGet(bytes);
    // One push bigger than the watermark alone is let in when nothing else is buffered, or it could never go.
    if (now > highWatermarkBytes && now != bytes) {
      buffered.addAndGet(-bytes);
      backOffs.incrementAndGet();
      return CompletableFuture.completedFuture(Outcome.backOff(backOffMs, "The worker has " + (now - bytes)
          + " shuffle bytes buffered, past strata.worker.shuffle.buffer.high.watermark (" + highWatermarkBytes
          + "); nothing was applied: retry after " + backOffMs + " ms"));
    }
    CompletableFuture<Outcome> out = new CompletableFuture<>();
    long held = bytes;
    out.whenComplete((r, e) -> buffered.addAndGet(-held));
    try {
      applyPool.execute(() -> apply(appId, shuffleId, batches, forwarded, out));
    } catch (RejectedExecutionException e) {
      backOffs.incrementAndGet();
      out.complete(Outcome.backOff(backOffMs, "The worker's shuffle apply queue is full "
          + "(strata.worker.shuffle.apply.queue.max); nothing was applied: retry after " + backOffMs + " ms"));
    }
    return out;
  }

  private void apply(String appId, int shuffleId, List<ShuffleStore.Batch> batches, boolean forwarded,
      CompletableFuture<Outcome> out) {
    try {
      List<PartitionFile> files = new ArrayList<>(batches.size());
      for (ShuffleStore.Batch b : batches) {
        files.add(store.check(appId, shuffleId, b));
      }
      store.append(files, batches);
      appliedBatches.addAndGet(batches.size());
      for (ShuffleStore.Batch b : batches) {
        appliedBytes.add(b.length());
      }
      if (forwarded) {
        out.complete(Outcome.OK);
        return;
      }
      Map<WorkerAddress, List<ShuffleStore.Batch>> byReplica = new LinkedHashMap<>();
      for (int i = 0; i < batches.size(); i++) {
        WorkerAddress r = files.get(i).spec().replica();
        if (r != null) {
          byReplica.computeIfAbsent(r, k -> new ArrayList<>()).add(batches.get(i));
        }
      }
      Map<WorkerAddress, CompletableFuture<Void>> acks = new LinkedHashMap<>();
      for (Map.Entry<WorkerAddress, List<ShuffleStore.Batch>> e : byReplica.entrySet()) {
        acks.put(e.getKey(), forwarder.forward(e.getKey(), appId, shuffleId, e.getValue()));
      }
      CompletableFuture.allOf(acks.values().toArray(new CompletableFuture<?>[0])).whenComplete((v, err) -> {
        if (err == null) {
          out.complete(Outcome.OK);
          return;
        }
        // Name the replica whose hop failed, so the client blames it rather than this (healthy) primary.
        for (Map.Entry<WorkerAddress, CompletableFuture<Void>> a : acks.entrySet()) {
          if (a.getValue().isCompletedExceptionally()) {
            Throwable c = a.getValue().handle((ok, ex) -> ex).join();
            c = c instanceof java.util.concurrent.CompletionException && c.getCause() != null ? c.getCause() : c;
            WorkerAddress r = a.getKey();
            out.completeExceptionally(new io.strata.common.exception.ReplicaUnavailableException("Applied here, "
                + "but forwarding to the replica " + r.host() + ":" + r.rpcPort() + " failed (" + c.getMessage()
                + "); push the batches again (readers drop the duplicates)", r.host() + ":" + r.rpcPort(), c));
            return;
          }
        }
        out.completeExceptionally(err);
      });
    } catch (Exception | Error e) {
      out.completeExceptionally(e);
    }
  }

  /** Bytes of pushes received and not yet answered. */
  public long bufferedBytes() {
    return buffered.get();
  }

  /** Pushes answered BACK_OFF so far. */
  public long backOffs() {
    return backOffs.get();
  }

  /** Bytes of the batches {@link #appliedBatches} counts. */
  public long appliedBytes() {
    return appliedBytes.sum();
  }

  /** Batches appended so far (counting forwarded ones on a replica). */
  public long appliedBatches() {
    return appliedBatches.get();
  }
}
