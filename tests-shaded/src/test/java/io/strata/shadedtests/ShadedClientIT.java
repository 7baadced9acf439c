package io.strata.shadedtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.common.conf.StrataConf;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java client API from the shaded jar alone (this JVM has no unshaded grpc, netty, protobuf or guava of
 * Strata's, only Hadoop's client jars beside it) against a cluster started by bin/strata-start.sh: a file is
 * written and read back byte-exact, short-circuit over the worker's domain socket, which needs the epoll
 * native library renamed for the relocated Netty.
 */
class ShadedClientIT {
  @TempDir
  static Path tmp;
  private static ScriptCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = ScriptCluster.start(tmp);
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void strataUsesItsRelocatedCopies_andTheClasspathHoldsNoUnshadedGrpc() throws Exception {
    // Spark brings its own guava and netty here: Strata's classes must not see them.
    assertThat(Class.forName("io.strata.proto.FileInfoProto").getSuperclass().getName())
        .isEqualTo("io.strata.shaded.com.google.protobuf.GeneratedMessageV3");
    assertThat(Class.forName("io.strata.proto.FileSystemMasterServiceGrpc").getMethod("newBlockingStub",
        Class.forName("io.strata.shaded.io.grpc.Channel"))).isNotNull();
    assertThatThrownBy(() -> Class.forName("io.grpc.ManagedChannel")).isInstanceOf(ClassNotFoundException.class);
    // Hadoop's client jars are here (their own third-party code relocated under org.apache.hadoop.shaded).
    assertThat(org.apache.hadoop.conf.Configuration.class.getName()).isNotEmpty();
  }

  @Test
  void writeAndRead_byteExact_withTheShortCircuitReadOverTheRelocatedEpoll() throws Exception {
    StrataConf conf = StrataConf.of(Map.of("strata.master.rpc.port", Integer.toString(cluster.masterPort())));
    byte[] data = new byte[3 * 1024 * 1024 + 77];
    new Random(7).nextBytes(data);
    try (FileSystem fs = FileSystem.Factory.get(conf)) {
      try (FileOutStream out = fs.createFile("/shaded/a.bin", CreateFileOptions.defaults().withBlockSize(1 << 20))) {
        out.write(data);
      }
      byte[] back;
      try (FileInStream in = fs.openFile("/shaded/a.bin")) {
        back = in.readAllBytes();
        assertThat(in.shortCircuit().fallbackReasons()).as("why short-circuit fell back").isEmpty();
        assertThat(in.shortCircuit().opens()).as("blocks opened short-circuit").isEqualTo(4);
      }
      assertThat(back).isEqualTo(data);
    }
    assertThat(Class.forName("io.strata.shaded.io.netty.channel.epoll.Epoll")
        .getMethod("isAvailable").invoke(null)).isEqualTo(true);
  }
}
