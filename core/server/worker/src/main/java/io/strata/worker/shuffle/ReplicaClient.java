package io.strata.worker.shuffle;

import com.google.protobuf.UnsafeByteOperations;
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
 * driver names cannot grow them without bound; calls are asynchronous (the apply thread never waits for a replica) with a deadline. A replica that
 * answers BACK_OFF fails the forward like an error: the client pushes again.
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

  ReplicaClient(long maxMessageBytes, long timeoutMs) {
    this.maxMessageBytes = maxMessageBytes;
    this.timeoutMs = timeoutMs;
  }

  private synchronized ManagedChannel channel(WorkerAddress peer) throws UnavailableException {
    if (closed) {
      throw new UnavailableException("The worker is stopping; not forwarding to replica " + peer);
    }
    return channels.computeIfAbsent(peer, a -> GrpcChannels.forAddress(a.host(), a.rpcPort(), maxMessageBytes));
  }

  @Override
  public CompletableFuture<Void> forward(WorkerAddress replica, String appId, int shuffleId,
      List<ShuffleStore.Batch> batches) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    PushRequest.Builder req = PushRequest.newBuilder().setAppId(appId).setShuffleId(shuffleId).setForwarded(true);
    for (ShuffleStore.Batch b : batches) {
      req.addBatches(ShuffleService.toProto(b).setData(UnsafeByteOperations.unsafeWrap(b.data().duplicate())));
    }
    try {
      ShuffleWorkerServiceGrpc.newStub(channel(replica)).withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS)
          .push(req.build(), new StreamObserver<>() {
            @Override
            public void onNext(PushResponse r) {
              if (r.getStatus() == PushResponse.Status.OK) {
                done.complete(null);
              } else {
                done.completeExceptionally(new UnavailableException("Replica " + replica + " asked to back off: "
                    + r.getMessage()));
              }
            }

            @Override
            public void onError(Throwable t) {
              done.completeExceptionally(GrpcErrors.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
              done.complete(null); // no-op after onNext
            }
          });
    } catch (UnavailableException e) {
      done.completeExceptionally(e);
    }
    return done;
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
