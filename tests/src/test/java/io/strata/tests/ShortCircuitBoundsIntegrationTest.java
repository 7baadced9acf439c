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
 * once the first connection ends a new one is served. And a writer's checksums are bounded by the block's own
 * maximum length, whatever its CREATE claims, so a local client cannot grow them until the worker runs out of memory.
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

  /** One framed request on a raw connection, and its answer. */
  private static io.strata.proto.ShortCircuitResponse call(SocketChannel ch, io.strata.proto.ShortCircuitRequest r)
      throws IOException {
    byte[] body = r.toByteArray();
    ByteBuffer out = ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).flip();
    while (out.hasRemaining()) {
      ch.write(out);
    }
    ByteBuffer len = ByteBuffer.allocate(4);
    while (len.hasRemaining()) {
      if (ch.read(len) < 0) {
        throw new IOException("the worker closed the connection");
      }
    }
    ByteBuffer in = ByteBuffer.allocate(len.flip().getInt());
    while (in.hasRemaining()) {
      if (ch.read(in) < 0) {
        throw new IOException("the worker closed the connection");
      }
    }
    return io.strata.proto.ShortCircuitResponse.parseFrom(in.flip());
  }

  /**
   * A block reserved at 1 MiB whose short-circuit CREATE claims a maximum length of Long.MAX_VALUE: the worker bounds
   * the writer's checksums by the reservation (17 chunks of 64 KiB at most), not by the claim, so a GRANT carrying an
   * 18th is refused and the block dropped. Before, the claim was the bound, and a loop of such GRANTs grew the
   * worker's list of checksums until it ran out of memory.
   */
  @Test
  void aReservedBlocksChecksums_areBoundedByTheReservation_notByTheCreatesClaim() throws Exception {
    long blockId = io.strata.common.id.BlockId.of(777_777, 0);
    io.grpc.ManagedChannel worker = io.strata.common.grpc.GrpcChannels.forAddress("localhost",
        cluster.worker(0).rpcPort(), 64 << 20);
    try {
      io.strata.proto.BlockWorkerServiceGrpc.newBlockingStub(worker)
          .withDeadlineAfter(30, java.util.concurrent.TimeUnit.SECONDS)
          .reserveBlock(io.strata.proto.ReserveBlockRequest.newBuilder().setBlockId(blockId).setMaxLength(1 << 20)
              .setWaitMs(0).build());
    } finally {
      io.strata.common.grpc.GrpcChannels.close(worker);
    }
    try (SocketChannel ch = connect()) {
      io.strata.proto.ShortCircuitResponse created = call(ch, io.strata.proto.ShortCircuitRequest.newBuilder()
          .setCreate(io.strata.proto.CreateTempBlockProto.newBuilder().setBlockId(blockId).setReserved(true)
              .setMaxLength(Long.MAX_VALUE)).build());
      assertThat(created.getErrorCode()).isEmpty();
      io.strata.proto.GrantSpaceProto.Builder seventeen = io.strata.proto.GrantSpaceProto.newBuilder()
          .setBlockId(blockId);
      for (int i = 0; i < 17; i++) {
        seventeen.addChunkCrc32C(i);
      }
      assertThat(call(ch, io.strata.proto.ShortCircuitRequest.newBuilder().setGrant(seventeen).build()).getErrorCode())
          .as("a whole 1 MiB block's checksums").isEmpty();
      io.strata.proto.ShortCircuitResponse more = call(ch, io.strata.proto.ShortCircuitRequest.newBuilder()
          .setGrant(io.strata.proto.GrantSpaceProto.newBuilder().setBlockId(blockId).addChunkCrc32C(17)).build());
      assertThat(more.getErrorCode()).isEqualTo("INVALID_ARGUMENT");
      assertThat(more.getErrorMessage()).contains("18 checksums", "more than a block of its maximum length can have");
    }
  }
}
