package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.util.ResourceLeakDetector;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.FileSystemContext;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.WorkerProcess;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Block data over gRPC with the zero-copy marshallers and the plain ones (issue 10, "Streaming"), on a
 * real mini cluster over loopback TCP (short-circuit off): byte-exact writes and reads through every mix
 * of client and worker marshalling, with unaligned offsets, a last partial chunk and block, and an empty
 * file; the keys switch the paths (seen in the worker's and client's counters); and no transport or
 * pooled buffer is left held after a read or a write is cancelled mid-stream. Netty's leak detector runs
 * at paranoid level throughout, so a leaked Netty buffer is also reported in the log.
 */
class ZeroCopyStreamingIntegrationTest {
  private static final int CHUNK = 64 * 1024;
  private static final int BLOCK = 1 << 20;
  /** Two and a half blocks plus an odd tail: the last chunk and the last block are partial. */
  private static final int SIZE = 2 * BLOCK + BLOCK / 2 + 1234;
  private static final byte[] DATA = new byte[SIZE];

  private static LocalStrataCluster zeroCopyWorker;
  private static LocalStrataCluster plainWorker;

  static {
    new Random(11).nextBytes(DATA);
  }

  @BeforeAll
  static void start() throws IOException {
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    zeroCopyWorker = LocalStrataCluster.builder().workers(1).build().start();
    plainWorker = LocalStrataCluster.builder().workers(1).set("strata.worker.network.zerocopy.enabled", false)
        .build().start();
  }

  @AfterAll
  static void stop() {
    if (zeroCopyWorker != null) {
      zeroCopyWorker.close();
    }
    if (plainWorker != null) {
      plainWorker.close();
    }
  }

  private static FileSystemContext context(LocalStrataCluster cluster, boolean zeroCopy) {
    // gRPC streaming (not the block transfer protocol): its marshallers are what is tested.
    StrataConf conf = cluster.clientConf().withAll(Map.of("strata.user.shortcircuit.mode", "off",
        "strata.user.network.transfer.enabled", "false",
        "strata.user.network.zerocopy.enabled", String.valueOf(zeroCopy),
        "strata.user.stream.chunk.size", String.valueOf(CHUNK)));
    return new FileSystemContext(conf);
  }

