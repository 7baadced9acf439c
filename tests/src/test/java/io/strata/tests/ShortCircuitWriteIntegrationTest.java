package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.client.shortcircuit.ShortCircuitClient;
import io.strata.client.shortcircuit.ShortCircuitWrite;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.proto.CommitTempBlockProto;
import io.strata.proto.ShortCircuitRequest;
import io.strata.proto.ShortCircuitResponse;
import io.strata.worker.WorkerProcess;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Short-circuit writes over the worker's domain socket: the client writes the worker's temp block file
 * itself and commits. Byte-exact on every tier and write type with no block byte on the gRPC data path;
 * the temp block belongs to its connection (a dead connection drops it and its space); a commit past the
 * grant or of a wrong length is refused; a full tier behaves as issue 9 says per write type; and a client
 * that cannot see the worker's dir writes by descriptor while path mode falls back with its reason.
 */
class ShortCircuitWriteIntegrationTest {
  private static final int BLOCK = 1 << 20;

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;
  private static FileSystem fs;
  private static Path tierDir;

  @BeforeAll
  static void start() throws IOException {
    tierDir = tmp.resolve("mem");
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.worker.tier.0.dirs", tierDir.toString())
        .set("strata.worker.tier.0.quota", "64MB")
        .set("strata.worker.tier.manager.interval", "1h").build().start();
    fs = cluster.client();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static WorkerProcess worker() {
    return cluster.worker(0);
  }

  private static byte[] data(int length, long seed) {
    byte[] b = new byte[length];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static void write(FileSystem client, String path, byte[] data, WriteType type) throws IOException {
    try (FileOutStream out = client.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(type))) {
      // odd pieces, so writes straddle chunks and blocks
      for (int off = 0; off < data.length; off += 300_001) {
        out.write(data, off, Math.min(300_001, data.length - off));
      }
    }
  }

  private static byte[] readAll(FileSystem client, String path) throws IOException {
    try (FileInStream in = client.openFile(path)) {
      return in.readAllBytes();
    }
  }

  private static long tempFiles(Path dir) throws IOException {
    Path t = dir.resolve("tmp");
    if (!Files.isDirectory(t)) {
      return 0;
    }
    try (Stream<Path> s = Files.list(t)) {
      return s.count();
    }
  }

  private static ShortCircuitClient rawClient() {
    return new ShortCircuitClient(ShortCircuitClient.Mode.FD, "/tmp/strata-worker-${strata.worker.rpc.port}.sock",
        10_000);
  }

  private static WorkerAddress workerAddress() {
    return new WorkerAddress("localhost", worker().rpcPort());
  }

  @ParameterizedTest
  @ValueSource(strings = {"fd", "off"})
  void aSlowWriter_keepsItsTempBlock_pastTheIdleTimeout(String mode) throws Exception {
    // The reaper runs every 100 ms and takes temp blocks idle for 300 ms; this writer pauses 1.5 s mid-block,
    // short-circuit (fd) or streamed over gRPC (off).
    try (LocalStrataCluster c = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster-slow-" + mode))
        .set("strata.worker.tier.0.dirs", tmp.resolve("slow-" + mode).toString())
        .set("strata.worker.tier.0.quota", "32MB")
        .set("strata.worker.temp.block.timeout", "300ms")
        .set("strata.worker.tier.manager.interval", "100ms").build().start();
        // 64 KB chunks: the half block before the pause is at the worker already, not in the client's buffer.
        FileSystem client = FileSystem.create(c.clientConf().withAll(Map.of("strata.user.shortcircuit.mode", mode,
            "strata.user.stream.chunk.size", "64KB")))) {
      byte[] data = data(BLOCK + 1000, 77);
      try (FileOutStream out = client.createFile("/slow", CreateFileOptions.defaults().withBlockSize(BLOCK)
          .withWriteType(WriteType.MUST_CACHE))) {
        out.write(data, 0, BLOCK / 2);
        Thread.sleep(1500);
        out.write(data, BLOCK / 2, data.length - BLOCK / 2);
      }
      assertThat(readAll(client, "/slow")).isEqualTo(data);
      if (mode.equals("fd")) {
        assertThat(c.worker(0).shortCircuit().tempBlocksCreated()).isEqualTo(2);
        assertThat(c.worker(0).dataService().streamedWriteBytes()).isZero(); // no failover to streaming
      } else {
        assertThat(c.worker(0).dataService().streamedWriteBytes()).isEqualTo(data.length);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"MEM", "SSD", "HDD"})
  void write_isByteExact_onEachTier_andNoBlockByteGoesOverGrpc(String alias) throws IOException {
    Path dir = tmp.resolve("tier-" + alias);
    try (LocalStrataCluster c = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster-" + alias))
        .set("strata.worker.tier.0.alias", alias)
        .set("strata.worker.tier.0.dirs", dir.toString())
        .set("strata.worker.tier.0.quota", "32MB")
        .set("strata.worker.tier.manager.interval", "1h").build().start()) {
      FileSystem client = c.client();
      WorkerProcess w = c.worker(0);
      byte[] data = data(3 * BLOCK + 12345, alias.hashCode());

      write(client, "/sc/" + alias, data, WriteType.MUST_CACHE);

      assertThat(w.shortCircuit().tempBlocksCreated()).isEqualTo(4);
      assertThat(w.shortCircuit().bytesCommitted()).isEqualTo(data.length);
      assertThat(w.dataService().streamedWriteBytes()).isZero();
      assertThat(readAll(client, "/sc/" + alias)).isEqualTo(data);
      List<FileBlockInfo> blocks = client.getBlockLocations("/sc/" + alias);
      assertThat(blocks).hasSize(4);
      for (FileBlockInfo b : blocks) {
        assertThat(w.store().get(b.blockId()).tier()).isEqualTo(alias);
        assertThat(Files.size(dir.resolve("blocks").resolve(Long.toString(b.blockId()))))
            .isEqualTo(b.blockId() == blocks.get(3).blockId() ? 12345 : BLOCK);
      }
      assertThat(tempFiles(dir)).isZero();
      assertThat(w.shortCircuit().writesNow()).isZero();

      // The counter can be wrong the other way: with short-circuit off the same bytes go over gRPC.
      try (FileSystem streaming = FileSystem.create(c.clientConf().withAll(Map.of("strata.user.shortcircuit.mode",
          "off")))) {
        write(streaming, "/sc/" + alias + "-streamed", data, WriteType.MUST_CACHE);
      }
      assertThat(w.dataService().streamedWriteBytes()).isEqualTo(data.length);
      assertThat(w.shortCircuit().bytesCommitted()).isEqualTo(data.length);
    }
  }

  /**
   * strata.user.shortcircuit.write.create.ahead (on by default): once a MUST_CACHE block after the first is half
   * written short-circuit, the next block's temp block is created in the background, and blocks 2 and 3 are
   * taken from such creates (block 1 is not: a one-block file never creates ahead). A file that ends in the
   * second half of its last block has one more created ahead and not used: it is dropped before close returns (no
   * temp file left, no write in progress at the worker, the tier's usage that of the file alone). Byte-exact;
   * with the key off nothing is created ahead.
   */
  @Test
  void nextBlock_isCreatedAhead_andAnUnusedOneIsDroppedBeforeCloseReturns() throws IOException {
    long before = worker().shortCircuit().tempBlocksCreated();
    write(fs, "/sc/ahead-one-block", data(3 * BLOCK / 4, 76), WriteType.MUST_CACHE);
    assertThat(worker().shortCircuit().tempBlocksCreated() - before).as("temp blocks of a one-block file").isEqualTo(1);
    fs.delete("/sc/ahead-one-block");
    byte[] data = data(3 * BLOCK + 3 * BLOCK / 4, 77); // ends past the middle of block 3: block 4 is created ahead
    for (boolean on : new boolean[] {true, false}) {
      String path = "/sc/ahead-" + on;
      long created = worker().shortCircuit().tempBlocksCreated();
      FileOutStream out;
      try (FileSystem client = FileSystem.create(cluster.clientConf().withAll(
          Map.of("strata.user.shortcircuit.write.create.ahead", String.valueOf(on))))) {
        out = client.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
            .withWriteType(WriteType.MUST_CACHE));
        try (out) {
          for (int off = 0; off < data.length; off += 300_001) {
            out.write(data, off, Math.min(300_001, data.length - off));
          }
        }
        assertThat(tempFiles(tierDir)).as("temp files at close (ahead %s)", on).isZero();
        assertThat(worker().shortCircuit().writesNow()).as("writes in progress at close (ahead %s)", on).isZero();
      }
      assertThat(out.blocksCreatedAhead()).as("blocks taken from a create ahead").isEqualTo(on ? 2 : 0);
      assertThat(worker().shortCircuit().tempBlocksCreated() - created).as("temp blocks created")
          .isEqualTo(on ? 5 : 4);
      assertThat(readAll(fs, path)).isEqualTo(data);
      List<FileBlockInfo> blocks = fs.getBlockLocations(path);
      assertThat(blocks).hasSize(4);
      long held = 0;
      for (FileBlockInfo b : blocks) {
        held += Files.size(tierDir.resolve("blocks").resolve(Long.toString(b.blockId())));
      }
      assertThat(held).as("bytes held by the file's block files").isEqualTo(data.length);
      fs.delete(path);
    }
  }

  @Test
  void everyWriteType_andPathMode_writeShortCircuit_byteExact() throws IOException {
    long committed = worker().shortCircuit().bytesCommitted();
    long streamed = worker().dataService().streamedWriteBytes();
    byte[] must = data(2 * BLOCK + 1, 11);
    byte[] cacheThrough = data(2 * BLOCK + 2, 12);
    byte[] async = data(2 * BLOCK + 3, 13);
    byte[] byPath = data(BLOCK + 4, 14);

    write(fs, "/sc/types/must", must, WriteType.MUST_CACHE);
    write(fs, "/sc/types/cache-through", cacheThrough, WriteType.CACHE_THROUGH);
    write(fs, "/sc/types/async", async, WriteType.ASYNC_THROUGH); // blocks reserved whole first
    try (FileSystem pathMode = FileSystem.create(cluster.clientConf().withAll(Map.of("strata.user.shortcircuit.mode",
        "path")))) {
      write(pathMode, "/sc/types/path", byPath, WriteType.MUST_CACHE);
    }

    assertThat(worker().shortCircuit().bytesCommitted() - committed)
        .isEqualTo(must.length + cacheThrough.length + async.length + byPath.length);
    assertThat(worker().dataService().streamedWriteBytes() - streamed).isZero();
    assertThat(readAll(fs, "/sc/types/must")).isEqualTo(must);
    assertThat(readAll(fs, "/sc/types/cache-through")).isEqualTo(cacheThrough);
    assertThat(Files.readAllBytes(cluster.rootUfsDir().resolve("sc/types/cache-through"))).isEqualTo(cacheThrough);
    assertThat(readAll(fs, "/sc/types/async")).isEqualTo(async);
    assertThat(readAll(fs, "/sc/types/path")).isEqualTo(byPath);
    assertThat(fs.getBlockLocations("/sc/types/async")).hasSize(3)
        .allSatisfy(b -> assertThat(b.locations()).isNotEmpty());
  }

  @Test
  void connectionDeath_beforeCommit_dropsTheTempBlock_andReturnsItsSpace() throws Exception {
    FileOutStream holder = fs.createFile("/sc/dies", CreateFileOptions.defaults().withBlockSize(BLOCK));
    long blockId = BlockId.of(holder.status().id(), 0);
    long used = worker().store().usedBytes();
    long aborted = worker().shortCircuit().abortedByDisconnect();
    ShortCircuitClient client = rawClient();
    ShortCircuitWrite w = client.create(workerAddress(), blockId, BLOCK, false, 256 * 1024);
    assertThat(w).isNotNull();
    assertThat(w.granted()).isEqualTo(256 * 1024);
    assertThat(w.channel().write(ByteBuffer.wrap(data(1000, 3)), 0)).isEqualTo(1000);
    assertThat(tempFiles(tierDir)).isEqualTo(1);
    assertThat(worker().store().usedBytes() - used).isEqualTo(256 * 1024);

    client.close(); // the connection ends without COMMIT or ABORT

    await().atMost(Duration.ofSeconds(10)).until(() -> tempFiles(tierDir) == 0);
    assertThat(worker().store().usedBytes()).isEqualTo(used);
    assertThat(worker().shortCircuit().abortedByDisconnect() - aborted).isEqualTo(1);
    assertThat(worker().shortCircuit().writesNow()).isZero();
    assertThatThrownBy(() -> worker().store().get(blockId)).isInstanceOf(NotFoundException.class);
    holder.cancel();
  }

  /**
   * A writer process killed half way into block 1, each block committed before the next starts: the worker drops
   * block 1's temp block when the connection ends, and only the committed block 0 holds space.
   */
  @Test
  void writerProcessKilledMidBlock_itsTempBlockIsDropped_andItsSpaceReturned() throws Exception {
    long used = worker().store().usedBytes();
    long aborted = worker().shortCircuit().abortedByDisconnect();
    String output = killWriterAfter("/sc/killed", BLOCK + BLOCK / 2, "sync");
    assertThat(output).contains("writes=2"); // block 0 committed, block 1 half written

    await().atMost(Duration.ofSeconds(10)).until(() -> worker().shortCircuit().abortedByDisconnect() - aborted == 1);
    assertThat(tempFiles(tierDir)).isZero();
    assertThat(worker().shortCircuit().writesNow()).isZero();
    assertThat(worker().store().usedBytes() - used).isEqualTo(BLOCK); // only the committed block 0
  }

  /**
   * Killed three quarters into block 1 with the defaults (commits in the background, the next block created
   * ahead): block 0's commit may still be in flight, and block 2's temp block may have been created ahead (or be
   * on its way) on another connection of the dead process. Every temp block it had goes with its connections:
   * none left, no write in progress, and what holds space is exactly the committed block files (block 0, or
   * nothing when its commit did not make it).
   */
  @Test
  void writerProcessKilledPastHalfABlock_itsBlockCreatedAheadIsDroppedToo() throws Exception {
    long used = worker().store().usedBytes();
    long aborted = worker().shortCircuit().abortedByDisconnect();
    long blockFiles = blockFiles();
    String output = killWriterAfter("/sc/killed-ahead", BLOCK + 3 * BLOCK / 4, "background");
    assertThat(output).containsAnyOf("writes=2", "writes=3");

    // Held for half a second: a CREATE the dead process sent last may still be read from its socket after the
    // rest is dropped, and is dropped in turn.
    await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(10)).until(() ->
        worker().shortCircuit().writesNow() == 0 && tempFiles(tierDir) == 0
            && worker().store().usedBytes() - used == BLOCK * (blockFiles() - blockFiles));
    assertThat(blockFiles() - blockFiles).as("committed block files").isBetween(0L, 1L);
    assertThat(worker().shortCircuit().abortedByDisconnect() - aborted).isBetween(1L, 3L);
  }

