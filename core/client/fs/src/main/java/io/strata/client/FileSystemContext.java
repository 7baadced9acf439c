package io.strata.client;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.grpc.Metadata;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.strata.common.grpc.BlockDataMarshalling;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.FileSystemMasterServiceGrpc;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;
import java.io.Closeable;
import java.util.concurrent.TimeUnit;

/**
 * What one client shares among its calls and streams: the configuration, the channel to the master and a
 * channel per worker ({@link WorkerChannels}: opened on first use, kept until close; over the worker's
 * data domain socket when it is on this host), and the marshalling of block data calls
 * ({@code strata.user.network.zerocopy.enabled}). Thread-safe.
 */
public final class FileSystemContext implements Closeable {
  private final StrataConf conf;
  private final long maxMessageBytes;
  private final long flowWindowBytes;
  private final io.strata.common.master.MasterConnection master;
  private final WorkerChannels workerChannels;
  private final long rpcTimeoutMs;
  private final LeaseRenewer leases;
  private final java.util.concurrent.atomic.AtomicLong callIds = new java.util.concurrent.atomic.AtomicLong();
  private volatile boolean closed;
  private io.strata.client.shortcircuit.ShortCircuitClient shortCircuit;
  private final boolean zeroCopy;
  private final BlockDataMarshalling marshalling = new BlockDataMarshalling();
  private static final Metadata PLAIN_HEADERS = new Metadata();

  static {
    PLAIN_HEADERS.put(BlockDataMarshalling.PLAIN_HEADER, BlockDataMarshalling.PLAIN);
  }

