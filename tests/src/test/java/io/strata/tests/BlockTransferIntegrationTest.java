package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.FileSystemContext;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.conf.StrataConf;
import io.strata.common.id.BlockId;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.TransferReadResponse;
import io.strata.worker.transfer.TransferServer;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Block reads over the worker's block transfer protocol (raw bytes by sendfile, outside gRPC) on one real
 * worker: sequential and positioned reads are byte-exact over TCP and over the transfer domain socket and
 * reuse their connections; the client falls back to gRPC when transfers are off on either side; bad
 * requests get a clear error and never harm the worker; a reader that stops taking bytes is cut after the
 * stall timeout and the block released, as is a reader that disconnects mid-block.
 */
class BlockTransferIntegrationTest {
  private static final int BLOCK = 4 << 20;
  private static final int SIZE = 3 * BLOCK + 123_457;
  private static final byte[] DATA = new byte[SIZE];

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;

  static {
    new Random(5).nextBytes(DATA);
  }

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.worker.read.stream.stall.timeout", "700ms")
        .build().start();
    try (FileSystem fs = client(Map.of())) {
      write(fs, "/data", DATA, BLOCK);
      write(fs, "/big", new byte[16 << 20], 16 << 20); // one block
    }
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static TransferServer server() {
    return cluster.worker(0).transfer();
  }

  private static StrataConf conf(Map<String, String> overrides) {
    Map<String, String> all = new HashMap<>(Map.of("strata.user.shortcircuit.mode", "off",
        "strata.user.data.domain.socket.enabled", "false"));
    all.putAll(overrides);
    return cluster.clientConf().withAll(all);
  }

  private static FileSystemContext context(Map<String, String> overrides) {
    return new FileSystemContext(conf(overrides));
  }

  private static FileSystem client(Map<String, String> overrides) {
    return FileSystem.create(conf(overrides));
  }