  /** Block files in the tier dir (checksum sidecars left out). */
  private static long blockFiles() throws IOException {
    try (Stream<Path> s = Files.list(tierDir.resolve("blocks"))) {
      return s.filter(p -> !p.getFileName().toString().endsWith(".crc")).count();
    }
  }

  /**
   * Runs {@link ShortCircuitWriteMain} writing {@code length} bytes MUST_CACHE, halted before it closes; {@code
   * commits} is {@code sync} (each block committed before the next) or {@code background} (the defaults).
   */
  private static String killWriterAfter(String path, int length, String commits) throws Exception {
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(javaBin, "-Dio.netty.native.detectNativeLibraryDuplicates=false", "-cp",
        System.getProperty("java.class.path"), ShortCircuitWriteMain.class.getName(),
        Integer.toString(cluster.masterPort()), path, "fd", tierDir.toString(), Integer.toString(length),
        "40", "MUST_CACHE", "die", commits).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(output).isEqualTo(3);
    return output;
  }

  @Test
  void commit_pastTheGrant_orOfAWrongLength_isRefused_andNothingIsCommitted() throws Exception {
    FileOutStream holder = fs.createFile("/sc/refused", CreateFileOptions.defaults().withBlockSize(BLOCK));
    long over = BlockId.of(holder.status().id(), 0);
    long mismatch = BlockId.of(holder.status().id(), 1);
    long noSums = BlockId.of(holder.status().id(), 2);
    long used = worker().store().usedBytes();
    try (ShortCircuitClient client = rawClient()) {
      ShortCircuitWrite a = client.create(workerAddress(), over, BLOCK, false, 64 * 1024);
      a.channel().write(ByteBuffer.wrap(data(100 * 1024, 4)), 0);
      assertThatThrownBy(() -> commit(a, data(100 * 1024, 4))).isInstanceOf(FailedPreconditionException.class)
          .hasMessageContaining("Block " + over).hasMessageContaining("wrote 102400 bytes but was granted only 65536");

      ShortCircuitWrite b = client.create(workerAddress(), mismatch, BLOCK, false, 64 * 1024);
      b.channel().write(ByteBuffer.wrap(data(10, 5)), 0);
      assertThatThrownBy(() -> commit(b, data(20, 5))).isInstanceOf(InvalidArgumentException.class)
          .hasMessageContaining("Block " + mismatch).hasMessageContaining("says it wrote 20 bytes but its temp file "
              + "holds 10");

      // The right length without its checksums (one per 64 KiB chunk, here 2) is refused too.
      ShortCircuitWrite c = client.create(workerAddress(), noSums, BLOCK, false, BLOCK);
      c.channel().write(ByteBuffer.wrap(data(100 * 1024, 6)), 0);
      assertThatThrownBy(() -> c.commit(100 * 1024, new int[1], 0, 1)).isInstanceOf(InvalidArgumentException.class)
          .hasMessage("Committing block " + noSums + " on worker " + workerAddress() + " short-circuit: INVALID_ARGUMENT: Block "
              + noSums + ": the writer sent 1 checksums for 102400 bytes, which are 2 checksum chunks of 65536 bytes");
    }
    for (long id : List.of(over, mismatch, noSums)) {
      assertThatThrownBy(() -> worker().store().get(id)).isInstanceOf(NotFoundException.class);
    }
    assertThat(tempFiles(tierDir)).isZero();
    assertThat(worker().store().usedBytes()).isEqualTo(used);
    holder.cancel();
  }

