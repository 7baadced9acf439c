package io.strata.master.rpc;

import io.grpc.stub.StreamObserver;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.master.block.HeartbeatResult;
import io.strata.master.file.FileSystemMaster;
import io.strata.proto.BlockMasterWorkerServiceGrpc;
import io.strata.proto.CommitBlockRequest;
import io.strata.proto.CommitBlockResponse;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.RegisterWorkerResponse;
import io.strata.proto.WorkerHeartbeatRequest;
import io.strata.proto.WorkerHeartbeatResponse;
import io.strata.server.Rpc;

/** Worker-facing service: registration, heartbeats, block commits. Thread-safe. */
public final class BlockMasterWorkerService extends BlockMasterWorkerServiceGrpc.BlockMasterWorkerServiceImplBase {
  private final MasterState state;

  public BlockMasterWorkerService(MasterState state) {
    this.state = state;
  }

  @Override
  public void registerWorker(RegisterWorkerRequest r, StreamObserver<RegisterWorkerResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      if (r.getAddress().getHost().isEmpty() || r.getAddress().getRpcPort() <= 0
          || r.getAddress().getRpcPort() > 65535) {
        throw new InvalidArgumentException("A worker must register with a host and a port in 1-65535, got '"
            + r.getAddress().getHost() + ":" + r.getAddress().getRpcPort() + "'");
      }
      long id = fs.blockMaster().register(MasterProtoConverter.fromProto(r.getAddress()), r.getCapacityBytes(),
          r.getUsedBytes(), MasterProtoConverter.fromProto(r.getBlocksList()), r.getStartTimeMs(),
          MasterProtoConverter.fromDirProtos(r.getDirsList()));
      return RegisterWorkerResponse.newBuilder().setWorkerId(id).build();
    });
  }

  @Override
  public void heartbeat(WorkerHeartbeatRequest r, StreamObserver<WorkerHeartbeatResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      HeartbeatResult res = fs.blockMaster().heartbeat(r.getWorkerId(), r.getCapacityBytes(), r.getUsedBytes(),
          MasterProtoConverter.fromProto(r.getAddedBlocksList()), r.getRemovedBlockIdsList(),
          r.getDirsCount() == 0 ? null : MasterProtoConverter.fromDirProtos(r.getDirsList()));
      return WorkerHeartbeatResponse.newBuilder()
          .setCommand(res.reregister() ? WorkerHeartbeatResponse.Command.REGISTER
              : WorkerHeartbeatResponse.Command.NOTHING)
          .addAllRemoveBlockIds(res.removeBlockIds()).build();
    });
  }

  @Override
  public void commitBlock(CommitBlockRequest r, StreamObserver<CommitBlockResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      fs.commitBlock(r.getWorkerId(), r.getBlockId(), r.getLength(), r.getTier());
      return CommitBlockResponse.getDefaultInstance();
    });
  }

}
