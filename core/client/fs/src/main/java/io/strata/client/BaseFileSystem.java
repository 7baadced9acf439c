package io.strata.client;

import io.grpc.StatusRuntimeException;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.ReadType;
import io.strata.client.options.RenameOptions;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.ExistsRequest;
import io.strata.proto.FileInfoProto;
import io.strata.proto.GetClusterInfoRequest;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.GetWorkersRequest;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import io.strata.proto.RenameRequest;
import io.strata.proto.WorkerInfoProto;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;

/** The FileSystem over gRPC: metadata calls to the master, data through block streams. Thread-safe. */
final class BaseFileSystem implements FileSystem {
  private final FileSystemContext context;
  private final WorkerSelector workers;

  BaseFileSystem(FileSystemContext context) {
    this.context = context;
    this.workers = new WorkerSelector(context, this);
  }

  private static String check(String path) throws StrataException {
    return StrataPath.of(path).toString();
  }

  @Override
  public FileOutStream createFile(String path, CreateFileOptions options) throws IOException {
    check(path);
    long blockSize = options.blockSize() > 0 ? options.blockSize()
        : context.conf().get(ClientKeys.BLOCK_SIZE_DEFAULT);
    FileInfoProto info = context.callMaster(m -> m.createFile(CreateFileRequest.newBuilder()
        .setPath(path).setBlockSize(blockSize).setRecursive(options.recursive()).setMode(options.mode())
        .build()).getFile());
    return new FileOutStream(context, workers, ProtoConverter.toStatus(info));
  }

  @Override
  public FileInStream openFile(String path, OpenFileOptions options) throws IOException {
    check(path);
    URIStatus status = ProtoConverter.toStatus(context.callMaster(m -> m.getStatus(
        GetStatusRequest.newBuilder().setPath(path).setIncludeBlocks(true).build()).getFile()));
    if (status.directory()) {
      throw new FailedPreconditionException("Cannot open '" + path + "': it is a directory");
    }
    if (!status.complete()) {
      throw new FailedPreconditionException("Cannot open '" + path + "': the file is not complete "
          + "(its writer has not closed it)");
    }
    return new FileInStream(context, status, options.readType() == ReadType.CACHE_PROMOTE);
  }

  @Override
  public List<FileBlockInfo> getBlockLocations(String path) throws IOException {
    check(path);
    URIStatus status = ProtoConverter.toStatus(context.callMaster(m -> m.getStatus(
        GetStatusRequest.newBuilder().setPath(path).setIncludeBlocks(true).build()).getFile()));
    return status.blocks();
  }

  @Override
  public URIStatus getStatus(String path) throws IOException {
    check(path);
    return ProtoConverter.toStatus(context.callMaster(m -> m.getStatus(
        GetStatusRequest.newBuilder().setPath(path).build()).getFile()));
  }

  @Override
  public void iterateStatus(String path, ListStatusOptions options, Consumer<URIStatus> action)
      throws IOException {
    check(path);
    ListStatusRequest req = ListStatusRequest.newBuilder().setPath(path).setRecursive(options.recursive())
        .setBatchSize(context.conf().get(ClientKeys.LIST_BATCH_SIZE)).build();
    long[] delivered = {0};
    context.streamMaster(m -> {
      io.grpc.Context.CancellableContext ctx = io.grpc.Context.current().withCancellation();
      try {
        ctx.run(() -> {
          Iterator<ListStatusResponse> it = m.listStatus(req);
          try {
            while (it.hasNext()) {
              for (FileInfoProto f : it.next().getFilesList()) {
                action.accept(ProtoConverter.toStatus(f));
                delivered[0]++;
              }
            }
          } catch (StatusRuntimeException e) {
            if (delivered[0] > 0) {
              // Part of the listing was delivered: a retry would repeat it, so this failure is final.
              throw io.grpc.Status.ABORTED.withDescription("The listing of " + path + " broke after "
                  + delivered[0] + " entries: " + e.getStatus()).asRuntimeException();
            }
            throw e;
          }
        });
      } finally {
        ctx.cancel(null);
      }
      return null;
    });
  }

  @Override
  public void createDirectory(String path, CreateDirectoryOptions options) throws IOException {
    check(path);
    context.callMaster(m -> m.createDirectory(CreateDirectoryRequest.newBuilder().setPath(path)
        .setRecursive(options.recursive()).setAllowExists(options.allowExists()).setMode(options.mode())
        .build()));
  }

  @Override
  public void delete(String path, DeleteOptions options) throws IOException {
    check(path);
    context.callMaster(m -> m.delete(DeleteRequest.newBuilder().setPath(path)
        .setRecursive(options.recursive()).build()));
  }

  @Override
  public void rename(String src, String dst, RenameOptions options) throws IOException {
    check(src);
    check(dst);
    context.callMaster(m -> m.rename(RenameRequest.newBuilder().setSrc(src).setDst(dst).build()));
  }

  @Override
  public boolean exists(String path) throws IOException {
    check(path);
    return context.callMaster(m -> m.exists(ExistsRequest.newBuilder().setPath(path).build()).getExists());
  }

  @Override
  public List<WorkerInfo> getWorkers() throws IOException {
    List<WorkerInfoProto> protos = context.callMaster(m -> m.getWorkers(
        GetWorkersRequest.getDefaultInstance()).getWorkersList());
    List<WorkerInfo> out = new ArrayList<>(protos.size());
    for (WorkerInfoProto p : protos) {
      out.add(ProtoConverter.toWorker(p));
    }
    return out;
  }

  @Override
  public ClusterInfo getClusterInfo() throws IOException {
    return ProtoConverter.toClusterInfo(context.callMaster(m -> m.getClusterInfo(
        GetClusterInfoRequest.getDefaultInstance())));
  }

  @Override
  public StrataConf conf() {
    return context.conf();
  }

  @Override
  public void close() {
    context.close();
  }
}
