package io.strata.shuffle;

import io.grpc.ManagedChannel;
import io.strata.common.grpc.GrpcChannels;
import io.strata.proto.ShuffleWorkerServiceGrpc;
import java.io.Closeable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One gRPC channel per worker ("host:port") for the shuffle service, opened on first use and closed by
 * {@link #close()}; one whose last connect failed is replaced at its next use
 * ({@link GrpcChannels#connectFailed}). Shared by a process's shuffle writers, readers and its driver-side lifecycle.
 * Thread-safe.
 */
public final class ShuffleChannels implements Closeable {
  private final long maxMessageBytes;
  private final Map<String, ManagedChannel> channels = new HashMap<>();
  private boolean closed;

  public ShuffleChannels(long maxMessageBytes) {
    this.maxMessageBytes = maxMessageBytes;
  }

  synchronized ManagedChannel channel(String host, int port) {
    if (closed) {
      throw new IllegalStateException("The shuffle channels are closed");
    }
    // One whose connect failed is replaced: a worker back on its old port is reached at once.
    return GrpcChannels.keptOrNew(channels, host + ":" + port, () -> GrpcChannels.forAddress(host, port,
        maxMessageBytes));
  }

  ShuffleWorkerServiceGrpc.ShuffleWorkerServiceStub async(String host, int port) {
    return ShuffleWorkerServiceGrpc.newStub(channel(host, port));
  }

  ShuffleWorkerServiceGrpc.ShuffleWorkerServiceBlockingStub blocking(String host, int port) {
    return ShuffleWorkerServiceGrpc.newBlockingStub(channel(host, port));
  }

  @Override
  public void close() {
    List<ManagedChannel> all;
    synchronized (this) {
      closed = true;
      all = new ArrayList<>(channels.values());
      channels.clear();
    }
    GrpcChannels.closeAll(all);
  }
}