  private static void write(FileSystem fs, String path, byte[] data, long blockSize) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(blockSize)
        .withWriteType(WriteType.MUST_CACHE))) {
      out.write(data);
    }
  }

  private static byte[] readAll(FileSystem fs, String path) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      byte[] got = new byte[SIZE + 1];
      int n = 0;
      int r;
      while ((r = in.read(got, n, Math.min(300_001, got.length - n))) > 0) {
        n += r;
      }
      return Arrays.copyOf(got, n);
    }
  }

  /** Reads /data whole and in ranges through {@code ctx} (its caller closes it, and so the file system over it). */
  private static void checkReads(FileSystemContext ctx) throws IOException {
    FileSystem fs = FileSystem.create(ctx);
    {
      assertThat(readAll(fs, "/data")).isEqualTo(DATA);
      try (FileInStream in = fs.openFile("/data")) {
        // unaligned ranges: inside a checksum chunk, across chunks, across a block boundary, the last byte
        int[][] ranges = {{1, 17}, {65_536 - 5, 11}, {BLOCK - 70_001, 140_003}, {SIZE - 1, 1}, {12_345, 3 << 20}};
        for (int[] r : ranges) {
          byte[] got = new byte[r[1]];
          in.readFully(r[0], got, 0, r[1]);
          assertThat(got).as("bytes %d..%d", r[0], r[0] + r[1]).isEqualTo(Arrays.copyOfRange(DATA, r[0], r[0] + r[1]));
        }
      }
    }
  }

  @Test
  void readsGoOverTheTransferPort_byteExact_reusingConnections() throws IOException {
    await().atMost(Duration.ofSeconds(20)).until(() -> server().transfersNow() == 0); // earlier tests' reads
    long requests0 = server().requests();
    long bytes0 = server().bytesSent();
    try (FileSystemContext ctx = context(Map.of())) {
      checkReads(ctx);
      // 4 blocks read in sequence, 5 positioned reads of which one spans two blocks
      assertThat(server().requests() - requests0).isEqualTo(4 + 6);
      // a transfer's bytes are counted when the server's write completes, which can be just after the
      // client has them
      await().atMost(Duration.ofSeconds(20)).until(() -> server().transfersNow() == 0);
      // every byte once for the sequential read, plus the ranges widened to whole 64 KiB checksum chunks
      assertThat(server().bytesSent() - bytes0).isBetween((long) SIZE + 17 + 11 + 140_003 + 1 + (3 << 20),
          (long) SIZE + 17 + 11 + 140_003 + 1 + (3 << 20) + 12L * 65_536);
      // the reads ran one at a time, so one connection served them all (the unread tails of widened ranges
      // drained) and is kept for the next
      assertThat(ctx.transferConnectionsOpened()).isEqualTo(1);
      assertThat(ctx.idleTransferConnections()).isEqualTo(1);
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> server().transfersNow() == 0);
  }

  @Test
  void overTheTransferDomainSocket_byteExact() throws IOException {
    Path socket = server().socketPath();
    assertThat(socket).isEqualTo(Path.of("/tmp/strata-worker-" + cluster.worker(0).rpcPort() + "-transfer.sock"));
    assertThat(Files.getPosixFilePermissions(socket)).isEqualTo(
        java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw----"));
    long requests0 = server().requests();
    try (FileSystemContext ctx = context(Map.of("strata.user.data.domain.socket.enabled", "true"))) {
      checkReads(ctx);
      assertThat(ctx.transferDomainSocketFallbackReasons()).isEmpty();
      assertThat(server().requests() - requests0).isEqualTo(10);
    }
  }

  @Test
  void missingTransferSocket_fallsBackToTcp_withTheReasonLogged() throws IOException {
    Path absent = tmp.resolve("none-" + cluster.worker(0).rpcPort() + ".sock");
    long requests0 = server().requests();
    try (FileSystemContext ctx = context(Map.of("strata.user.data.domain.socket.enabled", "true",
        "strata.user.transfer.domain.socket.path", tmp.resolve("none-${strata.worker.rpc.port}.sock").toString()))) {
      checkReads(ctx);
      assertThat(ctx.transferDomainSocketFallbackReasons()).singleElement()
          .satisfies(r -> assertThat(r).contains(absent.toString()).contains("does not exist"));
      assertThat(server().requests() - requests0).as("still block transfers, over TCP").isEqualTo(10);
    }
  }

  @Test
  void transfersOff_onTheClient_streamOverGrpc() throws IOException {
    long requests0 = server().requests();
    try (FileSystemContext ctx = context(Map.of("strata.user.network.transfer.enabled", "false"))) {
      checkReads(ctx);
      assertThat(ctx.idleTransferConnections()).isZero();
    }
    assertThat(server().requests()).isEqualTo(requests0);
  }

  @Test
  void transfersOff_onTheWorker_advertiseNoPort_andReadsStreamOverGrpc() throws IOException {
    Path base = tmp.resolve("off");
    try (LocalStrataCluster off = LocalStrataCluster.builder().workers(1).baseDir(base)
        .set("strata.worker.transfer.enabled", false).build().start();
        FileSystemContext ctx = new FileSystemContext(off.clientConf().withAll(Map.of(
            "strata.user.shortcircuit.mode", "off", "strata.user.data.domain.socket.enabled", "false")));
        FileSystem fs = FileSystem.create(ctx)) {
      assertThat(off.worker(0).transfer()).isNull();
      write(fs, "/x", DATA, BLOCK);
      assertThat(fs.getBlockLocations("/x").get(0).locations().get(0).address().transferPort()).isZero();
      assertThat(readAll(fs, "/x")).isEqualTo(DATA);
      assertThat(ctx.idleTransferConnections()).isZero();
    }
  }

  /**
   * strata.worker.transfer.send=mmap: the bytes go out from read-only mappings of the block file, one window
   * (strata.worker.read.chunk.size.max, here 256 KiB) mapped at a time, byte-exact for whole and partial reads and
   * for a checksummed range across many windows, and a reader that disconnects mid-block releases the block (its
   * window is unmapped as the write fails) while the worker serves on.
   */
  @Test
  void mmapSends_mapOneWindowAtATime_areByteExact_andADisconnectedReaderReleasesTheBlock() throws Exception {
    Path base = tmp.resolve("mmap");
    int window = 256 << 10;
    byte[] big = new byte[40 << 20];
    new Random(7).nextBytes(big);
    try (LocalStrataCluster mm = LocalStrataCluster.builder().workers(1).baseDir(base)
        .set("strata.worker.transfer.send", "mmap").set("strata.worker.read.chunk.size.max", "256KB").build().start();
        FileSystemContext ctx = new FileSystemContext(mm.clientConf().withAll(Map.of(
            "strata.user.shortcircuit.mode", "off", "strata.user.data.domain.socket.enabled", "false")));
        FileSystem fs = FileSystem.create(ctx)) {
      TransferServer t = mm.worker(0).transfer();
      write(fs, "/data", DATA, BLOCK);
      write(fs, "/big", big, 40 << 20); // one block: 160 windows
      long block = fs.getBlockLocations("/big").get(0).blockId();

      // One checksummed read of 5 MiB at an unaligned offset, alone on the worker: 21 windows, one mapped at a time.
      long offset = 1_000_003;
      int length = 5 << 20;
      try (Socket s = new Socket("127.0.0.1", t.port())) {
        s.setSoTimeout(10_000);
        send(new DataOutputStream(s.getOutputStream()), ReadBlockRequest.newBuilder().setBlockId(block)
            .setOffset(offset).setLength(length).setChecksums(true).build().toByteArray());
        DataInputStream in = new DataInputStream(s.getInputStream());
        TransferReadResponse h = header(in);
        long from = ChunkChecksums.alignDown(offset);
        long to = ChunkChecksums.alignUp(offset + length, big.length);
        assertThat(h.getOffset()).isEqualTo(from);
        assertThat(h.getLength()).isEqualTo(to - from);
        byte[] got = new byte[(int) h.getLength()];
        in.readFully(got);
        assertThat(got).isEqualTo(Arrays.copyOfRange(big, (int) from, (int) to));
        assertThat(h.getChunkCrc32CCount()).isEqualTo((int) ((to - from) / ChunkChecksums.CHUNK_BYTES));
        for (int i = 0; i < h.getChunkCrc32CCount(); i++) {
          int at = i * ChunkChecksums.CHUNK_BYTES;
          assertThat(ChunkChecksums.crc(got, at, Math.min(ChunkChecksums.CHUNK_BYTES, got.length - at)))
              .as("chunk %d's CRC32C", i).isEqualTo(h.getChunkCrc32C(i));
        }
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> t.transfersNow() == 0);
      assertThat(t.mostMappedBytes()).as("the most mapped at once").isPositive().isLessThanOrEqualTo(window);
      assertThat(t.mappedBytesNow()).isZero();

      long requests0 = t.requests();
      checkReads(ctx);
      assertThat(t.requests() - requests0).isEqualTo(4 + 6);
      try (Socket s = new Socket("127.0.0.1", t.port())) {
        s.setSoTimeout(10_000);
        send(new DataOutputStream(s.getOutputStream()),
            ReadBlockRequest.newBuilder().setBlockId(block).setLength(40 << 20).build().toByteArray());
        DataInputStream in = new DataInputStream(s.getInputStream());
        assertThat(header(in).getLength()).isEqualTo(40 << 20);
        in.readFully(new byte[1 << 20]);
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> t.transfersNow() == 0 && t.mappedBytesNow() == 0);
      // released and unharmed: the block is read whole again, and removed once deleted
      byte[] got = new byte[1 << 20];
      try (FileInStream in = fs.openFile("/big")) {
        in.readFully((40 << 20) - got.length, got, 0, got.length);
      }
      assertThat(got).isEqualTo(Arrays.copyOfRange(big, big.length - got.length, big.length));
      fs.delete("/big");
      await().atMost(Duration.ofSeconds(10)).until(() -> mm.worker(0).tieredStore().usedBytes() < (40 << 20));
    }
  }

  // ------------------------------------------------------------------ the raw protocol, as a client could abuse it

  private static long firstBlock(String path) throws IOException {
    try (FileSystem fs = client(Map.of())) {
      return fs.getBlockLocations(path).get(0).blockId();
    }
  }

  private static void send(DataOutputStream out, byte[] frame) throws IOException {
    out.writeInt(frame.length);
    out.write(frame);
    out.flush();
  }

  private static TransferReadResponse header(DataInputStream in) throws IOException {
    byte[] h = new byte[in.readInt()];
    in.readFully(h);
    return TransferReadResponse.parseFrom(h);
  }

  private static Socket connect() throws IOException {
    Socket s = new Socket("127.0.0.1", server().port());
    s.setSoTimeout(10_000);
    return s;
  }

  @Test
  void badRequests_getAClearError_andTheWorkerServesOn() throws Exception {
    long block = firstBlock("/data");
    try (Socket s = connect()) {
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      DataInputStream in = new DataInputStream(s.getInputStream());
      // an unknown block: NOT_FOUND, and the connection goes on
      send(out, ReadBlockRequest.newBuilder().setBlockId(BlockId.of(999_999, 0)).setLength(1).build().toByteArray());
      TransferReadResponse r = header(in);
      assertThat(r.getErrorCode()).isEqualTo("NOT_FOUND");
      assertThat(r.getErrorMessage()).contains("does not exist on this worker");
      // past the block's end: OUT_OF_RANGE naming the sizes
      send(out, ReadBlockRequest.newBuilder().setBlockId(block).setOffset(BLOCK - 1).setLength(2).build().toByteArray());
      r = header(in);
      assertThat(r.getErrorCode()).isEqualTo("OUT_OF_RANGE");
      assertThat(r.getErrorMessage()).contains("has " + BLOCK + " bytes").contains("cannot read 2 bytes");
      // and a good read on the same connection: exactly the bytes asked for
      send(out, ReadBlockRequest.newBuilder().setBlockId(block).setOffset(100).setLength(1000).build().toByteArray());
      r = header(in);
      assertThat(r.getErrorCode()).isEmpty();
      assertThat(r.getOffset()).isEqualTo(100);
      assertThat(r.getLength()).isEqualTo(1000);
      byte[] got = new byte[1000];
      in.readFully(got);
      assertThat(got).isEqualTo(Arrays.copyOfRange(DATA, 100, 1100));
      // a UFS read is not this protocol's: refused, and the connection closed
      send(out, ReadBlockRequest.newBuilder().setBlockId(block).setLength(1).setUfsFallback(true).build().toByteArray());
      r = header(in);
      assertThat(r.getErrorCode()).isEqualTo("INVALID_ARGUMENT");
      assertThat(r.getErrorMessage()).contains("go through the data port");
      assertThat(in.read()).isEqualTo(-1);
    }
    try (Socket s = connect()) {
      // garbage that is no protobuf
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      send(out, new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2, 3});
      TransferReadResponse r = header(new DataInputStream(s.getInputStream()));
      assertThat(r.getErrorCode()).isEqualTo("INVALID_ARGUMENT");
      assertThat(r.getErrorMessage()).contains("not a ReadBlockRequest");
    }
    try (Socket s = connect()) {
      // a frame longer than any request
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      out.writeInt(1 << 30);
      out.write(new byte[70_000]);
      out.flush();
      TransferReadResponse r = header(new DataInputStream(s.getInputStream()));
      assertThat(r.getErrorCode()).isEqualTo("INVALID_ARGUMENT");
      assertThat(r.getErrorMessage()).contains("longer than 65536 bytes");
    }
    // the worker is unharmed
    try (FileSystemContext ctx = context(Map.of())) {
      checkReads(ctx);
    }
  }

  /**
   * A client that sends requests (of unknown blocks: each answered NOT_FOUND) and reads none of the answers is cut
   * off once a few dozen answers wait for it, rather than having them queue in the worker without bound.
   */
  @Test
  void aClientThatNeverReadsItsAnswers_isCutOff() throws Exception {
    byte[] frame = ReadBlockRequest.newBuilder().setBlockId(BlockId.of(999_999, 0)).setLength(1).build().toByteArray();
    int sent = 0;
    try (Socket s = new Socket()) {
      s.setReceiveBufferSize(16 << 10);
      s.connect(new java.net.InetSocketAddress("127.0.0.1", server().port()));
      s.setSoTimeout(20_000);
      DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(s.getOutputStream(), 64 << 10));
      try {
        for (; sent < 300_000; sent++) {
          out.writeInt(frame.length);
          out.write(frame);
        }
        out.flush();
      } catch (IOException cut) {
        // the worker closed the connection while we were still sending: what is asserted below
      }
      DataInputStream in = new DataInputStream(s.getInputStream());
      int answers = 0;
      try {
        while (true) {
          header(in);
          answers++;
        }
      } catch (java.io.EOFException | java.net.SocketException closed) {
        // the connection was closed by the worker
      }
      assertThat(answers).as("answers before the cut, of " + sent + " requests").isLessThan(sent);
    }
    try (FileSystemContext ctx = context(Map.of())) {
      checkReads(ctx); // the worker serves on
    }
  }

  @Test
  void aReaderThatStopsTakingBytes_isCutAfterTheStallTimeout_andTheBlockReleased() throws Exception {
    long block = firstBlock("/big");
    long stalled0 = server().stalled();
    try (Socket s = new Socket()) {
      s.setReceiveBufferSize(64 << 10);
      s.connect(new java.net.InetSocketAddress("127.0.0.1", server().port()));
      send(new DataOutputStream(s.getOutputStream()),
          ReadBlockRequest.newBuilder().setBlockId(block).setLength(16 << 20).build().toByteArray());
      // 16 MiB never fits in the socket buffers: the transfer stalls and, after 700 ms, is cut. What is awaited is
      // the cut (counted only for a transfer in progress), not the transfer's brief life, which a look from a
      // loaded machine could miss.
      await().atMost(Duration.ofSeconds(30)).until(() -> server().stalled() > stalled0);
      await().atMost(Duration.ofSeconds(10)).until(() -> server().transfersNow() == 0);
      assertThat(server().stalled()).isEqualTo(stalled0 + 1);
      DataInputStream in = new DataInputStream(s.getInputStream());
      TransferReadResponse r = header(in);
      assertThat(r.getLength()).isEqualTo(16 << 20);
      byte[] rest = new byte[1 << 20];
      long got = 0;
      try {
        int n;
        while ((n = in.read(rest)) > 0) {
          got += n;
        }
      } catch (IOException reset) {
        // the worker closed it: a reset is as good as an end
      }
      assertThat(got).as("what the socket buffers held before the cut").isLessThan(16 << 20);
    }
    // released: the block can be read again (and freed: no reader holds it)
    try (FileSystem fs = client(Map.of()); FileInStream in = fs.openFile("/big")) {
      byte[] b = new byte[1 << 20];
      in.readFully(15 << 20, b, 0, b.length);
      assertThat(b).isEqualTo(new byte[1 << 20]);
    }
  }

  @Test
  void aReaderThatDisconnectsMidBlock_releasesIt() throws Exception {
    long block = firstBlock("/big");
    long requests0 = server().requests();
    try (Socket s = connect()) {
      send(new DataOutputStream(s.getOutputStream()),
          ReadBlockRequest.newBuilder().setBlockId(block).setLength(16 << 20).setChecksums(true).build().toByteArray());
      DataInputStream in = new DataInputStream(s.getInputStream());
      TransferReadResponse r = header(in);
      assertThat(r.getChunkCrc32CCount()).as("one CRC32C per 64 KiB chunk").isEqualTo(256);
      in.readFully(new byte[1 << 20]);
    }
    assertThat(server().requests()).isEqualTo(requests0 + 1);
    await().atMost(Duration.ofSeconds(10)).until(() -> server().transfersNow() == 0);
  }

  @Test
  void aClosedReaderMidBlock_closesItsConnection_andTheNextReadOpensAnother() throws IOException {
    try (FileSystemContext ctx = context(Map.of())) {
      FileSystem fs = FileSystem.create(ctx);
      try (FileInStream in = fs.openFile("/data")) {
        byte[] b = new byte[1000];
        new DataInputStream(in).readFully(b);
        assertThat(b).isEqualTo(Arrays.copyOf(DATA, 1000));
      } // closed with most of the block unsent: that connection is out of step and is dropped
      assertThat(ctx.idleTransferConnections()).isZero();
      assertThat(readAll(fs, "/data")).isEqualTo(DATA);
      assertThat(ctx.transferConnectionsOpened()).isEqualTo(2);
      assertThat(ctx.idleTransferConnections()).isEqualTo(1);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> server().transfersNow() == 0);
  }
}
