package io.strata.master.rpc;

import io.grpc.stub.StreamObserver;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.master.block.BlockState;
import io.strata.master.file.MasterReplies;
import io.strata.proto.GetBlockSourceRequest;
import io.strata.proto.GetBlockSourceResponse;
import io.strata.proto.GetUfsWriteTargetRequest;
import io.strata.proto.GetUfsWriteTargetResponse;
import io.strata.proto.UfsBlockSourceProto;
import io.strata.master.file.FileSystemMaster;
import io.strata.proto.BlockMasterWorkerServiceGrpc;
import io.strata.proto.CommitBlockRequest;
import io.strata.proto.CommitBlockResponse;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.RegisterWorkerResponse;
import io.strata.proto.WorkerHeartbeatRequest;
import io.strata.proto.WorkerHeartbeatResponse;
import io.strata.server.Rpc;
import io.strata.common.exception.StrataException;
import java.util.ArrayList;
import java.util.List;

/** Worker-facing service: registration, heartbeats, block commits. Thread-safe. */
public final class BlockMasterWorkerService extends BlockMasterWorkerServiceGrpc.BlockMasterWorkerServiceImplBase {
  private final MasterState state;
  /** Most storage dirs a worker may register: far past any machine's disks. */
  static final int MAX_DIRS = 1024;

  /** {@code strata.security.worker.secret}: what a registering worker must show (empty: nothing). */
  private final byte[] secret;

  /** The journal's cluster id (null until the master leads: registration fails before that anyway). */
  private final java.util.function.Supplier<String> clusterId;

