package io.strata.common.master;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.grpc.GrpcChannels;
import io.strata.proto.FileSystemMasterServiceGrpc;
import io.strata.proto.PingRequest;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Finds the leader among a fixed list of masters by asking each in turn: only the leader answers Ping;
 * standbys answer UNAVAILABLE. The last leader found is tried first. Thread-safe.
 */
final class PollingMasterInquireClient implements MasterInquireClient {
  private final List<InetSocketAddress> masters;
  private final long maxMessage;
  /** The event loops of the ping channels, or null for gRPC's shared ones. */
  private final io.strata.common.grpc.ClientEventLoops loops;
  private volatile InetSocketAddress last;

  PollingMasterInquireClient(List<InetSocketAddress> masters, long maxMessage,
      io.strata.common.grpc.ClientEventLoops loops) {
    this.loops = loops;
    if (masters.isEmpty()) {
      throw new IllegalArgumentException("strata.master.rpc.addresses names no master");
    }
    this.masters = List.copyOf(masters);
    this.maxMessage = maxMessage;
  }

  @Override
  public InetSocketAddress leader() throws UnavailableException {
    List<InetSocketAddress> order = new ArrayList<>(masters);
    InetSocketAddress l = last;
    if (l != null) {
      order.remove(l);
      order.add(0, l);
    }
    StringBuilder why = new StringBuilder();
    for (InetSocketAddress a : order) {
      ManagedChannel ch = GrpcChannels.forAddress(a.getHostString(), a.getPort(), maxMessage, loops);
      try {
        FileSystemMasterServiceGrpc.newBlockingStub(ch).withDeadlineAfter(2, TimeUnit.SECONDS)
            .ping(PingRequest.getDefaultInstance());
        last = a;
        return a;
      } catch (StatusRuntimeException e) {
        why.append(' ').append(MasterInquireClient.format(a)).append(": ").append(e.getStatus().getCode());
      } finally {
        ch.shutdownNow();
      }
    }
    throw new UnavailableException("No leading master among " + masters.size() + " masters:" + why);
  }

  @Override
  public List<InetSocketAddress> candidates() {
    return masters;
  }
}
