package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.shortcircuit.ShortCircuitServer;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker serves at most {@code strata.worker.shortcircuit.connections.max} short-circuit connections at
 * once (here one): a connection past it is closed at once, a client then reads by streaming, byte-exact, and
 * once the first connection ends a new one is served.
 */
class ShortCircuitBoundsIntegrationTest {
  @TempDir
  static Path tmp;
  private static LocalStrataCluster cluster;
  private static FileSystem fs;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.worker.shortcircuit.connections.max", "1").build().start();
    // This writer keeps no short-circuit connection open (a client keeps idle ones for its next block).
    java.util.Map<String, String> off = new java.util.HashMap<>(cluster.clientConf().explicitValues());
    off.put("strata.user.shortcircuit.mode", "off");
    fs = FileSystem.create(io.strata.common.conf.StrataConf.of(off));
  }

  @AfterAll
  static void stop() throws IOException {
    if (fs != null) {
      fs.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private static ShortCircuitServer server() {
    return cluster.worker(0).shortCircuit();
  }

  private static SocketChannel connect() throws IOException {
    SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
    ch.connect(UnixDomainSocketAddress.of(server().socketPath()));
    return ch;
  }

  /** True when the worker closes {@code ch} without a word (a request sent on it gets no answer). */
  private static boolean closedByTheWorker(SocketChannel ch) throws IOException {
    byte[] body = io.strata.proto.ShortCircuitRequest.newBuilder().setOpen(
        io.strata.proto.OpenBlockProto.newBuilder().setBlockId(987654321L)).build().toByteArray();
    try {
      ch.write(ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).flip());
      return ch.read(ByteBuffer.allocate(4)) < 0;
    } catch (IOException reset) {
      return true;
    }
  }

  @Test
  void aConnectionPastTheBound_isClosed_theClientStreams_andANewOneIsServedOnceTheFirstEnds() throws Exception {
    byte[] data = new byte[300_000];
    new Random(4).nextBytes(data);
    try (FileOutStream out = fs.createFile("/scb/f", CreateFileOptions.defaults().withWriteType(WriteType.MUST_CACHE))) {
      out.write(data);
    }
    long refusedBefore = server().refusedConnections();
    try (SocketChannel first = connect()) {
      assertThat(closedByTheWorker(first)).as("the first connection is served").isFalse();
      await().atMost(Duration.ofSeconds(10)).until(() -> {
        try (SocketChannel probe = connect()) {
          return closedByTheWorker(probe);
        }
      });
      assertThat(server().refusedConnections()).isGreaterThan(refusedBefore);

      // A reader on this host cannot get a connection: it streams over the data port instead.
      try (FileSystem other = FileSystem.create(cluster.clientConf()); FileInStream in = other.openFile("/scb/f")) {
        assertThat(in.readAllBytes()).isEqualTo(data);
        assertThat(in.shortCircuit().opens()).isZero();
        assertThat(in.shortCircuit().fallbackReasons()).isNotEmpty();
      }
    }
    // The first connection ended: a new one is served (an unknown block gets its NOT_FOUND answer).
    await().atMost(Duration.ofSeconds(10)).until(() -> {
      try (SocketChannel again = connect()) {
        return !closedByTheWorker(again);
      }
    });
  }
}
