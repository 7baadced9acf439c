package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.strata.common.exception.PermissionDeniedException;
import io.strata.common.exception.StrataException;
import io.strata.common.grpc.GrpcChannels;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.proto.BlockMasterWorkerServiceGrpc;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.WorkerAddressProto;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code strata.security.worker.secret}: a master that asks for it registers only workers that show it (so mount
 * credentials go to the cluster's workers, not to any caller that reaches the master); the cluster's own workers,
 * configured with it, register and serve as usual.
 */
class WorkerSecretIntegrationTest {
  private static LocalStrataCluster cluster;
  private static ManagedChannel master;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).set("strata.security.worker.secret", "s3cr3t-of-this-cluster")
        .build().start();
    cluster.waitForWorkers(1, 30_000);
    master = GrpcChannels.forAddress("localhost", cluster.masterPort(), 64 << 20);
  }

  @AfterAll
  static void stop() {
    GrpcChannels.close(master);
    cluster.close();
  }

  private static RegisterWorkerRequest.Builder impostor() {
    return RegisterWorkerRequest.newBuilder()
        .setAddress(WorkerAddressProto.newBuilder().setHost("localhost").setRpcPort(3));
  }

  @Test
  void aWorkerWithoutTheSecret_cannotRegister_andTheClustersWorkersServe() throws Exception {
    var stub = BlockMasterWorkerServiceGrpc.newBlockingStub(master).withDeadlineAfter(10, TimeUnit.SECONDS);
    for (RegisterWorkerRequest r : new RegisterWorkerRequest[] {impostor().build(),
        impostor().setWorkerSecret("guess").build()}) {
      StrataException e = BadInputIntegrationTest.rawError(() -> stub.registerWorker(r));
      assertThat(e).isInstanceOf(PermissionDeniedException.class).hasMessageContaining("localhost:3")
          .hasMessageContaining("strata.security.worker.secret");
    }
    assertThat(cluster.client().getClusterInfo().liveWorkers()).isEqualTo(1);
    try (var out = cluster.client().createFile("/with-secret")) {
      out.write(new byte[] {1, 2, 3});
    }
    assertThat(cluster.client().getStatus("/with-secret").length()).isEqualTo(3);
  }
}
