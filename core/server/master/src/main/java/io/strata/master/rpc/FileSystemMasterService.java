package io.strata.master.rpc;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.strata.common.grpc.GrpcErrors;
import io.strata.master.MasterKeys;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.WorkerState;
import io.strata.master.file.FileInfo;
import io.strata.master.file.FileSystemMaster;
import io.strata.master.file.MasterReplies;
import io.strata.master.file.MountTable;
import io.strata.master.file.WriteType;
import io.strata.proto.FreeRequest;
import io.strata.proto.FreeResponse;
import io.strata.proto.GetMountTableRequest;
import io.strata.proto.GetMountTableResponse;
import io.strata.proto.MountInfoProto;
import io.strata.proto.MountRequest;
import io.strata.proto.MountResponse;
import io.strata.proto.ScheduleAsyncPersistenceRequest;
import io.strata.proto.ScheduleAsyncPersistenceResponse;
import io.strata.proto.SetAttributeRequest;
import io.strata.proto.SetAttributeResponse;
import io.strata.proto.UnmountRequest;
import io.strata.proto.UnmountResponse;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CompleteFileResponse;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateDirectoryResponse;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.CreateFileResponse;
import io.strata.proto.DeleteRequest;
import io.strata.proto.DeleteResponse;
import io.strata.proto.ExistsRequest;
import io.strata.proto.ExistsResponse;
import io.strata.proto.FileSystemMasterServiceGrpc;
import io.strata.proto.GetClusterInfoRequest;
import io.strata.proto.GetClusterInfoResponse;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.GetStatusResponse;
import io.strata.proto.GetWorkersRequest;
import io.strata.proto.GetWorkersResponse;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import io.strata.proto.RenameRequest;
import io.strata.proto.RenameResponse;
import io.strata.server.Rpc;
import java.util.ArrayList;
import java.util.List;

/** Client-facing metadata service: decode, call {@link FileSystemMaster}, encode. Thread-safe. */
public final class FileSystemMasterService extends FileSystemMasterServiceGrpc.FileSystemMasterServiceImplBase {
  private final MasterState state;
  private final String masterAddress;
  private final long startTimeMs;
  private final int maxBatch;
  /** Runs streamed listings (each one waits for its client's flow-control window), a bounded number at once. */
  private final ListingPool listings;
  /** The server's handler pool, for the blocking part of the inline methods. */
  private final HandOff handOff;

  /** Where an inline method runs what may block: the server's handler pool ({@code GrpcServer#handOff}). */
  @FunctionalInterface
  public interface HandOff {
    void handOff(Runnable work, java.util.function.Consumer<io.grpc.StatusException> refused);
  }

  private final io.strata.master.ClusterDefaults clusterDefaults;
  /** This master's web port (0 until its web server is up), sent with the cluster info. */
  private final java.util.function.IntSupplier webPort;

  public FileSystemMasterService(MasterState state, String masterAddress, long startTimeMs, int maxBatch,
      ListingPool listings, HandOff handOff, io.strata.master.ClusterDefaults clusterDefaults,
      java.util.function.IntSupplier webPort) {
    this.webPort = webPort;
    this.listings = listings;
    this.handOff = handOff;
    this.clusterDefaults = clusterDefaults;
    this.state = state;
    this.masterAddress = masterAddress;
    this.startTimeMs = startTimeMs;
    this.maxBatch = maxBatch;
  }

  @Override
  public void ping(io.strata.proto.PingRequest r, StreamObserver<io.strata.proto.PingResponse> o) {
    Rpc.unary(o, () -> {
      state.leading();
      return io.strata.proto.PingResponse.getDefaultInstance();
    });
  }