  private static void write(FileSystem fs, String path, byte[] data) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(WriteType.MUST_CACHE))) {
      // odd-sized writes, so chunks and the caller's writes do not line up
      for (int off = 0; off < data.length; off += 100_003) {
        out.write(data, off, Math.min(100_003, data.length - off));
      }
    }
  }

  private static byte[] readAll(FileSystem fs, String path) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      byte[] got = new byte[(int) fs.getStatus(path).length() + 1];
      int n = 0;
      int r;
      while ((r = in.read(got, n, Math.min(77_777, got.length - n))) > 0) {
        n += r;
      }
      return Arrays.copyOf(got, n);
    }
  }

  private static void checkRoundTrip(LocalStrataCluster cluster, boolean clientZeroCopy) throws IOException {
    String dir = "/zc-" + clientZeroCopy;
    try (FileSystemContext ctx = context(cluster, clientZeroCopy); FileSystem fs = FileSystem.create(ctx)) {
      write(fs, dir + "/data", DATA);
      write(fs, dir + "/empty", new byte[0]);
      assertThat(readAll(fs, dir + "/data")).isEqualTo(DATA);
      assertThat(readAll(fs, dir + "/empty")).isEmpty();
      try (FileInStream in = fs.openFile(dir + "/data")) {
        // unaligned ranges: inside a chunk, across chunks, across a block boundary, up to the last byte
        int[][] ranges = {{1, 17}, {CHUNK - 5, 11}, {BLOCK - 70_001, 140_003}, {SIZE - 999, 999}, {12_345, CHUNK * 3}};
        for (int[] r : ranges) {
          byte[] got = new byte[r[1]];
          in.readFully(r[0], got, 0, r[1]);
          assertThat(got).as("bytes %d..%d", r[0], r[0] + r[1]).isEqualTo(Arrays.copyOfRange(DATA, r[0], r[0] + r[1]));
        }
      }
      assertThat(ctx.outstandingBlockBuffers()).isZero();
      fs.delete(dir, io.strata.client.options.DeleteOptions.defaults().withRecursive(true));
    }
    awaitNoWorkerBuffers(cluster.worker(0));
  }

  private static void awaitNoWorkerBuffers(WorkerProcess w) {
    await().atMost(Duration.ofSeconds(10)).until(() -> w.outstandingBlockBuffers() == 0);
  }

  @Test
  void readsAndWritesAreByteExact_throughEveryMixOfMarshallers() throws IOException {
    checkRoundTrip(zeroCopyWorker, true);
    checkRoundTrip(zeroCopyWorker, false);
    checkRoundTrip(plainWorker, true);
    checkRoundTrip(plainWorker, false);
  }

  @Test
  void keysChooseThePath_zeroCopyByDefault() throws IOException {
    WorkerProcess w = zeroCopyWorker.worker(0);
    try (FileSystemContext ctx = context(zeroCopyWorker, true); FileSystem fs = FileSystem.create(ctx)) {
      long written0 = w.aliasedWriteChunks();
      write(fs, "/keys/on", DATA);
      assertThat(w.aliasedWriteChunks() - written0).as("write chunks parsed over Netty's buffers")
          .isGreaterThanOrEqualTo(SIZE / 100_003); // one message or more per write call
      long direct0 = w.directChunksRead();
      assertThat(readAll(fs, "/keys/on")).isEqualTo(DATA);
      assertThat(w.directChunksRead() - direct0).as("chunks the worker read into pooled direct buffers")
          .isEqualTo((SIZE + CHUNK - 1) / CHUNK);
      assertThat(ctx.aliasedBlockResponses()).as("chunks the client parsed without copying")
          .isEqualTo((SIZE + CHUNK - 1) / CHUNK);
    }
    try (FileSystemContext ctx = context(zeroCopyWorker, false); FileSystem fs = FileSystem.create(ctx)) {
      long direct0 = w.directChunksRead();
      assertThat(readAll(fs, "/keys/on")).isEqualTo(DATA);
      assertThat(w.directChunksRead()).as("a plain client gets the worker's heap path").isEqualTo(direct0);
      assertThat(ctx.aliasedBlockResponses()).isZero();
    }
    WorkerProcess plain = plainWorker.worker(0);
    try (FileSystemContext ctx = context(plainWorker, true); FileSystem fs = FileSystem.create(ctx)) {
      write(fs, "/keys/off", DATA);
      assertThat(readAll(fs, "/keys/off")).isEqualTo(DATA);
      assertThat(plain.directChunksRead()).isZero();
      assertThat(plain.aliasedWriteChunks()).isZero();
    }
  }

  @Test
  void noBufferIsHeld_afterAReadOrAWriteIsCancelledMidStream() throws IOException {
    WorkerProcess w = zeroCopyWorker.worker(0);
    try (FileSystemContext ctx = context(zeroCopyWorker, true); FileSystem fs = FileSystem.create(ctx)) {
      write(fs, "/cancel/data", DATA);
      for (int i = 0; i < 5; i++) {
        try (FileInStream in = fs.openFile("/cancel/data")) {
          // a sequential reader asks for the rest of the block, takes 1000 bytes and is closed with
          // chunks prefetched and in flight
          byte[] b = new byte[1000];
          in.seek(i * 100_000L);
          assertThat(in.read(b)).isEqualTo(b.length);
          assertThat(b).isEqualTo(Arrays.copyOfRange(DATA, i * 100_000, i * 100_000 + 1000));
        }
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> ctx.outstandingBlockBuffers() == 0);
      awaitNoWorkerBuffers(w);

      FileOutStream out = fs.createFile("/cancel/partial", CreateFileOptions.defaults().withBlockSize(BLOCK)
          .withWriteType(WriteType.MUST_CACHE));
      out.write(DATA, 0, BLOCK + CHUNK * 3 + 5);
      out.cancel();
      awaitNoWorkerBuffers(w);
      assertThat(fs.exists("/cancel/partial")).isFalse();
      assertThat(ctx.outstandingBlockBuffers()).isZero();
    }
  }

  /**
   * A write the worker refuses at its first message while the client goes on sending chunks: whatever of them
   * the worker still parses over the transport's buffers is released, though the write has failed (a held one
   * would keep its direct memory for the life of the worker). gRPC delivers no message after the refusal
   * today (only the header is parsed); BlockWriteCall releases one that does arrive all the same.
   */
  @Test
  void noBufferIsHeld_afterAWriteTheWorkerRefused_whileTheClientKeptSending() throws Exception {
    WorkerProcess w = zeroCopyWorker.worker(0);
    awaitNoWorkerBuffers(w);
    long parsed = w.aliasedWriteChunks();
    io.grpc.ManagedChannel ch = io.strata.common.grpc.GrpcChannels.forAddress("localhost", w.rpcPort(), 64 << 20);
    io.strata.proto.WriteBlockRequest[] all = new io.strata.proto.WriteBlockRequest[33];
    try {
      all[0] = io.strata.proto.WriteBlockRequest.newBuilder().setHeader(io.strata.proto.WriteBlockHeader.newBuilder()
          .setBlockId(io.strata.common.id.BlockId.of(777_777, 0)).setMaxLength(BLOCK).setBytesPerChecksum(1234)).build();
      com.google.protobuf.ByteString chunk = com.google.protobuf.ByteString.copyFrom(DATA, 0, CHUNK);
      for (int i = 1; i < all.length; i++) {
        all[i] = io.strata.proto.WriteBlockRequest.newBuilder().setChunk(chunk).build();
      }
      assertThat(BadInputIntegrationTest.rawWriteError(ch, io.strata.common.id.BlockId.of(777_777, 0), all))
          .isInstanceOf(io.strata.common.exception.InvalidArgumentException.class)
          .hasMessageContaining("1234-byte chunks are not supported");
    } finally {
      io.strata.common.grpc.GrpcChannels.close(ch);
    }
    assertThat(w.aliasedWriteChunks() - parsed).as("messages the worker parsed over the transport's buffers")
        .isBetween(1L, (long) all.length);
    awaitNoWorkerBuffers(w);
  }
}