  public FileSystemContext(StrataConf conf) {
    this.conf = conf;
    this.maxMessageBytes = conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE);
    this.flowWindowBytes = conf.get(CommonKeys.NETWORK_FLOW_CONTROL_WINDOW);
    this.rpcTimeoutMs = conf.get(CommonKeys.RPC_TIMEOUT).toMillis();
    this.master = new io.strata.common.master.MasterConnection(conf);
    this.workerChannels = new WorkerChannels(conf.get(ClientKeys.HOSTNAME),
        conf.get(ClientKeys.DATA_DOMAIN_SOCKET_ENABLED), conf.get(ClientKeys.DATA_DOMAIN_SOCKET_PATH), maxMessageBytes,
        flowWindowBytes);
    this.leases = new LeaseRenewer(this, conf.get(ClientKeys.LEASE_RENEW_INTERVAL).toMillis());
    this.zeroCopy = conf.get(ClientKeys.NETWORK_ZEROCOPY_ENABLED);
  }

  /**
   * A new request id for one logical non-idempotent master call (create, complete, rename, delete): this
   * context's client id and the next call number. Put it in the request once, outside the
   * {@link #callMaster} lambda, so every retry carries the same id and the master answers a retry it
   * already applied as it answered the first attempt.
   */
  io.strata.proto.RequestIdProto nextRequestId() {
    return io.strata.proto.RequestIdProto.newBuilder().setClientId(leases.clientId())
        .setCallId(callIds.incrementAndGet()).build();
  }

  /** Renews the write leases of this context's open files. */
  LeaseRenewer leases() {
    return leases;
  }

  public StrataConf conf() {
    return conf;
  }

  public String masterAddress() {
    return master.describe();
  }

  /** A unary call to the leading master (deadline applied), following failovers within the retry window. */
  <T> T callMaster(java.util.function.Function<FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub, T> call)
      throws io.strata.common.exception.StrataException {
    return master.call(ch -> call.apply(FileSystemMasterServiceGrpc.newBlockingStub(ch)
        .withDeadlineAfter(rpcTimeoutMs, TimeUnit.MILLISECONDS)));
  }

  /** A streaming call to the leading master (no overall deadline); same failover rules. */
  <T> T streamMaster(java.util.function.Function<FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub, T> call)
      throws io.strata.common.exception.StrataException {
    return master.call(ch -> call.apply(FileSystemMasterServiceGrpc.newBlockingStub(ch)));
  }

  BlockWorkerServiceGrpc.BlockWorkerServiceStub worker(WorkerAddress address) {
    if (closed) {
      throw new IllegalStateException("FileSystemContext is closed");
    }
    return BlockWorkerServiceGrpc.newStub(workerChannels.get(address));
  }

  /**
   * Starts a block read on the worker's channel: with the zero-copy marshaller, or (key off) protobuf's
   * own, asking the worker for its plain path too. Pass each response to {@link #release} once its chunk
   * has been copied out.
   */
  void readBlock(WorkerAddress address, ReadBlockRequest req, StreamObserver<ReadBlockResponse> o) {
    BlockWorkerServiceGrpc.BlockWorkerServiceStub stub = worker(address);
    if (zeroCopy) {
      ClientCalls.asyncServerStreamingCall(stub.getChannel().newCall(marshalling.readBlock(), stub.getCallOptions()),
          req, o);
    } else {
      stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(PLAIN_HEADERS)).readBlock(req, o);
    }
  }

  /** Frees the transport buffer a read response's chunk references (no-op for a copied one). */
  void release(ReadBlockResponse response) {
    marshalling.readResponses().release(response);
  }

  /** Starts a block write on the worker's channel, marshalled as {@link #readBlock} is. */
  StreamObserver<WriteBlockRequest> writeBlock(WorkerAddress address, StreamObserver<WriteBlockResponse> o) {
    BlockWorkerServiceGrpc.BlockWorkerServiceStub stub = worker(address);
    if (zeroCopy) {
      return ClientCalls.asyncClientStreamingCall(stub.getChannel().newCall(marshalling.writeBlock(),
          stub.getCallOptions()), o);
    }
    return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(PLAIN_HEADERS)).writeBlock(o);
  }

  /**
   * Block read responses parsed by the zero-copy marshaller so far: sliced from the transport's buffers,
   * or (when grpc-netty cannot expose them) from one copy.
   */
  public long aliasedBlockResponses() {
    return marshalling.readResponses().aliasedParses() + marshalling.readResponses().oneCopyParses();
  }

  /** Transport buffers held by block read responses not yet released (0 unless one leaked; for tests). */
  public int outstandingBlockBuffers() {
    return marshalling.outstanding();
  }

  /** A blocking stub for a worker's unary calls, on the same channel as {@link #worker}. */
  BlockWorkerServiceGrpc.BlockWorkerServiceBlockingStub workerBlocking(WorkerAddress address) {
    if (closed) {
      throw new IllegalStateException("FileSystemContext is closed");
    }
    return BlockWorkerServiceGrpc.newBlockingStub(workerChannels.get(address));
  }

  /**
   * Whether a worker runs on this host (its host name is {@code strata.user.hostname}), so its domain
   * sockets (short-circuit, data streaming) are reachable.
   */
  boolean onThisHost(WorkerAddress worker) {
    return workerChannels.onThisHost(worker);
  }

  /** Whether this client's calls to the worker go over its data domain socket (once a call was made). */
  public boolean streamsOverDomainSocket(WorkerAddress worker) {
    return workerChannels.overDomainSocket(worker);
  }

  /** Why workers on this host are reached over TCP rather than their data domain sockets, oldest first. */
  public java.util.List<String> domainSocketFallbackReasons() {
    return workerChannels.fallbackReasons();
  }

  /** Short-circuit reads from workers on this host (created on first use, closed with this context). */
  public synchronized io.strata.client.shortcircuit.ShortCircuitClient shortCircuit() {
    if (shortCircuit == null) {
      shortCircuit = new io.strata.client.shortcircuit.ShortCircuitClient(
          io.strata.client.shortcircuit.ShortCircuitClient.Mode.valueOf(
              conf.get(ClientKeys.SHORT_CIRCUIT_MODE).toUpperCase(java.util.Locale.ROOT)),
          conf.get(ClientKeys.SHORT_CIRCUIT_SOCKET_PATH), rpcTimeoutMs);
    }
    return shortCircuit;
  }

  long rpcTimeoutMs() {
    return rpcTimeoutMs;
  }

  @Override
  public void close() {
    closed = true;
    synchronized (this) {
      if (shortCircuit != null) {
        shortCircuit.close();
      }
    }
    leases.close();
    master.close();
    workerChannels.close();
  }
}