  public BlockMasterWorkerService(MasterState state, String secret, java.util.function.Supplier<String> clusterId) {
    this.state = state;
    this.clusterId = clusterId;
    this.secret = secret.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  @Override
  public void registerWorker(RegisterWorkerRequest r, StreamObserver<RegisterWorkerResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      if (secret.length > 0 && !java.security.MessageDigest.isEqual(secret,
          r.getWorkerSecret().getBytes(java.nio.charset.StandardCharsets.UTF_8))) {
        throw new io.strata.common.exception.PermissionDeniedException("Worker " + r.getAddress().getHost() + ":"
            + r.getAddress().getRpcPort() + " cannot register: it did not show this master's "
            + io.strata.common.conf.CommonKeys.WORKER_SECRET.name() + " (set the same value on the workers)");
      }
      if (r.getAddress().getHost().isEmpty() || r.getAddress().getRpcPort() <= 0
          || r.getAddress().getRpcPort() > 65535) {
        throw new InvalidArgumentException("A worker must register with a host and a port in 1-65535, got '"
            + r.getAddress().getHost() + ":" + r.getAddress().getRpcPort() + "'");
      }
      if (r.getDirsCount() > MAX_DIRS) {
        throw new InvalidArgumentException("Worker " + r.getAddress().getHost() + ":" + r.getAddress().getRpcPort()
            + " registers " + r.getDirsCount() + " storage dirs; at most " + MAX_DIRS + " are taken (they are listed "
            + "on every page of the web UI's workers)");
      }
      String cluster = clusterId.get();
      if (cluster == null) {
        throw new io.strata.common.exception.UnavailableException("The master is not leading yet");
      }
      if (!r.getClusterId().isEmpty() && !r.getClusterId().equals(cluster)) {
        // Block ids start again after a format: an old block would pass for a new file's block.
        throw new io.strata.common.exception.FailedPreconditionException("Worker " + r.getAddress().getHost() + ":"
            + r.getAddress().getRpcPort() + " holds blocks of cluster " + r.getClusterId() + ", but this master serves "
            + "cluster " + cluster + " (its journal was formatted since, or it runs on another journal): those "
            + "blocks cannot be trusted here. Point the worker at its cluster's master, or empty its storage dirs "
            + "to let it join this one; or, if this master's journal is that cluster's (restored without its "
            + "CLUSTER_ID file), write " + r.getClusterId() + " into the journal dir's CLUSTER_ID and restart the "
            + "master");
      }
      checkPort(r.getAddress(), "transfer", r.getAddress().getTransferPort(), "none");
      checkPort(r.getAddress(), "web", r.getAddress().getWebPort(), "unknown");
      var report = MasterProtoConverter.fromProto(r.getBlocksList());
      long id = fs.blockMaster().register(MasterProtoConverter.fromProto(r.getAddress()), r.getCapacityBytes(),
          r.getUsedBytes(), report, r.getStartTimeMs(), MasterProtoConverter.fromDirProtos(r.getDirsList()));
      fs.workerRegistered(id, report);
      return RegisterWorkerResponse.newBuilder().setWorkerId(id).setWorkerToken(fs.issueWorkerToken(id))
          .setClusterId(cluster)
          .addAllEndedFileIds(fs.endedFiles(r.getHeldFileIdsList())).build();
    });
  }

  /** A registering worker's optional port {@code kind}: 0 ({@code zero} means what) or a port number. */
  private static void checkPort(io.strata.proto.WorkerAddressProto a, String kind, int port, String zero)
      throws InvalidArgumentException {
    if (port < 0 || port > 65535) {
      throw new InvalidArgumentException("Worker " + a.getHost() + ":" + a.getRpcPort() + " registers a " + kind
          + " port " + port + ", not in 0-65535 (0: " + zero + ")");
    }
  }

  @Override
  public void heartbeat(WorkerHeartbeatRequest r, StreamObserver<WorkerHeartbeatResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      fs.checkWorkerCaller(r.getWorkerId(), r.getWorkerToken(), "Heartbeat");
      if (r.getDirsCount() > MAX_DIRS) {
        throw new InvalidArgumentException("Worker " + r.getWorkerId() + " reports " + r.getDirsCount()
            + " storage dirs in a heartbeat; at most " + MAX_DIRS + " are taken, as at registration");
      }
      MasterReplies.WorkerReply res = fs.workerHeartbeat(r.getWorkerId(), r.getCapacityBytes(), r.getUsedBytes(),
          MasterProtoConverter.fromProto(r.getAddedBlocksList()), r.getRemovedBlockIdsList(),
          r.getDirsCount() == 0 ? null : MasterProtoConverter.fromDirProtos(r.getDirsList()), r.getPinVersion(),
          MasterProtoConverter.fromPersistProtos(r.getPersistResultsList()), r.getAwaitedBytes(),
          r.getEvictableAckedSeq());
      WorkerHeartbeatResponse.Builder b = WorkerHeartbeatResponse.newBuilder()
          .setCommand(res.reregister() ? WorkerHeartbeatResponse.Command.REGISTER
              : WorkerHeartbeatResponse.Command.NOTHING)
          .addAllRemoveBlockIds(res.removeBlockIds()).setPinVersion(res.pinVersion());
      for (MasterReplies.PersistCommand c : res.persist()) {
        b.addPersist(MasterProtoConverter.toProto(c));
      }
      b.addAllEvictableBlockIds(res.evictable().blockIds()).setEvictableSeq(res.evictable().seq());
      if (!res.reregister()) {
        b.addAllAbandonedFileIds(fs.recentlyRecoveredFileIds());
        if (r.getHeldFileIdsCount() > 0) {
          b.addAllEndedFileIds(fs.endedFiles(r.getHeldFileIdsList()));
        }
      }
      if (res.pinnedFileIds() != null) {
        b.setPinsIncluded(true).addAllPinnedFileIds(res.pinnedFileIds());
      }
      return b.build();
    });
  }

  @Override
  public void commitBlock(CommitBlockRequest r, StreamObserver<CommitBlockResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      fs.checkWorkerCaller(r.getWorkerId(), r.getWorkerToken(), "CommitBlock");
      fs.commitBlock(r.getWorkerId(), r.getBlockId(), r.getLength(), r.getTier(), r.getAnnounce(), r.getReplaces());
      return CommitBlockResponse.getDefaultInstance();
    });
  }

  /** Most entries one CommitBlocks or GetUfsWriteTargets call takes. */
  public static final int BATCH_MAX = 1000;

  @Override
  public void commitBlocks(io.strata.proto.CommitBlocksRequest r,
      StreamObserver<io.strata.proto.CommitBlocksResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      CommitBlockRequest first = checkBatch(fs, r.getCommitsList(), CommitBlockRequest::getWorkerId,
          CommitBlockRequest::getWorkerToken, "CommitBlocks");
      List<FileSystemMaster.BlockCommit> commits = new ArrayList<>(r.getCommitsCount());
      for (CommitBlockRequest c : r.getCommitsList()) {
        commits.add(new FileSystemMaster.BlockCommit(c.getBlockId(), c.getLength(), c.getTier(), c.getAnnounce(),
            c.getReplaces()));
      }
      io.strata.proto.CommitBlocksResponse.Builder out = io.strata.proto.CommitBlocksResponse.newBuilder();
      for (StrataException e : fs.commitBlocks(first.getWorkerId(), commits)) {
        out.addResults(entryResult(e));
      }
      return out.build();
    });
  }

  @Override
  public void getUfsWriteTargets(io.strata.proto.GetUfsWriteTargetsRequest r,
      StreamObserver<io.strata.proto.GetUfsWriteTargetsResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      GetUfsWriteTargetRequest first = checkBatch(fs, r.getTargetsList(), GetUfsWriteTargetRequest::getWorkerId,
          GetUfsWriteTargetRequest::getWorkerToken, "GetUfsWriteTargets");
      // The answers carry mount credentials (and each makes a new temp name in place of the writer's): only for a live
      // registered worker showing its token, as GetUfsWriteTarget; an unknown worker id is no pass here.
      fs.checkRegisteredWorker(first.getWorkerId(), first.getWorkerToken(), "GetUfsWriteTargets");
      io.strata.proto.GetUfsWriteTargetsResponse.Builder out = io.strata.proto.GetUfsWriteTargetsResponse.newBuilder();
      List<Long> fileIds = new ArrayList<>(r.getTargetsCount());
      r.getTargetsList().forEach(t -> fileIds.add(t.getFileId()));
      for (MasterReplies.UfsTargetResult got : fs.ufsWriteTargets(fileIds)) { // one journal flush for the batch
        io.strata.proto.UfsWriteTargetResult.Builder b = io.strata.proto.UfsWriteTargetResult.newBuilder();
        if (got.target() != null) {
          b.setTarget(GetUfsWriteTargetResponse.newBuilder().setUfsUri(got.target().ufsUri())
              .putAllUfsOptions(got.target().options()));
        }
        b.setResult(entryResult(got.error()));
        out.addTargets(b);
      }
      return out.build();
    });
  }

  /**
   * A batch's first entry, once the batch is 1 to {@link #BATCH_MAX} entries that all name one worker and token,
   * and that worker is a live registered one showing its token.
   */
  private static <T> T checkBatch(FileSystemMaster fs, List<T> entries, java.util.function.ToLongFunction<T> worker,
      java.util.function.Function<T, String> token, String call) throws StrataException {
    if (entries.isEmpty() || entries.size() > BATCH_MAX) {
      throw new InvalidArgumentException(call + " takes 1 to " + BATCH_MAX + " entries, not " + entries.size());
    }
    T first = entries.get(0);
    for (T e : entries) {
      if (worker.applyAsLong(e) != worker.applyAsLong(first)) {
        throw new InvalidArgumentException(call + " entries must all name one worker: worker "
            + worker.applyAsLong(first) + " and worker " + worker.applyAsLong(e) + " in one call");
      }
      if (!token.apply(e).equals(token.apply(first))) {
        throw new InvalidArgumentException(call + " entries must all carry one registration token: worker "
            + worker.applyAsLong(first) + " sent two in one call");
      }
    }
    fs.checkWorkerCaller(worker.applyAsLong(first), token.apply(first), call);
    return first;
  }

  private static io.strata.proto.EntryResult entryResult(StrataException e) {
    return e == null ? io.strata.proto.EntryResult.getDefaultInstance() : io.strata.proto.EntryResult.newBuilder()
        .setErrorCode(e.code().name()).setErrorMessage(String.valueOf(e.getMessage())).build();
  }

  @Override
  public void getBlockSource(GetBlockSourceRequest r, StreamObserver<GetBlockSourceResponse> o) {
    Rpc.unary(o, () -> {
      MasterReplies.BlockSource src = state.leading().blockSource(r.getWorkerId(), r.getWorkerToken(),
          r.getBlockId());
      GetBlockSourceResponse.Builder b = GetBlockSourceResponse.newBuilder().setLength(src.length());
      for (BlockState.Location loc : src.locations()) {
        b.addLocations(MasterProtoConverter.toProto(loc));
      }
      if (src.ufs() != null) {
        b.setUfs(UfsBlockSourceProto.newBuilder().setUfsUri(src.ufs().ufsUri()).putAllUfsOptions(src.ufs().options())
            .setOffset(src.ufs().offset()).setFileLength(src.ufs().fileLength())
            .setUfsMtimeMs(src.ufs().ufsMtimeMs()).setUfsContentTag(src.ufs().ufsContentTag()));
      }
      return b.build();
    });
  }

  @Override
  public void getUfsWriteTarget(GetUfsWriteTargetRequest r, StreamObserver<GetUfsWriteTargetResponse> o) {
    Rpc.unary(o, () -> {
      MasterReplies.UfsTarget t = state.leading().ufsWriteTarget(r.getWorkerId(), r.getWorkerToken(),
          r.getFileId());
      return GetUfsWriteTargetResponse.newBuilder().setUfsUri(t.ufsUri()).putAllUfsOptions(t.options()).build();
    });
  }
}
