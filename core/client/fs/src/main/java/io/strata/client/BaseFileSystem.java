package io.strata.client;

import io.grpc.StatusRuntimeException;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.GetStatusOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.client.options.MountOptions;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.ReadType;
import io.strata.client.options.RenameOptions;
import io.strata.client.options.SetAttributeOptions;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.DeadlineExceededException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.ExistsRequest;
import io.strata.proto.FileInfoProto;
import io.strata.proto.FreeRequest;
import io.strata.proto.FreeResponse;
import io.strata.proto.GetClusterInfoRequest;
import io.strata.proto.GetMountTableRequest;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.GetWorkersRequest;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import io.strata.proto.MountInfoProto;
import io.strata.proto.MountRequest;
import io.strata.proto.RenameRequest;
import io.strata.proto.ScheduleAsyncPersistenceRequest;
import io.strata.proto.SetAttributeRequest;
import io.strata.proto.UnmountRequest;
import io.strata.proto.WorkerInfoProto;
import io.strata.common.time.Deadlines;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The FileSystem over gRPC: metadata calls to the master, data through block streams (and, for the write
 * types that write through, a stream of the under file system copy). Thread-safe.
 */
final class BaseFileSystem implements FileSystem {
  private final FileSystemContext context;
  private final WorkerSelector workers;
  /** The cache that counts this instance's references, or null for one made by FileSystem.create. */
  private final FileSystemCache owner;
  /**
   * Whether this instance made its context and so closes it with its last close (FileSystem.create(StrataConf) and
   * the shared instances); false for a context the caller passed in, which the caller closes.
   */
  private final boolean ownsContext;
  private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * @param owner the cache counting this instance's references, or null
   * @param ownsContext whether {@link #close} closes {@code context} (see {@link #ownsContext})
   */
  BaseFileSystem(FileSystemContext context, FileSystemCache owner, boolean ownsContext) {
    this.context = context;
    this.owner = owner;
    this.ownsContext = ownsContext;
    this.workers = new WorkerSelector(context.conf(), this::listWorkers);
  }

  /**
   * Fails every operation of a closed client (its last close, or its context's) before it does anything: a closed
   * client answers nothing, not even from its metadata cache.
   */
  private void ensureOpen() throws FailedPreconditionException {
    if (closed.get() || context.isClosed()) {
      throw new FailedPreconditionException("This client is closed" + (closed.get() ? "" : " (its context was closed)")
          + ": make a new one to go on");
    }
  }

  private MetadataCache cache() {
    return context.metadataCache();
  }

  /**
   * A master call that changes the namespace at {@code paths}: their cached entries (and those of their
   * parents and children) go whether it succeeds or fails. A failure may still have taken effect (an answer
   * lost after the master applied it), or may say the cache was stale (a NotFound for a path another client
   * deleted).
   */
  private <T> T changing(java.util.function.Function<io.strata.proto.FileSystemMasterServiceGrpc
      .FileSystemMasterServiceBlockingStub, T> call, String... paths) throws StrataException {
    try {
      return context.callMaster(call);
    } finally {
      cache().invalidate(java.util.Arrays.asList(paths));
    }
  }

  private static String check(String path) throws StrataException {
    return StrataPath.of(path).toString();
  }

  @Override
  public FileOutStream createFile(String path, CreateFileOptions options) throws IOException {
    ensureOpen();
    WriteType writeType = options.writeType().orElseGet(() -> ClientKeys.writeTypeDefault(context.conf()));
    return new FileOutStream(context, workers, create(path, options, writeType), writeType);
  }

  @Override
  public WorkerWrittenFile createWorkerWrittenFile(String path, CreateFileOptions options) throws IOException {
    ensureOpen();
    WriteType writeType = options.writeType().orElseGet(() -> ClientKeys.writeTypeDefault(context.conf()));
    return new WorkerWrittenFile(context, create(path, options, writeType));
  }

  @Override
  public List<WorkerWrittenFile.Creation> createWorkerWrittenFiles(List<String> paths, CreateFileOptions options)
      throws IOException {
    ensureOpen();
    if (paths == null || paths.isEmpty() || paths.size() > WorkerWrittenFile.COMPLETE_ALL_MAX) {
      throw new io.strata.common.exception.InvalidArgumentException("createWorkerWrittenFiles takes 1 to "
          + WorkerWrittenFile.COMPLETE_ALL_MAX + " paths, not " + (paths == null ? "null" : paths.size()));
    }
    WriteType writeType = options.writeType().orElseGet(() -> ClientKeys.writeTypeDefault(context.conf()));
    WorkerWrittenFile.Creation[] out = new WorkerWrittenFile.Creation[paths.size()];
    io.strata.proto.CreateFilesRequest.Builder req = io.strata.proto.CreateFilesRequest.newBuilder();
    List<Integer> sent = new ArrayList<>();
    List<String> valid = new ArrayList<>();
    for (int i = 0; i < paths.size(); i++) {
      String path = paths.get(i);
      try {
        if (path == null) {
          throw new InvalidArgumentException("Path " + i + " of the batch is null: a path must be absolute, "
              + "like /dir/file");
        }
        check(path);
      } catch (StrataException e) {
        out[i] = new WorkerWrittenFile.Creation(null, e); // that path alone fails; the others are still created
        continue;
      }
      req.addFiles(createRequest(path, options, writeType));
      sent.add(i);
      valid.add(path);
    }
    if (!sent.isEmpty()) {
      io.strata.proto.CreateFilesRequest built = req.build(); // once: the same request ids on every retry
      // Only the paths sent: the cache invalidates (and so parses) only what the master was asked to change.
      io.strata.proto.CreateFilesResponse answer = changing(m -> m.createFiles(built), valid.toArray(new String[0]));
      if (answer.getResultsCount() != sent.size()) {
        throw new io.strata.common.exception.InternalException("The master answered " + answer.getResultsCount()
            + " results to a CreateFiles of " + sent.size() + " files");
      }
      for (int k = 0; k < sent.size(); k++) {
        io.strata.proto.FileResult r = answer.getResults(k);
        String path = paths.get(sent.get(k));
        out[sent.get(k)] = r.getErrorCode().isEmpty()
            ? new WorkerWrittenFile.Creation(new WorkerWrittenFile(context, ProtoConverter.toStatus(r.getFile())), null)
            : new WorkerWrittenFile.Creation(null, WorkerWrittenFile.error(r, "Creating " + path));
      }
    }
    return List.of(out);
  }

  private URIStatus create(String path, CreateFileOptions options, WriteType writeType) throws IOException {
    check(path);
    // Built once: its request id stays the same on every retry (see FileSystemContext#nextRequestId).
    CreateFileRequest req = createRequest(path, options, writeType);
    FileInfoProto info = changing(m -> m.createFile(req).getFile(), path);
    return ProtoConverter.toStatus(info);
  }

  private CreateFileRequest createRequest(String path, CreateFileOptions options, WriteType writeType) {
    long blockSize = options.blockSize() > 0 ? options.blockSize()
        : context.conf().get(ClientKeys.BLOCK_SIZE_DEFAULT);
    return CreateFileRequest.newBuilder()
        .setPath(path).setBlockSize(blockSize).setRecursive(options.recursive()).setMode(options.mode())
        .setWriteType(writeType.name()).setClientId(context.leases().clientId())
        .setOwner(ClientKeys.loginName(context.conf())).setRequestId(context.nextRequestId()).build();
  }

  @Override
  public FileInStream openFile(String path, OpenFileOptions options) throws IOException {
    ensureOpen();
    check(path);
    URIStatus status = statusWithBlocks(path);
    if (status.directory()) {
      throw new FailedPreconditionException("Cannot open '" + path + "': it is a directory");
    }
    if (!status.complete()) {
      throw new FailedPreconditionException("Cannot open '" + path + "': the file is not complete "
          + "(its writer has not closed it)");
    }
    ReadType readType = options.readType().orElseGet(() -> ClientKeys.readTypeDefault(context.conf()));
    return new FileInStream(context, workers, status, readType);
  }

  @Override
  public FileInStream openFile(URIStatus status, OpenFileOptions options) throws IOException {
    ensureOpen();
    long cached = 0;
    for (FileBlockInfo b : status.blocks()) {
      cached += b.length();
    }
    if (status.directory() || !status.complete() || cached != status.length()) {
      return openFile(status.path(), options); // says why it cannot be read, or fetches the blocks
    }
    check(status.path());
    ReadType readType = options.readType().orElseGet(() -> ClientKeys.readTypeDefault(context.conf()));
    return new FileInStream(context, workers, status, readType);
  }

  @Override
  public URIStatus getStatusWithBlocks(String path) throws IOException {
    ensureOpen();
    check(path);
    return statusWithBlocks(path);
  }

  private URIStatus statusWithBlocks(String path) throws StrataException {
    long sync = context.metadataSyncIntervalMs();
    return ProtoConverter.toStatus(context.callMaster(m -> m.getStatus(GetStatusRequest.newBuilder()
        .setPath(path).setIncludeBlocks(true).setSyncIntervalMs(sync).build()).getFile()));
  }

  @Override
  public List<FileBlockInfo> getBlockLocations(String path) throws IOException {
    ensureOpen();
    check(path);
    return statusWithBlocks(path).blocks();
  }

  @Override
  public URIStatus getStatus(String path, GetStatusOptions options) throws IOException {
    ensureOpen();
    check(path);
    if (options.syncIntervalMs().isPresent()) {
      return fetchStatus(path, options.syncIntervalMs().getAsLong());
    }
    URIStatus cached = cache().status(path);
    if (cached != null) {
      return cached;
    }
    long fetchedAt = cache().generation();
    URIStatus status = fetchStatus(path, context.metadataSyncIntervalMs());
    cache().putStatus(path, status, fetchedAt);
    return status;
  }

  /** The status from the master, never from the cache. */
  private URIStatus fetchStatus(String path, long sync) throws StrataException {
    return ProtoConverter.toStatus(context.callMaster(m -> m.getStatus(
        GetStatusRequest.newBuilder().setPath(path).setSyncIntervalMs(sync).build()).getFile()));
  }

  @Override
  public void iterateStatus(String path, ListStatusOptions options, Consumer<URIStatus> action)
      throws IOException {
    ensureOpen();
    check(path);
    boolean cacheable = cache().enabled() && !options.recursive() && options.syncIntervalMs().isEmpty();
    if (cacheable) {
      List<URIStatus> cached = cache().listing(path);
      if (cached != null) {
        cached.forEach(action);
        return;
      }
      // Each entry goes to the caller as it streams in; a copy is kept to cache only while the listing is small.
      List<URIStatus> fetched = new ArrayList<>();
      boolean[] small = {true};
      long fetchedAt = cache().generation();
      listFromMaster(path, options, s -> {
        if (small[0]) {
          if (fetched.size() < cache().listingMax()) {
            fetched.add(s);
          } else {
            small[0] = false;
            fetched.clear();
          }
        }
        action.accept(s);
      });
      if (small[0]) {
        cache().putListing(path, fetched, fetchedAt);
      }
      return;
    }
    listFromMaster(path, options, action);
  }

  private void listFromMaster(String path, ListStatusOptions options, Consumer<URIStatus> action)
      throws StrataException {
    long sync = options.syncIntervalMs().orElseGet(() -> context.metadataSyncIntervalMs());
    ListStatusRequest req = ListStatusRequest.newBuilder().setPath(path).setRecursive(options.recursive())
        .setBatchSize(context.conf().get(ClientKeys.LIST_BATCH_SIZE)).setSyncIntervalMs(sync).build();
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
    ensureOpen();
    check(path);
    changing(m -> m.createDirectory(CreateDirectoryRequest.newBuilder().setPath(path)
        .setRecursive(options.recursive()).setAllowExists(options.allowExists()).setMode(options.mode())
        .setWriteType(options.writeType().orElseGet(() -> ClientKeys.writeTypeDefault(context.conf())).name())
        .setOwner(ClientKeys.loginName(context.conf())).build()), path);
  }

  @Override
  public void delete(String path, DeleteOptions options) throws IOException {
    ensureOpen();
    check(path);
    DeleteRequest req = DeleteRequest.newBuilder().setPath(path).setRecursive(options.recursive())
        .setStrataOnly(options.strataOnly()).setRequestId(context.nextRequestId()).build();
    changing(m -> m.delete(req), path);
  }

  @Override
  public void rename(String src, String dst, RenameOptions options) throws IOException {
    ensureOpen();
    check(src);
    check(dst);
    RenameRequest req = RenameRequest.newBuilder().setSrc(src).setDst(dst)
        .setRequestId(context.nextRequestId()).build();
    changing(m -> m.rename(req), src, dst);
  }

  @Override
  public boolean exists(String path) throws IOException {
    ensureOpen();
    check(path);
    Boolean cached = cache().exists(path);
    if (cached != null) {
      return cached;
    }
    long fetchedAt = cache().generation();
    boolean exists = context.callMaster(m -> m.exists(ExistsRequest.newBuilder().setPath(path).build()).getExists());
    cache().putExists(path, exists, fetchedAt);
    return exists;
  }

  @Override
  public List<String> domainSocketFallbackReasons() {
    return context.domainSocketFallbackReasons();
  }

  @Override
  public List<WorkerInfo> getWorkers() throws IOException {
    ensureOpen();
    return listWorkers();
  }

  /** The live workers from the master (also for the worker selector of streams still open). */
  private List<WorkerInfo> listWorkers() throws IOException {
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
    ensureOpen();
    return ProtoConverter.toClusterInfo(context.callMaster(m -> m.getClusterInfo(
        GetClusterInfoRequest.getDefaultInstance())));
  }

  @Override
  public void mount(String path, String ufsUri, MountOptions options) throws IOException {
    ensureOpen();
    check(path);
    if (ufsUri == null || ufsUri.isBlank()) {
      throw new InvalidArgumentException("Cannot mount at " + path + ": the under file system URI is empty");
    }
    changing(m -> m.mount(MountRequest.newBuilder()
        .setMount(ProtoConverter.toMountProto(path, ufsUri, options)).build()), path);
  }

  @Override
  public void unmount(String path) throws IOException {
    ensureOpen();
    check(path);
    changing(m -> m.unmount(UnmountRequest.newBuilder().setPath(path).build()), path);
  }

  @Override
  public List<MountInfo> getMountTable() throws IOException {
    ensureOpen();
    List<MountInfoProto> protos = context.callMaster(m -> m.getMountTable(
        GetMountTableRequest.getDefaultInstance()).getMountsList());
    List<MountInfo> out = new ArrayList<>(protos.size());
    for (MountInfoProto p : protos) {
      out.add(ProtoConverter.toMount(p));
    }
    return out;
  }

  @Override
  public FreeResult free(String path, boolean recursive, boolean force) throws IOException {
    ensureOpen();
    check(path);
    FreeResponse r = changing(m -> m.free(FreeRequest.newBuilder().setPath(path)
        .setRecursive(recursive).setForce(force).build()), path);
    return new FreeResult(r.getFilesFreed(), r.getBlocksFreed());
  }

  @Override
  public URIStatus setAttribute(String path, SetAttributeOptions options) throws IOException {
    ensureOpen();
    check(path);
    SetAttributeRequest.Builder req = SetAttributeRequest.newBuilder().setPath(path);
    options.pinned().ifPresent(req::setPinned);
    options.ttlMs().ifPresent(req::setTtlMs);
    options.ttlAction().ifPresent(a -> req.setTtlAction(a.name()));
    options.owner().ifPresent(req::setOwner);
    options.group().ifPresent(req::setGroup);
    options.mode().ifPresent(req::setMode);
    options.modificationTimeMs().ifPresent(req::setModificationTimeMs);
    options.accessTimeMs().ifPresent(req::setAccessTimeMs);
    req.setRecursive(options.recursive());
    URIStatus status = ProtoConverter.toStatus(changing(m -> m.setAttribute(req.build()).getFile(), path));
    return status;
  }

  @Override
  public URIStatus persist(String path, Duration timeout) throws IOException {
    ensureOpen();
    check(path);
    long sync = context.metadataSyncIntervalMs();
    URIStatus status = fetchStatus(path, sync);
    if (status.isPersisted()) {
      return status;
    }
    if (status.directory()) {
      throw new FailedPreconditionException("Cannot persist " + path + ": it is a directory (persist its files)");
    }
    context.callMaster(m -> m.scheduleAsyncPersistence(ScheduleAsyncPersistenceRequest.newBuilder()
        .setPath(path).build()));
    long deadline = Deadlines.nanoDeadline(System.nanoTime(), timeout);
    long pauseMs = 10;
    while (true) {
      status = fetchStatus(path, sync);
      if (status.isPersisted()) {
        cache().invalidate(path);
        return status;
      }
      if (URIStatus.LOST.equals(status.persistenceState())) {
        throw new DataLossException("Cannot persist " + path + ": its persistence state is LOST");
      }
      long leftNanos = deadline - System.nanoTime();
      if (leftNanos <= 0) {
        throw new DeadlineExceededException("Persisting " + path + " did not finish within "
            + Deadlines.toMillisSaturated(timeout)
            + " ms (persistence state " + status.persistenceState() + "); it may still finish later");
      }
      try {
        Thread.sleep(Math.min(pauseMs, TimeUnit.NANOSECONDS.toMillis(leftNanos) + 1));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("Interrupted while waiting for " + path + " to be persisted");
      }
      // At most a quarter second apart: a status is a cheap call, and the wait is the master's and worker's.
      pauseMs = Deadlines.nextBackoffMillis(pauseMs, 250);
    }
  }

  @Override
  public long load(String path, java.util.function.LongConsumer bytesRead) throws IOException {
    ensureOpen();
    long bytes = readAll(path, OpenFileOptions.defaults().withReadType(ReadType.CACHE), null, bytesRead);
    awaitCached(path);
    return bytes;
  }

  /**
   * Returns once the master lists a copy of every block of {@code path}. A worker commits a block it
   * cached from the under file system just after the reader has its bytes, and a copy it served while its
   * removal (after a free) was pending may still go: a block still unlisted after a while is read again.
   */
  private void awaitCached(String path) throws IOException {
    long deadline = Deadlines.nanoDeadline(System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(context.rpcTimeoutMs()));
    long nextReread = System.nanoTime() + 1_000_000_000L;
    while (true) {
      List<FileBlockInfo> missing = new ArrayList<>();
      for (FileBlockInfo b : getBlockLocations(path)) {
        if (b.locations().isEmpty()) {
          missing.add(b);
        }
      }
      if (missing.isEmpty()) {
        return;
      }
      long now = System.nanoTime();
      if (Deadlines.nanoReached(now, deadline)) {
        throw new io.strata.common.exception.DeadlineExceededException("Loading " + path + ": " + missing.size()
            + " blocks are still not cached after " + context.rpcTimeoutMs() + " ms (first: block "
            + missing.get(0).blockId() + ")");
      }
      if (Deadlines.nanoReached(now, nextReread)) {
        nextReread = now + 1_000_000_000L;
        try (FileInStream in = openFile(path, OpenFileOptions.defaults().withReadType(ReadType.CACHE))) {
          for (FileBlockInfo b : missing) {
            byte[] block = new byte[(int) Math.min(b.length(), 1 << 20)];
            for (long off = 0; off < b.length(); off += block.length) {
              int n = (int) Math.min(block.length, b.length() - off);
              in.readFully(b.offset() + off, block, 0, n);
            }
          }
        }
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("Interrupted while loading " + path);
      }
    }
  }

  @Override
  public String checksum(String path) throws IOException {
    ensureOpen();
    MessageDigest md5;
    try {
      md5 = MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("Every Java runtime has MD5", e);
    }
    readAll(path, OpenFileOptions.defaults(), md5, n -> {});
    return HexFormat.of().formatHex(md5.digest());
  }

  /** Reads the whole file, feeding {@code digest} when there is one and {@code read}; returns the bytes read. */
  private long readAll(String path, OpenFileOptions options, MessageDigest digest,
      java.util.function.LongConsumer read) throws IOException {
    byte[] buf = new byte[1 << 20];
    long total = 0;
    try (FileInStream in = openFile(path, options)) {
      int n;
      while ((n = in.read(buf, 0, buf.length)) >= 0) {
        if (digest != null) {
          digest.update(buf, 0, n);
        }
        total += n;
        read.accept(n);
      }
    }
    return total;
  }

  @Override
  public StrataConf conf() {
    return context.conf();
  }

  /**
   * Closes this client: every later operation fails (FailedPrecondition). Frees the context when this instance
   * made it, never one the caller passed in; for a shared instance ({@link FileSystem.Factory#get}) releases one
   * reference and does all that with the last. Closing again after that is a no-op.
   */
  @Override
  public void close() {
    boolean last = owner == null || owner.release(this);
    if (last && closed.compareAndSet(false, true) && ownsContext) {
      context.close();
    }
  }
}
