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
 * {@link #close()}. Shared by a process's shuffle writers, readers and its driver-side lifecycle.
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
    return channels.computeIfAbsent(host + ":" + port, k -> GrpcChannels.forAddress(host, port, maxMessageBytes));
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
