package io.strata.worker.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.net.WorkerAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The replica channels a primary keeps stay bounded however many replica addresses it is given. */
class ReplicaClientTest {
  @Test
  void forwardsToMoreReplicasThanTheBound_keepAtMostTheBoundOpen_andEachFailsClearly() throws Exception {
    // A port nobody listens on (bound, then closed): every forward fails fast with connection refused.
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    int replicas = ReplicaClient.MAX_CHANNELS + 44;
    try (ReplicaClient client = new ReplicaClient(8 << 20, 5_000)) {
      List<CompletableFuture<Void>> sent = new ArrayList<>();
      for (int i = 0; i < replicas; i++) {
        // Distinct addresses, all on loopback (127.0.0.0/8).
        WorkerAddress a = new WorkerAddress("127.0." + (i / 250) + "." + (1 + i % 250), port);
        sent.add(client.forward(a, "app", 0, List.of()));
        assertThat(client.openChannels()).isLessThanOrEqualTo(ReplicaClient.MAX_CHANNELS);
      }
      assertThat(client.openChannels()).isEqualTo(ReplicaClient.MAX_CHANNELS);
      for (CompletableFuture<Void> f : sent) {
        assertThat(f).failsWithin(30, TimeUnit.SECONDS);
      }
    }
  }
}