  @Override
  public void createFile(CreateFileRequest r, StreamObserver<CreateFileResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      return CreateFileResponse.newBuilder().setFile(MasterProtoConverter.toProto(
        fs.createFile(r.getPath(), r.getBlockSize(), r.getRecursive(), r.getMode(),
            WriteType.parse(r.getWriteType()), r.getClientId(), r.getOwner(),
            MasterProtoConverter.requestId(r.hasRequestId(), r.getRequestId())))).build();
    });
  }

  /**
   * Lease renewals run on their own small pool, never queued behind the handler pool: with every handler thread
   * stuck (a UFS that stopped answering), renewals that waited there would let live writers' leases run out, and
   * lease recovery (on its own thread) would delete their files. A renewal does no I/O: the tree's read lock and the
   * leases' monitor. Idle, the pool has no thread.
   */
  private static final java.util.concurrent.ThreadPoolExecutor RENEWALS = renewals();

  private static java.util.concurrent.ThreadPoolExecutor renewals() {
    java.util.concurrent.ThreadPoolExecutor pool = new java.util.concurrent.ThreadPoolExecutor(2, 2, 30,
        java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.ArrayBlockingQueue<>(4096),
        io.strata.server.GrpcServer.namedDaemon("master-lease-renewals"));
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  @Override
  public void renewLease(io.strata.proto.RenewLeaseRequest r, StreamObserver<io.strata.proto.RenewLeaseResponse> o) {
    try {
      RENEWALS.execute(() -> Rpc.unary(o, () -> io.strata.proto.RenewLeaseResponse.newBuilder()
          .addAllLostFileIds(state.leading().renewLease(r.getClientId(), r.getFileIdsList())).build()));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      o.onError(GrpcErrors.toStatus(new io.strata.common.exception.ResourceExhaustedException(
          "Too many lease renewals waiting at the master (4096); retry")));
    }
  }

  @Override
  public void reportCorruptBlock(io.strata.proto.ReportCorruptBlockRequest r,
      StreamObserver<io.strata.proto.ReportCorruptBlockResponse> o) {
    Rpc.unary(o, () -> io.strata.proto.ReportCorruptBlockResponse.newBuilder().setRemoved(state.leading()
        .reportCorruptBlock(r.getBlockId(), MasterProtoConverter.fromProto(r.getWorker()), r.getOffset(),
            r.getReason())).build());
  }

  @Override
  public void completeFile(CompleteFileRequest r, StreamObserver<CompleteFileResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      return CompleteFileResponse.newBuilder().setFile(MasterProtoConverter.toProto(
        fs.completeFile(r.getPath(), r.getFileId(), r.getLength(), r.getUfsWritten(),
            MasterProtoConverter.requestId(r.hasRequestId(), r.getRequestId())))).build();
    });
  }

  /** Most entries one CreateFiles call takes (a caller with more splits them). */
  public static final int CREATE_FILES_MAX = 1000;

  @Override
  public void createFiles(io.strata.proto.CreateFilesRequest r, StreamObserver<io.strata.proto.CreateFilesResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      if (r.getFilesCount() == 0 || r.getFilesCount() > CREATE_FILES_MAX) {
        throw new io.strata.common.exception.InvalidArgumentException("CreateFiles takes 1 to " + CREATE_FILES_MAX
            + " files, not " + r.getFilesCount());
      }
      List<FileSystemMaster.CreateEntry> entries = new ArrayList<>(r.getFilesCount());
      for (CreateFileRequest f : r.getFilesList()) {
        entries.add(new FileSystemMaster.CreateEntry(f.getPath(), f.getBlockSize(), f.getRecursive(), f.getMode(),
            WriteType.parse(f.getWriteType()), f.getClientId(), f.getOwner(),
            MasterProtoConverter.requestId(f.hasRequestId(), f.getRequestId())));
      }
      io.strata.proto.CreateFilesResponse.Builder out = io.strata.proto.CreateFilesResponse.newBuilder();
      for (FileSystemMaster.Outcome c : fs.createFiles(entries)) {
        out.addResults(result(c, MasterProtoConverter::toProto));
      }
      return out.build();
    });
  }

  /** One entry's answer of CreateFiles or CompleteFiles. */
  private static io.strata.proto.FileResult result(FileSystemMaster.Outcome c,
      java.util.function.Function<FileInfo, io.strata.proto.FileInfoProto> encode) {
    io.strata.proto.FileResult.Builder b = io.strata.proto.FileResult.newBuilder();
    if (c.error() != null) {
      return b.setErrorCode(c.error().code().name()).setErrorMessage(String.valueOf(c.error().getMessage())).build();
    }
    return b.setFile(encode.apply(c.file())).build();
  }

  /** Most entries one CompleteFiles call takes (a caller with more splits them). */
  public static final int COMPLETE_FILES_MAX = 1000;

  @Override
  public void completeFiles(io.strata.proto.CompleteFilesRequest r,
      StreamObserver<io.strata.proto.CompleteFilesResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      if (r.getFilesCount() == 0 || r.getFilesCount() > COMPLETE_FILES_MAX) {
        throw new io.strata.common.exception.InvalidArgumentException("CompleteFiles takes 1 to "
            + COMPLETE_FILES_MAX + " files, not " + r.getFilesCount());
      }
      List<FileSystemMaster.CompleteEntry> entries = new ArrayList<>(r.getFilesCount());
      for (CompleteFileRequest f : r.getFilesList()) {
        if (f.getUfsWritten()) {
          throw new io.strata.common.exception.InvalidArgumentException("CompleteFiles does not take ufs_written "
              + "(an ASYNC_THROUGH writer's own UFS copy), as " + f.getPath() + " asks: use CompleteFile");
        }
        entries.add(new FileSystemMaster.CompleteEntry(f.getPath(), f.getFileId(), f.getLength(),
            MasterProtoConverter.requestId(f.hasRequestId(), f.getRequestId())));
      }
      io.strata.proto.CompleteFilesResponse.Builder out = io.strata.proto.CompleteFilesResponse.newBuilder();
      for (FileSystemMaster.Outcome c : fs.completeFiles(entries)) {
        out.addResults(result(c, f -> r.getIncludeBlocks() ? MasterProtoConverter.toProto(f, fs.blocksOf(f))
            : MasterProtoConverter.toProto(f)));
      }
      return out.build();
    });
  }

  @Override
  public void createDirectory(CreateDirectoryRequest r, StreamObserver<CreateDirectoryResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      return CreateDirectoryResponse.newBuilder().setFile(MasterProtoConverter.toProto(
        fs.createDirectory(r.getPath(), r.getRecursive(), r.getAllowExists(), r.getMode(),
            WriteType.parse(r.getWriteType()), r.getOwner()))).build();
    });
  }

  /**
   * The methods that run on the transport thread (see {@code GrpcServer}): they answer from memory without
   * waiting, or hand their blocking part to the handler pool ({@link #blocking}). ListStatus only starts
   * its listing on the listings pool, and RenewLease runs on its own pool ({@link #RENEWALS}).
   */
  public static final java.util.Set<String> INLINE_METHODS = java.util.Set.of(
      FileSystemMasterServiceGrpc.getPingMethod().getFullMethodName(),
      FileSystemMasterServiceGrpc.getGetStatusMethod().getFullMethodName(),
      FileSystemMasterServiceGrpc.getExistsMethod().getFullMethodName(),
      FileSystemMasterServiceGrpc.getListStatusMethod().getFullMethodName(),
      FileSystemMasterServiceGrpc.getRenewLeaseMethod().getFullMethodName());

  /** Runs a call that may block on the handler pool (or refuses it when the pool is saturated). */
  private <T> void blocking(StreamObserver<T> o, Rpc.Call<T> call) {
    handOff.handOff(() -> Rpc.unary(o, call), o::onError);
  }

  @Override
  public void getStatus(GetStatusRequest r, StreamObserver<GetStatusResponse> o) {
    // Block locations take the block master's monitor, which a block report may hold: not on this thread.
    if (!r.getIncludeBlocks() && Rpc.tryUnary(o, () -> {
      FileInfo f = state.leading().getStatusIfInMemory(r.getPath(), r.getSyncIntervalMs());
      return f == null ? null : GetStatusResponse.newBuilder().setFile(MasterProtoConverter.toProto(f)).build();
    })) {
      return;
    }
    blocking(o, () -> {
      FileSystemMaster fs = state.leading();
      FileInfo f = fs.getStatus(r.getPath(), r.getSyncIntervalMs());
      return GetStatusResponse.newBuilder().setFile(r.getIncludeBlocks() && !f.directory()
          ? MasterProtoConverter.toProto(f, fs.blocksOf(f)) : MasterProtoConverter.toProto(f)).build();
    });
  }

  @Override
  public void listStatus(ListStatusRequest r, StreamObserver<ListStatusResponse> o) {
    ServerCallStreamObserver<ListStatusResponse> out = (ServerCallStreamObserver<ListStatusResponse>) o;
    int batch = r.getBatchSize() <= 0 ? 1000 : Math.min(r.getBatchSize(), maxBatch);
    if (!r.getRecursive() && listedHere(r, out, batch)) {
      return;
    }
    // Flow control: the next batch is read from the tree only once the client has taken the previous
    // ones, so a huge directory is never buffered whole on the master.
    Object ready = new Object();
    out.setOnReadyHandler(() -> {
      synchronized (ready) {
        ready.notifyAll();
      }
    });
    out.setOnCancelHandler(() -> {
      synchronized (ready) {
        ready.notifyAll();
      }
    });
    // The listing runs on its own thread: gRPC delivers this call's onReady callbacks on the thread that
    // serialises its callbacks, which is busy while this handler runs, so waiting here would only ever end
    // by timeout.
    try {
      listings.start(() -> list(r, out, batch, ready));
    } catch (io.strata.common.exception.StrataException e) {
      out.onError(GrpcErrors.toStatus(e));
    }
  }

  /** A listing of one batch at most, answered on this (transport) thread when memory has it all. */
  private boolean listedHere(ListStatusRequest r, ServerCallStreamObserver<ListStatusResponse> out, int batch) {
    List<FileInfo> small;
    try {
      small = state.leading().listSmallIfInMemory(r.getPath(), batch, r.getSyncIntervalMs());
    } catch (Exception e) {
      out.onError(GrpcErrors.toStatus(e));
      return true;
    }
    if (small == null) {
      return false;
    }
    if (!small.isEmpty()) { // an empty directory sends no batch, as a streamed listing does
      ListStatusResponse.Builder b = ListStatusResponse.newBuilder();
      for (FileInfo f : small) {
        b.addFiles(MasterProtoConverter.toProto(f));
      }
      out.onNext(b.build());
    }
    out.onCompleted();
    return true;
  }

  private void list(ListStatusRequest r, ServerCallStreamObserver<ListStatusResponse> out, int batch, Object ready) {
    try {
      FileSystemMaster fs = state.leading();
      long stallMs = listings.stallTimeout().toMillis();
      fs.listStatus(r.getPath(), r.getRecursive(), batch, files -> {
        long since = System.nanoTime();
        synchronized (ready) {
          while (!out.isReady() && !out.isCancelled()) {
            long waitedMs = (System.nanoTime() - since) / 1_000_000;
            if (waitedMs >= stallMs) {
              out.onError(io.grpc.Status.DEADLINE_EXCEEDED.withDescription("The listing of " + r.getPath()
                  + " was ended: its client took none of the batches sent for " + waitedMs + " ms ("
                  + MasterKeys.LISTING_STALL_TIMEOUT.name() + ")").asRuntimeException());
              throw new ListingCancelled();
            }
            try {
              ready.wait(Math.min(1000, stallMs - waitedMs));
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new ListingCancelled();
            }
          }
        }
        if (out.isCancelled()) {
          throw new ListingCancelled();
        }
        ListStatusResponse.Builder b = ListStatusResponse.newBuilder();
        for (FileInfo f : files) {
          b.addFiles(MasterProtoConverter.toProto(f));
        }
        out.onNext(b.build());
      }, r.getSyncIntervalMs());
      out.onCompleted();
    } catch (ListingCancelled e) {
      // The client went away; nothing to send.
    } catch (Exception e) {
      out.onError(GrpcErrors.toStatus(e));
    }
  }

  /** Unwinds a listing whose client cancelled. */
  private static final class ListingCancelled extends RuntimeException {
    ListingCancelled() {
      super(null, null, false, false);
    }
  }

  @Override
  public void delete(DeleteRequest r, StreamObserver<DeleteResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      fs.delete(r.getPath(), r.getRecursive(), r.getStrataOnly(), r.getFileId(),
          MasterProtoConverter.requestId(r.hasRequestId(), r.getRequestId()));
      return DeleteResponse.getDefaultInstance();
    });
  }

  @Override
  public void rename(RenameRequest r, StreamObserver<RenameResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      fs.rename(r.getSrc(), r.getDst(), MasterProtoConverter.requestId(r.hasRequestId(), r.getRequestId()));
      return RenameResponse.getDefaultInstance();
    });
  }

  @Override
  public void exists(ExistsRequest r, StreamObserver<ExistsResponse> o) {
    if (Rpc.tryUnary(o, () -> state.leading().getStatusIfInMemory(r.getPath(), -1) == null ? null
        : ExistsResponse.newBuilder().setExists(true).build())) {
      return;
    }
    blocking(o, () -> { // absent here: the UFS may hold it
      FileSystemMaster fs = state.leading();
      return ExistsResponse.newBuilder().setExists(fs.exists(r.getPath())).build();
    });
  }

  @Override
  public void mount(MountRequest r, StreamObserver<MountResponse> o) {
    Rpc.unary(o, () -> {
      MountInfoProto m = r.getMount();
      state.leading().mount(m.getPath(), m.getUfsUri(), m.getReadOnly(), m.getShared(), m.getOptionsMap());
      return MountResponse.getDefaultInstance();
    });
  }

  @Override
  public void unmount(UnmountRequest r, StreamObserver<UnmountResponse> o) {
    Rpc.unary(o, () -> {
      state.leading().unmount(r.getPath());
      return UnmountResponse.getDefaultInstance();
    });
  }

  @Override
  public void getMountTable(GetMountTableRequest r, StreamObserver<GetMountTableResponse> o) {
    Rpc.unary(o, () -> {
      GetMountTableResponse.Builder b = GetMountTableResponse.newBuilder();
      for (MountTable.MountInfo m : state.leading().mountTable()) {
        b.addMounts(MasterProtoConverter.toProto(m));
      }
      return b.build();
    });
  }

  @Override
  public void free(FreeRequest r, StreamObserver<FreeResponse> o) {
    Rpc.unary(o, () -> {
      MasterReplies.FreeResult res = state.leading().free(r.getPath(), r.getRecursive(), r.getForce());
      return FreeResponse.newBuilder().setFilesFreed(res.filesFreed()).setBlocksFreed(res.blocksFreed()).build();
    });
  }

  @Override
  public void setAttribute(SetAttributeRequest r, StreamObserver<SetAttributeResponse> o) {
    Rpc.unary(o, () -> SetAttributeResponse.newBuilder().setFile(MasterProtoConverter.toProto(
        state.leading().setAttribute(r.getPath(), MasterProtoConverter.fromProto(r)))).build());
  }

  @Override
  public void scheduleAsyncPersistence(ScheduleAsyncPersistenceRequest r,
      StreamObserver<ScheduleAsyncPersistenceResponse> o) {
    Rpc.unary(o, () -> ScheduleAsyncPersistenceResponse.newBuilder().setFile(MasterProtoConverter.toProto(
        state.leading().scheduleAsyncPersistence(r.getPath()))).build());
  }

  @Override
  public void getWorkers(GetWorkersRequest r, StreamObserver<GetWorkersResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      GetWorkersResponse.Builder b = GetWorkersResponse.newBuilder();
      for (WorkerState w : fs.blockMaster().liveWorkers()) {
        b.addWorkers(MasterProtoConverter.toProto(w));
      }
      return b.build();
    });
  }

  @Override
  public void getClusterInfo(GetClusterInfoRequest r, StreamObserver<GetClusterInfoResponse> o) {
    Rpc.unary(o, () -> {
      FileSystemMaster fs = state.leading();
      BlockMaster bm = fs.blockMaster();
      List<WorkerState> live = bm.liveWorkers();
      List<WorkerState> lost = bm.lostWorkers();
      long capacity = 0;
      long used = 0;
      for (WorkerState w : live) {
        capacity += w.capacityBytes();
        used += w.usedBytes();
      }
      GetClusterInfoResponse.Builder b = GetClusterInfoResponse.newBuilder().setMasterAddress(masterAddress)
          .setStartTimeMs(startTimeMs).setLiveWorkers(live.size()).setLostWorkers(lost.size())
          .setCapacityBytes(capacity).setUsedBytes(used).setFileCount(fs.tree().fileCount())
          .setDirectoryCount(fs.tree().directoryCount()).setBlockCount(bm.blockCount())
          .setMasterWebPort(webPort.getAsInt());
      for (WorkerState w : lost) {
        b.addLost(MasterProtoConverter.toProto(w));
      }
      return b.build();
    });
  }

  @Override
  public void getClusterConfiguration(io.strata.proto.GetClusterConfigurationRequest r,
      StreamObserver<io.strata.proto.GetClusterConfigurationResponse> o) {
    Rpc.unary(o, () -> {
      state.leading();
      return io.strata.proto.GetClusterConfigurationResponse.newBuilder()
          .putAllClientDefaults(clusterDefaults.values()).setHash(clusterDefaults.hash()).build();
    });
  }
}
