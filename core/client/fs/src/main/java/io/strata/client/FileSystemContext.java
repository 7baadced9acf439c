package io.strata.client;

import io.grpc.ManagedChannel;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.FileSystemMasterServiceGrpc;
import java.io.Closeable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What one client shares among its calls and streams: the configuration, the channel to the master and a
 * channel per worker (opened on first use, kept until close). Thread-safe.
 */
public final class FileSystemContext implements Closeable {
  private final StrataConf conf;
  private final long maxMessageBytes;
  private final ManagedChannel masterChannel;
  private final Map<WorkerAddress, ManagedChannel> workerChannels = new ConcurrentHashMap<>();
  private final long rpcTimeoutMs;
  private volatile boolean closed;

  public FileSystemContext(StrataConf conf) {
    this.conf = conf;
    this.maxMessageBytes = conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE);
    this.rpcTimeoutMs = conf.get(CommonKeys.RPC_TIMEOUT).toMillis();
    this.masterChannel = GrpcChannels.forAddress(conf.get(CommonKeys.MASTER_HOSTNAME),
        conf.get(CommonKeys.MASTER_RPC_PORT), maxMessageBytes);
  }

  public StrataConf conf() {
    return conf;
  }

  public String masterAddress() {
    return conf.get(CommonKeys.MASTER_HOSTNAME) + ":" + conf.get(CommonKeys.MASTER_RPC_PORT);
  }

  /** A master stub with the unary deadline applied; take a fresh one per call. */
  FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub master() {
    return FileSystemMasterServiceGrpc.newBlockingStub(masterChannel)
        .withDeadlineAfter(rpcTimeoutMs, TimeUnit.MILLISECONDS);
  }

  /** A master stub for streaming calls (no overall deadline). */
  FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub masterStreaming() {
    return FileSystemMasterServiceGrpc.newBlockingStub(masterChannel);
  }

  BlockWorkerServiceGrpc.BlockWorkerServiceStub worker(WorkerAddress address) {
    if (closed) {
      throw new IllegalStateException("FileSystemContext is closed");
    }
    ManagedChannel ch = workerChannels.computeIfAbsent(address,
        a -> GrpcChannels.forAddress(a.host(), a.rpcPort(), maxMessageBytes));
    return BlockWorkerServiceGrpc.newStub(ch);
  }

  long rpcTimeoutMs() {
    return rpcTimeoutMs;
  }

  @Override
  public void close() {
    closed = true;
    GrpcChannels.close(masterChannel);
    for (ManagedChannel ch : workerChannels.values()) {
      GrpcChannels.close(ch);
    }
    workerChannels.clear();
  }
}
