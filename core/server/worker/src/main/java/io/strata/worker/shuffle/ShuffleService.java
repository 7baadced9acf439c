package io.strata.worker.shuffle;

import io.grpc.stub.StreamObserver;
import io.strata.common.grpc.GrpcErrors;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.DropPartitionsRequest;
import io.strata.proto.DropPartitionsResponse;
import io.strata.proto.OpenPartitionsRequest;
import io.strata.proto.OpenPartitionsResponse;
import io.strata.proto.PushBatchProto;
import io.strata.proto.PushRequest;
import io.strata.proto.PushResponse;
import io.strata.proto.SealRequest;
import io.strata.proto.SealResponse;
import io.strata.proto.SealedPartitionProto;
import io.strata.proto.ShufflePartitionProto;
import io.strata.proto.ShuffleWorkerServiceGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The worker's shuffle gRPC service: decodes, calls the {@link PushPipeline} or the {@link ShuffleStore},
 * encodes, maps errors through {@link GrpcErrors}. Pushes are answered from the apply pool or the replica's
 * ack; seals and drops run on the seal pool (they commit at the master and write the UFS), never on a
 * network thread. The one place in the worker where shuffle protos and domain types meet.
 *
 * <p>Thread-safe (stateless).
 */
public final class ShuffleService extends ShuffleWorkerServiceGrpc.ShuffleWorkerServiceImplBase {
  private final ShuffleStore store;
  private final PushPipeline pipeline;
  private final Executor sealPool;

  public ShuffleService(ShuffleStore store, PushPipeline pipeline, Executor sealPool) {
    this.store = store;
    this.pipeline = pipeline;
    this.sealPool = sealPool;
  }

  static PushBatchProto.Builder toProto(ShuffleStore.Batch b) {
    PushBatchProto.Builder p = PushBatchProto.newBuilder().setPartitionId(b.partitionId()).setFileId(b.fileId())
        .setMapIndex(b.mapIndex()).setAttemptId(b.attemptId()).setBatchId(b.batchId()).setLength(b.length())
        .setCrc32C(b.crc32c());
    return b.offset() < 0 ? p : p.setOffset(b.offset());
  }

  @Override
  public void openPartitions(OpenPartitionsRequest req, StreamObserver<OpenPartitionsResponse> out) {
    try {
      List<ShuffleStore.PartitionSpec> specs = new ArrayList<>();
      for (ShufflePartitionProto p : req.getPartitionsList()) {
        if (!p.getReplicaHost().isEmpty() && (p.getReplicaPort() < 1 || p.getReplicaPort() > 65535)) {
          throw new io.strata.common.exception.InvalidArgumentException("Partition " + p.getPartitionId()
              + " of shuffle " + p.getShuffleId() + " (file " + p.getFileId() + "): replica port "
              + p.getReplicaPort() + " of " + p.getReplicaHost() + " is not a port number (1 to 65535)");
        }
        WorkerAddress replica = p.getReplicaHost().isEmpty() ? null
            : new WorkerAddress(p.getReplicaHost(), p.getReplicaPort());
        specs.add(new ShuffleStore.PartitionSpec(p.getAppId(), p.getShuffleId(), p.getPartitionId(),
            p.getFileId(), p.getBlockSize(), replica));
      }
      store.open(specs);
      out.onNext(OpenPartitionsResponse.getDefaultInstance());
      out.onCompleted();
    } catch (Exception e) {
      out.onError(GrpcErrors.toStatus(e));
    }
  }

  @Override
  public void push(PushRequest req, StreamObserver<PushResponse> out) {
    List<ShuffleStore.Batch> batches = new ArrayList<>(req.getBatchesCount());
    for (PushBatchProto b : req.getBatchesList()) {
      batches.add(new ShuffleStore.Batch(b.getPartitionId(), b.getFileId(), b.getMapIndex(), b.getAttemptId(),
          b.getBatchId(), b.getLength(), b.getCrc32C(), b.getData().asReadOnlyByteBuffer(),
          b.hasOffset() ? b.getOffset() : -1));
    }
    java.util.concurrent.CompletableFuture<PushPipeline.Outcome> answer =
        pipeline.push(req.getAppId(), req.getShuffleId(), batches, req.getForwarded());
    io.grpc.Context call = io.grpc.Context.current();
    io.grpc.Context.CancellationListener givenUp = c -> answer.cancel(false);
    if (req.getForwarded()) {
      // A primary that gives up on its forward (deadline, lost connection) cancels the call: the pipeline lets go
      // of its batches still waiting for earlier ones. Not on the transport thread that cancels: letting go of
      // waiting batches takes the partition's lock, which an apply thread may hold while it writes.
      call.addListener(givenUp, java.util.concurrent.ForkJoinPool.commonPool());
    }
    answer.whenComplete((r, e) -> {
      // Answered: the call's context is cancelled when the call ends, which need not reach the pipeline.
      call.removeListener(givenUp);
      if (e instanceof java.util.concurrent.CancellationException) {
        return; // the call was cancelled (its caller gave up): nobody to answer
      }
      if (e != null) {
        out.onError(GrpcErrors.toStatus(e));
        return;
      }
      out.onNext(PushResponse.newBuilder()
          .setStatus(r.applied() ? PushResponse.Status.OK : PushResponse.Status.BACK_OFF)
          .setRetryAfterMs(r.retryAfterMs()).setMessage(r.message()).build());
      out.onCompleted();
    });
  }

  @Override
  public void seal(SealRequest req, StreamObserver<SealResponse> out) {
    offload(out, () -> {
      SealResponse.Builder resp = SealResponse.newBuilder();
      for (ShuffleStore.Sealed s : store.seal(req.getAppId(), req.getShuffleId(), req.getFileIdsList(),
          req.getWriteThrough(), req.getExpectLengthList(), req.getExpectCrc32CList(), req.getInPlaceOfList())) {
        SealedPartitionProto.Builder p = SealedPartitionProto.newBuilder().setFileId(s.fileId()).setLength(s.length())
            .setCrc32C(s.crc32c());
        if (s.error() != null) {
          p.setError(s.error()).setCommitted(s.committed()).setDropped(s.dropped());
        }
        resp.addPartitions(p);
      }
      out.onNext(resp.build());
      out.onCompleted();
    });
  }

  @Override
  public void dropPartitions(DropPartitionsRequest req, StreamObserver<DropPartitionsResponse> out) {
    offload(out, () -> {
      int n = store.drop(req.getAppId(), req.getShuffleId(), req.getFileIdsList(), req.getDropCommitted());
      out.onNext(DropPartitionsResponse.newBuilder().setDropped(n).build());
      out.onCompleted();
    });
  }

  private interface Work {
    void run() throws Exception;
  }

  private void offload(StreamObserver<?> out, Work work) {
    try {
      sealPool.execute(() -> {
        try {
          work.run();
        } catch (Exception e) {
          out.onError(GrpcErrors.toStatus(e));
        }
      });
    } catch (RejectedExecutionException e) {
      out.onError(GrpcErrors.toStatus(new io.strata.common.exception.UnavailableException(
          "The worker's shuffle seal queue is full or the worker is stopping; retry")));
    }
  }
}
