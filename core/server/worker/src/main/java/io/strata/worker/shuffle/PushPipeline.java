package io.strata.worker.shuffle;

import io.strata.common.net.WorkerAddress;
import java.io.IOException;
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
 * nothing applied; the client retries it after the given delay. A primary's forwards to this worker as their replica
 * are counted apart, against a bound of their own ({@code forwardedMax}, twice the watermark by default): the
 * primaries' watermarks bound them, so it is only reached under a flood of forwards (many primaries at once, or a
 * client that marks its pushes forwarded), which are then answered BACK_OFF too (the primary sends them again until
 * its forward timeout). A push's bytes count until it is answered and its apply task has run, whichever is later; a
 * forward's until its task has run (a forward whose primary gave up is answered at once, but its request is held
 * until then; once run, its batches are appended or parked, and parked ones count against the parking budget).
 *
 * <p>Each batch is forwarded with the offset it was appended at; the replica appends it at the same offset
 * (waiting for the batches before it), so the copies are alike byte for byte ({@link PartitionFile#appendAt}).
 * A forward is never refused for the watermark on the replica (its primary's watermark bounds it). A forward
 * that fails after the local append fails the push (UNAVAILABLE naming the replica:
 * {@link io.strata.common.exception.ReplicaUnavailableException}) and leaves the replica's copies of its
 * partitions with a gap: from then on this primary refuses pushes for them the same way, with nothing applied,
 * and the client revives them on other workers, blaming the replica. Readers drop the batches applied twice by
 * (map, attempt, batch id).
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
  private final long forwardedMax;
  private final long backOffMs;
  private final AtomicLong buffered = new AtomicLong();
  /** Bytes of forwards received and not yet both answered and run; bounded by {@link #forwardedMax}. */
  private final AtomicLong forwardedBuffered = new AtomicLong();
  private final AtomicLong backOffs = new AtomicLong();
  private final AtomicLong appliedBatches = new AtomicLong();
  private final java.util.concurrent.atomic.LongAdder appliedBytes = new java.util.concurrent.atomic.LongAdder();

  public PushPipeline(ShuffleStore store, Forwarder forwarder, Executor applyPool, long highWatermarkBytes,
      long backOffMs) {
    this(store, forwarder, applyPool, highWatermarkBytes, 2 * highWatermarkBytes, backOffMs);
  }

  /** {@code forwardedMax}: the bytes of forwards (from primaries) held at most before they are answered BACK_OFF. */
  public PushPipeline(ShuffleStore store, Forwarder forwarder, Executor applyPool, long highWatermarkBytes,
      long forwardedMax, long backOffMs) {
    this.store = store;
    this.forwarder = forwarder;
    this.applyPool = applyPool;
    this.highWatermarkBytes = highWatermarkBytes;
    this.forwardedMax = forwardedMax;
    this.backOffMs = backOffMs;
  }

  /** Admits and queues a push; the future fails with the StrataException that names a bad input. */
  public CompletableFuture<Outcome> push(String appId, int shuffleId, List<ShuffleStore.Batch> batches,
      boolean forwarded) {
    long bytes = 0;
    for (ShuffleStore.Batch b : batches) {
      bytes += b.data().remaining();
    }
    AtomicLong counter = forwarded ? forwardedBuffered : buffered;
    long limit = forwarded ? forwardedMax : highWatermarkBytes;
    long now = counter.addAndGet(bytes);
    // One push bigger than the limit alone is let in when nothing else is buffered, or it could never go.
    if (now > limit && now != bytes) {
      counter.addAndGet(-bytes);
      backOffs.incrementAndGet();
      return CompletableFuture.completedFuture(Outcome.backOff(backOffMs, "The worker has " + (now - bytes)
          + " shuffle bytes " + (forwarded ? "forwarded by primaries" : "buffered") + ", past " + (forwarded
              ? "its bound for forwards (" + forwardedMax + ", twice strata.worker.shuffle.buffer.high.watermark)"
              : "strata.worker.shuffle.buffer.high.watermark (" + highWatermarkBytes + ")")
          + "; nothing was applied: retry after " + backOffMs + " ms"));
    }
    CompletableFuture<Outcome> out = new CompletableFuture<>();
    // A client's push counts until it is answered and its task has run (two releases, the last gives the bytes back).
    // A forward counts until its task has run: then its batches are appended, or parked waiting for the ones before
    // them, where the parking budget bounds them; counted on here, parked forwards could fill this bound and refuse
    // the very forwards they wait for.
    java.util.concurrent.atomic.AtomicInteger holders = new java.util.concurrent.atomic.AtomicInteger(forwarded ? 1 : 2);
    long held = bytes;
    Runnable release = () -> {
      if (holders.decrementAndGet() == 0) {
        counter.addAndGet(-held);
      }
    };
    if (!forwarded) {
      out.whenComplete((r, e) -> release.run());
    }
    try {
      applyPool.execute(() -> {
        try {
          apply(appId, shuffleId, batches, forwarded, out);
        } finally {
          release.run();
        }
      });
    } catch (RejectedExecutionException e) {
      release.run(); // no task will run (a forward's only release; a push's other comes with its answer below)
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
        PartitionFile f = store.check(appId, shuffleId, b);
        if (!forwarded && b.offset() >= 0) {
          throw new io.strata.common.exception.InvalidArgumentException("Batch " + b.batchId() + " of map "
              + b.mapIndex() + " for " + f.describe() + " names an offset: only a primary's forward to its "
              + "replica does");
        }
        files.add(f);
      }
      if (out.isCancelled()) {
        // A forward its primary gave up while it was queued: the primary counts it as not applied, so the places
        // its batches were for stay empty.
        for (int i = 0; i < batches.size(); i++) {
          if (batches.get(i).offset() >= 0) {
            files.get(i).neverComing(batches.get(i).offset());
          }
        }
        return;
      }
      if (forwarded) {
        applyForwarded(files, batches, out);
        return;
      }
      PartitionFile gapped = withGap(files);
      if (gapped != null) {
        // Nothing is appended: the client revives the partition elsewhere, avoiding the replica.
        throw replicaFailed(gapped.spec().replica(), "the replica's copy of " + gapped.describe() + " has a gap ("
            + gapped.replicaGap() + "); this pair takes no more batches, nothing of this push was applied", null);
      }
      long[] offsets = new long[batches.size()];
      try {
        store.append(files, batches, offsets);
      } catch (IOException | RuntimeException e) {
        // Those appended before the failure are not forwarded: their replicas' copies now have gaps.
        for (int i = 0; i < offsets.length && offsets[i] >= 0; i++) {
          markGap(files.get(i), "batches appended on the primary were not forwarded: " + e.getMessage());
        }
        throw e;
      }
      counted(batches);
      gapped = withGap(files);
      if (gapped != null) {
        // A forward failed while this push was appended: it would wait behind that gap until its deadline.
        String gap = gapped.replicaGap();
        for (PartitionFile o : files) {
          markGap(o, "batches appended on the primary were not forwarded: " + gap);
        }
        throw replicaFailed(gapped.spec().replica(), "the replica's copy of " + gapped.describe() + " has a gap ("
            + gap + "); applied here, not forwarded: push the batches again elsewhere", null);
      }
      Map<WorkerAddress, List<ShuffleStore.Batch>> byReplica = new LinkedHashMap<>();
      Map<WorkerAddress, List<PartitionFile>> filesByReplica = new LinkedHashMap<>();
      for (int i = 0; i < batches.size(); i++) {
        WorkerAddress r = files.get(i).spec().replica();
        if (r != null) {
          byReplica.computeIfAbsent(r, k -> new ArrayList<>()).add(batches.get(i).at(offsets[i]));
          filesByReplica.computeIfAbsent(r, k -> new ArrayList<>()).add(files.get(i));
        }
      }
      Map<WorkerAddress, CompletableFuture<Void>> acks = new LinkedHashMap<>();
      for (Map.Entry<WorkerAddress, List<ShuffleStore.Batch>> e : byReplica.entrySet()) {
        CompletableFuture<Void> ack;
        try {
          ack = forwarder.forward(e.getKey(), appId, shuffleId, e.getValue());
        } catch (RuntimeException | Error thrown) {
          ack = CompletableFuture.failedFuture(thrown);
        }
        acks.put(e.getKey(), ack);
      }
      CompletableFuture.allOf(acks.values().toArray(new CompletableFuture<?>[0])).whenComplete((v, err) -> {
        if (err == null) {
          out.complete(Outcome.OK);
          return;
        }
        // Name the replica whose hop failed, so the client blames it rather than this (healthy) primary.
        Throwable first = null;
        WorkerAddress blamed = null;
        for (Map.Entry<WorkerAddress, CompletableFuture<Void>> a : acks.entrySet()) {
          if (a.getValue().isCompletedExceptionally()) {
            Throwable c = unwrapped(a.getValue().handle((ok, ex) -> ex).join());
            // What that replica applied of the forward is unknown: its copies of these partitions may have gaps.
            for (PartitionFile f : filesByReplica.get(a.getKey())) {
              markGap(f, "a forward to it failed: " + c.getMessage());
            }
            if (first == null) {
              first = c;
              blamed = a.getKey();
            }
          }
        }
        out.completeExceptionally(first == null ? err : replicaFailed(blamed, "applied here, but forwarding to the "
            + "replica failed (" + first.getMessage() + "); push the batches again elsewhere (readers drop the "
            + "duplicates)", first));
      });
    } catch (Exception | Error e) {
      out.completeExceptionally(e);
    }
  }

  /** A replica applies forwarded batches at their primary's offsets; the answer waits until all are appended. */
  private void applyForwarded(List<PartitionFile> files, List<ShuffleStore.Batch> batches,
      CompletableFuture<Outcome> out) {
    List<CompletableFuture<Void>> each = new ArrayList<>(batches.size());
    store.appendForwarded(files, batches, each).whenComplete((v, err) -> {
      if (err == null) {
        counted(batches);
        out.complete(Outcome.OK);
      } else {
        out.completeExceptionally(unwrapped(err));
      }
    });
    // The primary gave up on this forward (its deadline, a lost connection): batches of it still waiting for
    // the ones before them never will be placed; their copies freeze and let go of what waits.
    out.whenComplete((r, e) -> {
      if (out.isCancelled()) {
        for (int i = 0; i < each.size(); i++) {
          if (!each.get(i).isDone()) {
            files.get(i).gaveUp(each.get(i));
          }
        }
      }
    });
  }

  /** What failed, without the CompletionException a dependent future wraps it in. */
  private static Throwable unwrapped(Throwable t) {
    return t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  /** The first of these partitions whose replica's copy has a gap, or null. */
  private static PartitionFile withGap(List<PartitionFile> files) {
    for (PartitionFile f : files) {
      if (f.replicaGap() != null) {
        return f;
      }
    }
    return null;
  }

  /** Records that the partition's replica copy has a gap; a partition without a replica has none. */
  private static void markGap(PartitionFile f, String why) {
    if (f.spec().replica() != null) {
      f.replicaGap(why);
    }
  }

  private void counted(List<ShuffleStore.Batch> batches) {
    appliedBatches.addAndGet(batches.size());
    for (ShuffleStore.Batch b : batches) {
      appliedBytes.add(b.length());
    }
  }

  private static io.strata.common.exception.ReplicaUnavailableException replicaFailed(WorkerAddress r, String why,
      Throwable cause) {
    String at = r.toString(); // host:port
    return new io.strata.common.exception.ReplicaUnavailableException("Replica " + at + ": " + why, at, cause);
  }

  /** Bytes of pushes (forwards included) received and not yet both answered and run. */
  public long bufferedBytes() {
    return buffered.get() + forwardedBuffered.get();
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
