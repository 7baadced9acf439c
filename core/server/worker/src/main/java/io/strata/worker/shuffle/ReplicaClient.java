package io.strata.worker.shuffle;

import com.google.protobuf.UnsafeByteOperations;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.strata.common.exception.UnavailableException;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.grpc.GrpcErrors;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.PushRequest;
import io.strata.proto.PushResponse;
import io.strata.proto.ShuffleWorkerServiceGrpc;
import java.io.Closeable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Forwards pushed batches from a primary to a replica worker (the worker-to-worker edge of the push
 * pipeline, where its batches become protos again). One channel per replica address, opened on first use;
 * at most {@link #MAX_CHANNELS} are kept (the least recently used beyond that is shut down gracefully: its
 * calls in flight finish, the next forward to it opens it again), so the partitions' replica addresses a
 * driver names cannot grow them without bound; calls are asynchronous (the apply thread never waits for a
 * replica) with a deadline. A replica that answers BACK_OFF (its apply queue is full; nothing was applied) gets
 * the same request again after the delay it names, until the deadline: failing the forward would leave its copy
 * with a gap.
 *
 * <p>Thread-safe.
 */
final class ReplicaClient implements PushPipeline.Forwarder, Closeable {
  private final long maxMessageBytes;
  private final long timeoutMs;
  static final int MAX_CHANNELS = 256;
  /** Access order: the eldest is the least recently used. Guarded by this. */
  private final Map<WorkerAddress, ManagedChannel> channels = new java.util.LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<WorkerAddress, ManagedChannel> eldest) {
      if (size() <= MAX_CHANNELS) {
        return false;
      }
      eldest.getValue().shutdown(); // graceful, returns at once: calls in flight finish
      return true;
    }
  };
  private boolean closed;
  private final java.util.concurrent.atomic.LongAdder resends = new java.util.concurrent.atomic.LongAdder();

  ReplicaClient(long maxMessageBytes, long timeoutMs) {
    this.maxMessageBytes = maxMessageBytes;
    this.timeoutMs = timeoutMs;
  }

  private synchronized ManagedChannel channel(WorkerAddress peer) throws UnavailableException {
    if (closed) {
      throw new UnavailableException("The worker is stopping; not forwarding to replica " + peer);
    }
    // One whose connect failed is replaced: a peer back on its old port is reached at once.
    return GrpcChannels.keptOrNew(channels, peer, () -> GrpcChannels.forAddress(peer.host(), peer.rpcPort(),
        maxMessageBytes));
  }

  @Override
  public CompletableFuture<Void> forward(WorkerAddress replica, String appId, int shuffleId,
      List<ShuffleStore.Batch> batches) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    PushRequest.Builder req = PushRequest.newBuilder().setAppId(appId).setShuffleId(shuffleId).setForwarded(true);
    for (ShuffleStore.Batch b : batches) {
      req.addBatches(ShuffleService.toProto(b).setData(UnsafeByteOperations.unsafeWrap(b.data().duplicate())));
    }
    send(replica, req.build(), Deadline.after(timeoutMs, TimeUnit.MILLISECONDS), done);
    return done;
  }

  /** One try; a BACK_OFF answer (nothing applied there) is tried again after its delay while the deadline allows. */
  private void send(WorkerAddress replica, PushRequest req, Deadline deadline, CompletableFuture<Void> done) {
    try {
      ShuffleWorkerServiceGrpc.newStub(channel(replica)).withDeadline(deadline).push(req, new StreamObserver<>() {
        @Override
        public void onNext(PushResponse r) {
          if (r.getStatus() == PushResponse.Status.OK) {
            done.complete(null);
            return;
          }
          long wait = Math.max(1, r.getRetryAfterMs());
          if (deadline.timeRemaining(TimeUnit.MILLISECONDS) <= wait) {
            done.completeExceptionally(new UnavailableException("Replica " + replica + " asked to back off until "
                + "past the forward's deadline (strata.worker.shuffle.forward.timeout): " + r.getMessage()));
            return;
          }
          resends.increment();
          CompletableFuture.delayedExecutor(wait, TimeUnit.MILLISECONDS).execute(() -> send(replica, req, deadline,
              done));
        }

        @Override
        public void onError(Throwable t) {
          done.completeExceptionally(GrpcErrors.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
          // the answer came in onNext
        }
      });
    } catch (UnavailableException | RuntimeException e) {
      done.completeExceptionally(e); // also on a retry's thread, where nothing else would complete it
    }
  }

  /** Forwards sent again after their replica answered BACK_OFF, so far. */
  long resends() {
    return resends.sum();
  }

  /** The channels open now (at most {@link #MAX_CHANNELS}). */
  synchronized int openChannels() {
    return channels.size();
  }

  @Override
  public void close() {
    List<ManagedChannel> all;
    synchronized (this) {
      closed = true;
      all = new ArrayList<>(channels.values());
      channels.clear();
    }
    GrpcChannels.closeAll(all);
  }
}