  @Test
  void anotherConnection_cannotCommitOrGrowATempBlockItDidNotCreate() throws Exception {
    FileOutStream holder = fs.createFile("/sc/other", CreateFileOptions.defaults().withBlockSize(BLOCK));
    long blockId = BlockId.of(holder.status().id(), 0);
    try (ShortCircuitClient client = rawClient()) {
      ShortCircuitWrite w = client.create(workerAddress(), blockId, BLOCK, false, 64 * 1024);
      w.channel().write(ByteBuffer.wrap(data(10, 6)), 0);

      ShortCircuitResponse r = raw(ShortCircuitRequest.newBuilder()
          .setCommit(CommitTempBlockProto.newBuilder().setBlockId(blockId).setLength(10)).build());
      assertThat(r.getErrorCode()).isEqualTo("FAILED_PRECONDITION");
      assertThat(r.getErrorMessage()).contains("Block " + blockId + " is not being written on this short-circuit "
          + "connection");
      assertThatThrownBy(() -> worker().store().get(blockId)).isInstanceOf(NotFoundException.class);

      assertThat(commit(w, data(10, 6))).isEqualTo(10); // its owner still commits it
      assertThat(worker().store().get(blockId).length()).isEqualTo(10);
    }
    holder.cancel();
    // Gone from the worker before the next test counts the store's used bytes.
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThatThrownBy(() -> worker().store().get(blockId)).isInstanceOf(NotFoundException.class));
  }

  /** Commits {@code written}, the bytes the raw writer put in its block, with their checksums. */
  private static long commit(ShortCircuitWrite w, byte[] written) throws IOException {
    int[] sums = ChunkChecksums.of(ByteBuffer.wrap(written));
    return w.commit(written.length, sums, 0, sums.length);
  }

  /**
   * The writer's checksums travel with its grants and its commit and become the block's stored ones:
   * they match the bytes on disk chunk by chunk, and a byte flipped on disk after the commit is caught
   * by a streaming reader and a short-circuit one alike, which name the corrupt chunk.
   */
  @Test
  void theWritersChecksums_areTheBlocksStoredOnes_andCatchABlockCorruptedOnDisk() throws IOException {
    // 64 KiB grants: each block's 16 chunks arrive over many GRANTs and the COMMIT.
    byte[] data = data(2 * BLOCK + 70_000, 12);
    try (FileSystem small = FileSystem.create(cluster.clientConf().withAll(Map.of(
        "strata.user.shortcircuit.write.grant.size", "64KB")))) {
      write(small, "/sc/sums", data, WriteType.MUST_CACHE);
    }
    List<FileBlockInfo> blocks = fs.getBlockLocations("/sc/sums");
    assertThat(blocks).hasSize(3);
    for (int i = 0; i < 3; i++) {
      int from = i * BLOCK;
      byte[] block = java.util.Arrays.copyOfRange(data, from, Math.min(data.length, from + BLOCK));
      try (io.strata.worker.store.BlockStore.ReadHandle h = worker().store().openForRead(blocks.get(i).blockId(),
          false)) {
        assertThat(h.checksums()).containsExactly(ChunkChecksums.of(ByteBuffer.wrap(block)));
      }
    }
    assertThat(readAll(fs, "/sc/sums")).isEqualTo(data);

    long corrupt = blocks.get(1).blockId();
    Path file = tierDir.resolve("blocks").resolve(Long.toString(corrupt));
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
        java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
      ByteBuffer one = ByteBuffer.allocate(1);
      ch.read(one, 200_000);
      one.put(0, (byte) ~one.get(0)).rewind();
      ch.write(one, 200_000);
    }
    try (FileSystem streaming = FileSystem.create(cluster.clientConf().withAll(Map.of("strata.user.shortcircuit.mode",
        "off")))) {
      for (FileSystem reader : List.of(fs, streaming)) {
        assertThatThrownBy(() -> readAll(reader, "/sc/sums")).isInstanceOf(DataLossException.class)
            .hasMessageContaining("Block " + corrupt).hasMessageContaining("corrupt at offset " + 3 * 65536);
      }
    }
    fs.delete("/sc/sums");
  }

  /** One request on a fresh connection; its one response. */
  private static ShortCircuitResponse raw(ShortCircuitRequest req) throws IOException {
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(worker().shortCircuit().socketPath()));
      byte[] body = req.toByteArray();
      ch.write(ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).flip());
      ByteBuffer len = ByteBuffer.allocate(4);
      while (len.hasRemaining() && ch.read(len) >= 0) {
        // until the length is in
      }
      ByteBuffer resp = ByteBuffer.allocate(len.flip().getInt());
      while (resp.hasRemaining() && ch.read(resp) >= 0) {
        // until the body is in
      }
      return ShortCircuitResponse.parseFrom(resp.flip());
    }
  }

  /**
   * A tier with room for 4.5 blocks holds 4 of a MUST_CACHE file (never evicted: not persisted). With
   * 64 KiB grants, the next block runs out of room mid-block: MUST_CACHE is refused with the store's
   * message and leaves nothing; CACHE_THROUGH drops the block and completes from the under file system
   * copy; ASYNC_THROUGH finds no whole block's room, waits, and writes the file through.
   */
  @Test
  void fullTier_givesTheIssue9BehaviourPerWriteType() throws Exception {
    Path dir = tmp.resolve("full");
    try (LocalStrataCluster c = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster-full"))
        .set("strata.worker.tier.0.dirs", dir.toString())
        .set("strata.worker.tier.0.quota", Long.toString(4 * BLOCK + BLOCK / 2))
        .set("strata.worker.tier.manager.interval", "1h")
        .set("strata.worker.write.space.wait.timeout", "1s")
        .set("strata.user.write.space.wait.timeout", "1s")
        .set("strata.user.shortcircuit.write.grant.size", "64KB").build().start()) {
      FileSystem client = c.client();
      WorkerProcess w = c.worker(0);
      byte[] fill = data(4 * BLOCK, 20);
      write(client, "/fill", fill, WriteType.MUST_CACHE);
      long used = w.store().usedBytes();
      assertThat(used).isEqualTo(4 * BLOCK);
      long created = w.shortCircuit().tempBlocksCreated();

      assertThatThrownBy(() -> write(client, "/must", data(BLOCK, 21), WriteType.MUST_CACHE))
          .isInstanceOf(ResourceExhaustedException.class)
          .hasMessageContaining("Tier MEM").hasMessageContaining("is full")
          .hasMessageContaining("bytes of blocks of files not yet persisted");
      assertThat(w.shortCircuit().tempBlocksCreated() - created).isEqualTo(1); // refused by a grant mid-block
      assertThat(client.exists("/must")).isFalse();
      await().atMost(Duration.ofSeconds(10)).until(() -> tempFiles(dir) == 0);
      assertThat(w.store().usedBytes()).isEqualTo(used);

      byte[] through = data(2 * BLOCK + 5, 22);
      write(client, "/cache-through", through, WriteType.CACHE_THROUGH);
      // Blocks 0 and 1 ran out of room mid-block and were dropped; the 5-byte block 2 fit and is cached.
      assertThat(client.getBlockLocations("/cache-through")).extracting(b -> b.locations().isEmpty())
          .containsExactly(true, true, false);
      assertThat(w.store().usedBytes()).isEqualTo(used + 5);
      assertThat(readAll(client, "/cache-through")).isEqualTo(through);
      assertThat(Files.readAllBytes(c.rootUfsDir().resolve("cache-through"))).isEqualTo(through);

      byte[] async = data(2 * BLOCK + 6, 23);
      write(client, "/async", async, WriteType.ASYNC_THROUGH);
      assertThat(client.getStatus("/async").isPersisted()).isTrue();
      assertThat(Files.readAllBytes(c.rootUfsDir().resolve("async"))).isEqualTo(async);
      assertThat(readAll(client, "/async")).isEqualTo(async);

      assertThat(readAll(client, "/fill")).isEqualTo(fill);
      assertThat(w.dataService().streamedWriteBytes()).isZero();
      assertThat(tempFiles(dir)).isZero();
      assertThat(w.shortCircuit().writesNow()).isZero();
    }
  }

  /**
   * The client runs in a private mount namespace where a tmpfs hides the worker's tier dir (root ignores
   * permissions, so an untraversable dir would prove nothing here): by descriptor it writes short-circuit;
   * by path it cannot open the temp file, falls back to streaming (ASYNC_THROUGH: its reservation made
   * again) and says why.
   */
  @Test
  void clientThatCannotSeeTheTierDir_writesByDescriptor_andPathModeFallsBack() throws Exception {
    int length = 2 * BLOCK + 7;
    byte[] expected = data(length, 30);
    String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(expected));
    long committed = worker().shortCircuit().bytesCommitted();
    long streamed = worker().dataService().streamedWriteBytes();

    String fd = HiddenTierDir.run(tierDir, ShortCircuitWriteMain.class, Integer.toString(cluster.masterPort()),
        "/sc/hidden-fd", "fd", tierDir.toString(), Integer.toString(length), "30", "MUST_CACHE");
    assertThat(fd).contains("sha256=" + sha, "length=" + length, "writes=3", "hidden=0", "fallbacks=[]");
    assertThat(readAll(fs, "/sc/hidden-fd")).isEqualTo(expected);
    assertThat(worker().shortCircuit().bytesCommitted() - committed).isEqualTo(length);
    assertThat(worker().dataService().streamedWriteBytes() - streamed).isZero();

    String path = HiddenTierDir.run(tierDir, ShortCircuitWriteMain.class, Integer.toString(cluster.masterPort()),
        "/sc/hidden-path", "path", tierDir.toString(), Integer.toString(length), "30", "ASYNC_THROUGH");
    assertThat(path).contains("sha256=" + sha, "length=" + length, "writes=0", "hidden=0",
        "path mode cannot open temp block", "by path " + tierDir, "NoSuchFileException",
        "writing through its data port");
    // ASYNC_THROUGH: each block's whole reservation, taken by the short-circuit attempt and given back by
    // its abort, was made again for the stream.
    assertThat(readAll(fs, "/sc/hidden-path")).isEqualTo(expected);
    assertThat(fs.getBlockLocations("/sc/hidden-path")).hasSize(3)
        .allSatisfy(b -> assertThat(b.locations()).isNotEmpty());
    assertThat(worker().dataService().streamedWriteBytes() - streamed).isEqualTo(length);
    assertThat(tempFiles(tierDir)).isZero();
  }

}
