package io.strata.tests;

import io.grpc.ManagedChannel;
import io.strata.common.grpc.GrpcChannels;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.proto.FileSystemMasterServiceGrpc;
import io.strata.proto.FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real master without workers and a raw gRPC stub to it, for tests that send master RPCs exactly as
 * written (no client library in the way). One per test method; not thread-safe.
 */
abstract class MasterRpcFixture {
  @TempDir
  Path tmp;
  LocalStrataCluster cluster;
  private ManagedChannel channel;

  @AfterEach
  void stop() {
    if (channel != null) {
      GrpcChannels.close(channel);
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Starts the master with {@code conf} (key, value pairs) and returns a stub to it. */
  FileSystemMasterServiceBlockingStub start(String... conf) throws Exception {
    LocalStrataCluster.Builder b = LocalStrataCluster.builder().workers(0).baseDir(tmp.resolve("cluster"));
    for (int i = 0; i < conf.length; i += 2) {
      b.set(conf[i], conf[i + 1]);
    }
    cluster = b.build().start();
    return stub();
  }

  /** A stub on a new channel (after a master restart, say). */
  FileSystemMasterServiceBlockingStub stub() {
    if (channel != null) {
      GrpcChannels.close(channel);
    }
    channel = GrpcChannels.forAddress("localhost", cluster.masterPort(), 4 << 20);
    return FileSystemMasterServiceGrpc.newBlockingStub(channel);
  }
}
