package io.strata.worker;

import io.strata.common.exception.StrataException;
import io.strata.common.master.MasterConnection;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.BlockInfoProto;
import io.strata.proto.BlockLocationProto;
import io.strata.proto.BlockMasterWorkerServiceGrpc;
import io.strata.proto.GetBlockSourceRequest;
import io.strata.proto.GetBlockSourceResponse;
import io.strata.proto.GetUfsWriteTargetRequest;
import io.strata.proto.GetUfsWriteTargetResponse;
import io.strata.proto.PersistCommandProto;
import io.strata.proto.WorkerAddressProto;
import io.strata.worker.ufs.MasterClient.BlockInfo;
import io.strata.worker.ufs.MasterClient.BlockSource;
import io.strata.worker.ufs.MasterClient.Location;
import io.strata.worker.ufs.MasterClient.UfsSource;
import io.strata.worker.ufs.MasterClient.UfsTarget;
import io.strata.worker.ufs.MasterClient.PersistCommand;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The questions a worker's UFS layer and readers ask the master: where a block comes from, where a file's UFS copy
 * is written (batched with concurrent ones, {@link MasterBatches}), and that a copy elsewhere is corrupt; and the
 * conversion of the master's answers (and of its persist commands) to worker types. Each call shows the worker's
 * current registration, which {@link MasterSync} owns; a call made while unregistered shows id -1 and the master
 * refuses it.
 *
 * <p>Thread-safe and stateless beyond its plumbing; no lock is held across a call.
 */
final class MasterQueries {
  private final MasterConnection master;
  private final MasterBatches batches;
  private final long rpcTimeoutMs;
  private final Supplier<MasterSync.Registration> registration;

  MasterQueries(MasterConnection master, MasterBatches batches, long rpcTimeoutMs,
      Supplier<MasterSync.Registration> registration) {
    this.master = master;
    this.batches = batches;
    this.rpcTimeoutMs = rpcTimeoutMs;
    this.registration = registration;
  }

  BlockSource blockSource(long blockId) throws StrataException {
    MasterSync.Registration reg = registration.get();
    GetBlockSourceRequest req = GetBlockSourceRequest.newBuilder().setBlockId(blockId)
        .setWorkerId(reg.id()).setWorkerToken(reg.token()).build();
    GetBlockSourceResponse res = master.call(ch -> BlockMasterWorkerServiceGrpc.newBlockingStub(ch)
        .withDeadlineAfter(rpcTimeoutMs, TimeUnit.MILLISECONDS).getBlockSource(req));
    UfsSource ufsSource = null;
    if (res.hasUfs()) {
      ufsSource = new UfsSource(res.getUfs().getUfsUri(), res.getUfs().getUfsOptionsMap(), res.getUfs().getOffset(),
          res.getUfs().getFileLength(), res.getUfs().getUfsMtimeMs(), res.getUfs().getUfsContentTag());
    }
    return new BlockSource(blockId, res.getLength(), locations(res.getLocationsList()), ufsSource);
  }

  boolean reportCorrupt(long blockId, WorkerAddress holder, long offset, String reason) throws StrataException {
    io.strata.proto.ReportCorruptBlockRequest req = io.strata.proto.ReportCorruptBlockRequest.newBuilder()
        .setBlockId(blockId).setOffset(offset).setReason(reason)
        .setWorker(WorkerAddressProto.newBuilder().setHost(holder.host()).setRpcPort(holder.rpcPort())).build();
    return master.call(ch -> io.strata.proto.FileSystemMasterServiceGrpc.newBlockingStub(ch)
        .withDeadlineAfter(rpcTimeoutMs, TimeUnit.MILLISECONDS).reportCorruptBlock(req)).getRemoved();
  }

  /** The targets the master gave, by file id; a file it refused is left out. */
  Map<Long, UfsTarget> ufsWriteTargets(List<Long> fileIds) throws StrataException {
    MasterSync.Registration reg = registration.get();
    List<GetUfsWriteTargetRequest> reqs = new ArrayList<>(fileIds.size());
    for (long id : fileIds) {
      reqs.add(GetUfsWriteTargetRequest.newBuilder().setFileId(id).setWorkerId(reg.id()).setWorkerToken(reg.token())
          .build());
    }
    List<CallBatcher.Outcome<GetUfsWriteTargetResponse>> got = batches.targets(reqs);
    Map<Long, UfsTarget> out = new HashMap<>();
    for (int i = 0; i < got.size(); i++) {
      GetUfsWriteTargetResponse res = got.get(i).answer();
      if (got.get(i).error() == null) {
        out.put(fileIds.get(i), new UfsTarget(res.getUfsUri(), res.getUfsOptionsMap()));
      }
    }
    return out;
  }

  UfsTarget ufsWriteTarget(long fileId) throws StrataException {
    MasterSync.Registration reg = registration.get();
    GetUfsWriteTargetRequest req = GetUfsWriteTargetRequest.newBuilder().setFileId(fileId)
        .setWorkerId(reg.id()).setWorkerToken(reg.token()).build();
    GetUfsWriteTargetResponse res = batches.target(req);
    return new UfsTarget(res.getUfsUri(), res.getUfsOptionsMap());
  }

  /** A heartbeat reply's persist command as the UFS layer takes it. */
  static PersistCommand persistCommand(PersistCommandProto p) {
    List<BlockInfo> blocks = new ArrayList<>(p.getBlocksCount());
    for (BlockInfoProto b : p.getBlocksList()) {
      blocks.add(new BlockInfo(b.getBlockId(), b.getLength(), locations(b.getLocationsList())));
    }
    return new PersistCommand(p.getFileId(), new UfsTarget(p.getUfsUri(), p.getUfsOptionsMap()), blocks);
  }

  private static List<Location> locations(List<BlockLocationProto> ls) {
    List<Location> out = new ArrayList<>(ls.size());
    for (BlockLocationProto l : ls) {
      out.add(new Location(l.getWorkerId(), new WorkerAddress(l.getAddress().getHost(), l.getAddress().getRpcPort())));
    }
    return out;
  }
}
