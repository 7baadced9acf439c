package io.strata.worker;

import io.grpc.stub.StreamObserver;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.proto.BlockMasterWorkerServiceGrpc;
import io.strata.proto.BlockReportProto;
import io.strata.proto.CommitBlockRequest;
import io.strata.proto.CommitBlockResponse;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.RegisterWorkerResponse;
import io.strata.proto.WorkerHeartbeatRequest;
import io.strata.proto.WorkerHeartbeatResponse;
import io.strata.server.GrpcServer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A master's worker service on a real gRPC port, with the bookkeeping of the master's registry that the worker's
 * master sync is checked against: which blocks it lists on the worker (applying a heartbeat's removals before its
 * additions, as the master does) and which it wants removed (asked in every reply until a heartbeat reports the
 * block removed, or a commit of the block supersedes it). One worker. Thread-safe (its monitor).
 */
final class FakeMaster implements AutoCloseable {
  private final GrpcServer server;
  /** Blocks listed on the worker: id to tier. */
  private final Map<Long, String> listed = new HashMap<>();
  private final Set<Long> toRemove = new LinkedHashSet<>();
  private final List<WorkerHeartbeatRequest> beats = new ArrayList<>();

  FakeMaster() throws IOException {
    server = new GrpcServer("fake-master", "127.0.0.1", 0, 4 << 20, List.of(new Service())).start();
  }

  /** Where a {@link io.strata.common.master.MasterConnection} finds this master. */
  StrataConf clientConf() {
    return StrataConf.of(Map.of(CommonKeys.MASTER_HOSTNAME.name(), "127.0.0.1",
        CommonKeys.MASTER_RPC_PORT.name(), Integer.toString(server.port())));
  }

  /** From the next reply on, asks the worker to remove the block (and stops listing it), as a delete does. */
  synchronized void remove(long blockId) {
    listed.remove(blockId);
    toRemove.add(blockId);
  }

  synchronized Map<Long, String> listed() {
    return Map.copyOf(listed);
  }

  synchronized Set<Long> toRemove() {
    return Set.copyOf(toRemove);
  }

  synchronized List<WorkerHeartbeatRequest> heartbeats() {
    return List.copyOf(beats);
  }

  @Override
  public void close() {
    server.close();
  }

  private final class Service extends BlockMasterWorkerServiceGrpc.BlockMasterWorkerServiceImplBase {
    @Override
    public void registerWorker(RegisterWorkerRequest req, StreamObserver<RegisterWorkerResponse> out) {
      synchronized (FakeMaster.this) {
        listed.clear();
        for (BlockReportProto b : req.getBlocksList()) {
          if (!toRemove.contains(b.getBlockId())) {
            listed.put(b.getBlockId(), b.getTier());
          }
        }
      }
      out.onNext(RegisterWorkerResponse.newBuilder().setWorkerId(7).setWorkerToken("token")
          .setClusterId("fake-cluster").build());
      out.onCompleted();
    }

    @Override
    public void heartbeat(WorkerHeartbeatRequest req, StreamObserver<WorkerHeartbeatResponse> out) {
      WorkerHeartbeatResponse.Builder res = WorkerHeartbeatResponse.newBuilder();
      synchronized (FakeMaster.this) {
        beats.add(req);
        for (long id : req.getRemovedBlockIdsList()) {
          listed.remove(id);
          toRemove.remove(id);
        }
        for (BlockReportProto b : req.getAddedBlocksList()) {
          if (!toRemove.contains(b.getBlockId())) {
            listed.put(b.getBlockId(), b.getTier());
          }
        }
        res.addAllRemoveBlockIds(toRemove);
      }
      out.onNext(res.build());
      out.onCompleted();
    }

    @Override
    public void commitBlock(CommitBlockRequest req, StreamObserver<CommitBlockResponse> out) {
      synchronized (FakeMaster.this) {
        listed.put(req.getBlockId(), req.getTier());
        toRemove.remove(req.getBlockId()); // a new copy supersedes the removal of an older one
      }
      out.onNext(CommitBlockResponse.getDefaultInstance());
      out.onCompleted();
    }
  }
}
