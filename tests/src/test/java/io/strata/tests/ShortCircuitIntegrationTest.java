package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.shortcircuit.ShortCircuitClient;
import io.strata.client.ClientKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.NotFoundException;
import io.strata.common.net.WorkerAddress;
import io.strata.client.options.CreateFileOptions;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.proto.OpenBlockProto;
import io.strata.proto.ShortCircuitRequest;
import io.strata.proto.ShortCircuitResponse;
import io.strata.worker.WorkerProcess;
import io.strata.worker.shortcircuit.ShortCircuitServer;
import io.strata.worker.store.TieredBlockStore;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Short-circuit reads over the worker's domain socket, on one real worker: byte-exact reads that never
 * touch the gRPC data path, the read lock an open block holds (released by close and by a dead
 * connection), bad input on the socket, fallbacks with their reasons, and a client in a private mount
 * namespace that cannot see the worker's dir at all.
 */
class ShortCircuitIntegrationTest {
  private static final int BLOCK = 1 << 20;

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;
  private static FileSystem fs;
  private static Path tierDir;

  @BeforeAll
  static void start() throws IOException {
    // On a memory file system: only its block files are read through a mapping (the mapping tests here). The
    // client maps without measuring first (true, not the default auto): which way is faster is the machine's
    // affair, and the mapping tests must map; auto has a test of its own.
    tierDir = Files.createTempDirectory(Path.of("/dev/shm"), "strata-sc-test-");
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.user.shortcircuit.read.mmap", "true")
        .set("strata.worker.tier.0.dirs", tierDir.toString())
        .set("strata.worker.tier.0.quota", "64MB").build().start();
    fs = cluster.client();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
    if (tierDir != null) {
      LocalStrataCluster.deleteRecursively(tierDir);
    }
  }

  private static WorkerProcess worker() {
    return cluster.worker(0);
  }

  private static ShortCircuitServer server() {
    return worker().shortCircuit();
  }

  private static long storeReads() {
    long[] r = ((TieredBlockStore) worker().tieredStore()).readsByTier();
    long sum = 0;
    for (long v : r) {
      sum += v;
    }
    return sum;
  }

  private static byte[] write(String path, int length, long seed) throws IOException {
    byte[] data = new byte[length];
    new Random(seed).nextBytes(data);
    // MUST_CACHE: an ASYNC_THROUGH persist reads the blocks from the store too, in the background, and the
    // tests count the store's reads.
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(io.strata.client.options.WriteType.MUST_CACHE))) {
      out.write(data);
    }
    return data;
  }

  private static byte[] readAll(FileSystem client, String path) throws IOException {
    try (FileInStream in = client.openFile(path)) {
      return in.readAllBytes();
    }
  }

  private static long firstBlock(String path) throws IOException {
    List<FileBlockInfo> blocks = fs.getBlockLocations(path);
    return blocks.get(0).blockId();
  }

  @Test
  void read_isByteExactAndNeverUsesTheGrpcDataPath() throws IOException {
    byte[] data = write("/sc/exact", 3 * BLOCK + 12345, 1);
    long opens = server().opens();
    long fds = server().descriptorsSent();
    long reads = storeReads();

    assertThat(readAll(fs, "/sc/exact")).isEqualTo(data);
    byte[] part = new byte[BLOCK];
    try (FileInStream in = fs.openFile("/sc/exact")) {
      in.readFully(BLOCK / 2, part, 0, part.length); // spans blocks 0 and 1
    }
    assertThat(part).isEqualTo(java.util.Arrays.copyOfRange(data, BLOCK / 2, BLOCK / 2 + BLOCK));

    // 4 blocks read whole, then 2 by the positioned read: every store open was a short-circuit open,
    // so the gRPC read path opened nothing. The last block (12,345 bytes) came in its open's answer.
    assertThat(server().opens() - opens).isEqualTo(6);
    assertThat(server().descriptorsSent() - fds).isEqualTo(5);
    assertThat(storeReads() - reads).isEqualTo(6);
    await().atMost(Duration.ofSeconds(10)).until(() -> server().openNow() == 0);
  }

  /**
   * A block of at most strata.user.shortcircuit.read.inline.max bytes (32 KiB by default) comes in the answer to
   * its open: no descriptor is passed and nothing stays open at the worker; whole and positioned reads are
   * byte-exact. Its bytes are checked against the stored checksums like any short-circuit read: a corrupt copy
   * is caught, reported and read from the UFS instead, and the worker removes it. With the key 0, the same
   * block is opened and passed by descriptor.
   */
  @Test
  void smallBlock_comesInItsOpensAnswer_nothingStaysOpen_andACorruptCopyIsCaught() throws IOException {
    String path = "/sc/small";
    byte[] data = new byte[20_000];
    new Random(41).nextBytes(data);
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(io.strata.client.options.WriteType.CACHE_THROUGH))) {
      out.write(data);
    }
    long opens = server().opens();
    long inlined = server().inlined();
    long fds = server().descriptorsSent();
    try (FileSystem client = FileSystem.create(cluster.clientConf()); FileInStream in = client.openFile(path)) {
      assertThat(in.readAllBytes()).isEqualTo(data);
      byte[] part = new byte[5000];
      in.readFully(777, part, 0, part.length);
      assertThat(part).isEqualTo(java.util.Arrays.copyOfRange(data, 777, 777 + 5000));
      assertThat(in.shortCircuit().inlined()).isEqualTo(in.shortCircuit().opens()).isPositive();
      assertThat(server().openNow()).isZero(); // while the stream is still open
    }
    assertThat(server().inlined() - inlined).isPositive().isEqualTo(server().opens() - opens);
    assertThat(server().descriptorsSent() - fds).isZero();

    StrataConf noInline = cluster.clientConf().withAll(Map.of(ClientKeys.SHORT_CIRCUIT_READ_INLINE_MAX.name(), "0"));
    inlined = server().inlined();
    fds = server().descriptorsSent();
    try (FileSystem client = FileSystem.create(noInline)) {
      assertThat(readAll(client, path)).isEqualTo(data);
    }
    assertThat(server().inlined() - inlined).isZero();
    assertThat(server().descriptorsSent() - fds).isEqualTo(1);

    Path file = tierDir.resolve("blocks").resolve(Long.toString(firstBlock(path)));
    try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(new byte[] {(byte) (data[12_345] ^ 0x21)}), 12_345);
    }
    inlined = server().inlined();
    try (FileSystem client = FileSystem.create(cluster.clientConf())) {
      assertThat(readAll(client, path)).isEqualTo(data); // caught, and read from the UFS through the worker
    }
    assertThat(server().inlined() - inlined).isEqualTo(1);
    // The corrupt copy is no longer listed, and the worker removes it (its next heartbeat).
    assertThat(fs.getBlockLocations(path).get(0).locations()).isEmpty();
    await().atMost(Duration.ofSeconds(20)).until(() -> !Files.exists(file));
  }

  /** The lines of this JVM's memory map that map the file {@code p}. */
  private static List<String> mappingsOf(Path p) throws IOException {
    String name = p.toRealPath().toString();
    return Files.readAllLines(Path.of("/proc/self/maps")).stream().filter(l -> l.endsWith(" " + name)).toList();
  }

  /**
   * strata.user.shortcircuit.read.mmap=true: a short-circuit read maps the block file (seen in this
   * JVM's /proc/self/maps), reads byte-exact through the mapping for whole, cut and unaligned ranges, and
   * closing the stream unmaps it at once (the bytes stay held by the worker's block file, which is still
   * listed). With the key off the same reads are byte-exact and map nothing.
   */
  @Test
  void mappedReads_areByteExact_andClosingTheStreamUnmapsTheBlockFile() throws IOException {
    byte[] data = write("/sc/mapped", 2 * BLOCK + 4321, 8);
    Path file = tierDir.resolve("blocks").resolve(Long.toString(firstBlock("/sc/mapped")));
    assertThat(file).exists();
    assertThat(mappingsOf(file)).isEmpty();

    byte[] part = new byte[70_000]; // more than one 64 KiB chunk, starting inside one
    try (FileInStream in = fs.openFile("/sc/mapped")) {
      in.readFully(12_345, part, 0, part.length);
      assertThat(part).isEqualTo(java.util.Arrays.copyOfRange(data, 12_345, 12_345 + part.length));
      assertThat(mappingsOf(file)).hasSize(1);
      byte[] all = in.readAllBytes();
      assertThat(all).isEqualTo(data);
    }
    assertThat(mappingsOf(file)).isEmpty();
    assertThat(file).exists(); // closing released the mapping only: the worker still holds the block

    Map<String, String> c = new java.util.HashMap<>(cluster.clientConf().explicitValues());
    c.put("strata.user.shortcircuit.read.mmap", "false");
    long opens = server().opens();
    try (FileSystem channelFs = FileSystem.create(StrataConf.of(c)); FileInStream in = channelFs.openFile("/sc/mapped")) {
      in.readFully(12_345, part, 0, part.length);
      assertThat(part).isEqualTo(java.util.Arrays.copyOfRange(data, 12_345, 12_345 + part.length));
      assertThat(in.readAllBytes()).isEqualTo(data);
      assertThat(mappingsOf(file)).isEmpty();
    }
    assertThat(server().opens() - opens).as("both reads were short-circuit").isGreaterThanOrEqualTo(3);
  }

  /**
   * strata.user.shortcircuit.read.mmap=auto (the default): a block under 1 MiB on a memory file system is read by
   * channel without a measurement; the first block of 1 MiB or more is measured both ways, once per client (a
   * copy of its first MiB from a new mapping against a channel read of it), and every block after that is read
   * the way that was faster: with every block of a file kept open by positioned reads, each block file is mapped
   * in this JVM exactly when the finding says mapped. Byte-exact either way.
   */
  @Test
  void autoMappedReads_measureOnceOnAFullSizeBlock_thenReadEveryBlockTheWayThatWon() throws IOException {
    byte[] small = write("/sc/auto-small", 100_000, 41);
    byte[] first = write("/sc/auto-first", BLOCK, 42);
    byte[] data = write("/sc/auto", 3 * BLOCK, 43);
    try (FileSystem auto = FileSystem.create(cluster.clientConf().withAll(
        Map.of("strata.user.shortcircuit.read.mmap", "auto")))) {
      io.strata.client.shortcircuit.MappedReads choice;
      try (FileInStream in = auto.openFile("/sc/auto-small")) {
        assertThat(in.readAllBytes()).isEqualTo(small);
        choice = in.shortCircuit().mappedReads();
      }
      assertThat(choice.finding()).startsWith("undecided: ");
      assertThat(readAll(auto, "/sc/auto-first")).isEqualTo(first);
      String finding = choice.finding();
      assertThat(finding).matches("(mapped|channel): copying 1024 KiB from a new mapping took [0-9.]+ ms, reading "
          + "them by channel [0-9.]+ ms");
      boolean mapped = finding.startsWith("mapped");
      List<FileBlockInfo> blocks = auto.getBlockLocations("/sc/auto");
      byte[] buf = new byte[BLOCK];
      try (FileInStream in = auto.openFile("/sc/auto")) {
        for (FileBlockInfo b : blocks) {
          in.readFully(b.offset(), buf, 0, BLOCK);
          assertThat(buf).isEqualTo(java.util.Arrays.copyOfRange(data, (int) b.offset(), (int) b.offset() + BLOCK));
        }
        for (FileBlockInfo b : blocks) {
          Path file = tierDir.resolve("blocks").resolve(Long.toString(b.blockId()));
          assertThat(mappingsOf(file)).as("block %d mapped (%s)", b.blockId(), finding).hasSize(mapped ? 1 : 0);
        }
      }
      assertThat(choice.probes()).as("measured once").isEqualTo(1);
      assertThat(choice.finding()).isEqualTo(finding);
    }
  }

  /**
   * The block a sequential read opens ahead has its chunks' checksums checked by the open-ahead thread while
   * the reader is still on the block before (16 chunks of 64 KiB per 1 MiB block), so the reader only copies
   * them. A corrupt chunk stops that pass there: the reader checks it itself and catches the corruption, and
   * the one worker, whose copy it is, reads the under file system copy (CACHE_THROUGH) for it instead
   * ({@code ufs_only}): the read is byte-exact. The master has the worker remove the corrupt copy; its reads
   * of that copy do not list it again, and the next read caches the block afresh from the UFS.
   */
  @Test
  void blockOpenedAhead_isVerifiedInTheBackground_andACorruptChunkIsStillCaughtByTheReader() throws IOException {
    String path = "/sc/ahead-verified";
    byte[] data = new byte[3 * BLOCK];
    new Random(31).nextBytes(data);
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(io.strata.client.options.WriteType.CACHE_THROUGH))) {
      out.write(data);
    }
    List<FileBlockInfo> blocks = fs.getBlockLocations(path);
    // A client of its own per read: its counter sees only that read's background passes.
    try (FileSystem client = FileSystem.create(cluster.clientConf()); FileInStream in = client.openFile(path)) {
      ShortCircuitClient sc = in.shortCircuit();
      assertThat(in.read()).isEqualTo(data[0] & 0xff);
      // The reader is on block 0: block 1, opened ahead, is checked whole meanwhile.
      await().atMost(Duration.ofSeconds(10)).until(() -> sc.chunksVerifiedAhead() == 16);
      assertThat(in.readAllBytes()).isEqualTo(java.util.Arrays.copyOfRange(data, 1, data.length));
    }

    // Chunk 5 of block 1 corrupt in the worker's block file (tmpfs): the background pass matches chunks 0-4 only.
    long corruptId = blocks.get(1).blockId();
    Path second = tierDir.resolve("blocks").resolve(Long.toString(corruptId));
    int at = 5 * 65536 + 7;
    try (var ch = java.nio.channels.FileChannel.open(second, java.nio.file.StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(new byte[] {(byte) (data[BLOCK + at] ^ 0x5a)}), at);
    }
    try (FileSystem client = FileSystem.create(cluster.clientConf()); FileInStream in = client.openFile(path)) {
      ShortCircuitClient sc = in.shortCircuit();
      assertThat(in.read()).isEqualTo(data[0] & 0xff);
      await().atMost(Duration.ofSeconds(10)).until(() -> sc.chunksVerifiedAhead() == 5);
      // Caught, and read from the UFS through the same worker, which does not serve its own copy.
      assertThat(in.readAllBytes()).isEqualTo(java.util.Arrays.copyOfRange(data, 1, data.length));
    }
    // Until its removal, the corrupt copy is what the worker holds: the master lists no copy of it.
    assertThat(fs.getBlockLocations(path).get(1).locations()).isEmpty();
    // The worker removes it (its next heartbeat); the ufs_only read cached nothing in its place.
    await().atMost(Duration.ofSeconds(20)).until(() -> !Files.exists(second));
    assertThat(readAll(fs, path)).isEqualTo(data);
    // Read unlisted, so cached afresh from the UFS: the new copy is whole and listed.
    await().atMost(Duration.ofSeconds(20)).until(() -> !fs.getBlockLocations(path).get(1).locations().isEmpty());
    assertThat(Files.readAllBytes(second)).isEqualTo(java.util.Arrays.copyOfRange(data, BLOCK, 2 * BLOCK));
  }

  /**
   * The block a sequential read opens ahead is mapped (and faulted in) in the background before the reader
   * gets to it; the read is byte-exact, and closing the stream unmaps every block it mapped.
   */
  @Test
  void blockOpenedAhead_isMappedBeforeTheReaderReachesIt_andUnmappedAtClose() throws IOException {
    byte[] data = write("/sc/ahead-mapped", 3 * BLOCK, 9);
    List<FileBlockInfo> blocks = fs.getBlockLocations("/sc/ahead-mapped");
    Path second = tierDir.resolve("blocks").resolve(Long.toString(blocks.get(1).blockId()));
    try (FileInStream in = fs.openFile("/sc/ahead-mapped")) {
      assertThat(in.read()).isEqualTo(data[0] & 0xff);
      await().atMost(Duration.ofSeconds(10)).until(() -> mappingsOf(second).size() == 1);
      byte[] rest = in.readAllBytes();
      assertThat(rest).isEqualTo(java.util.Arrays.copyOfRange(data, 1, data.length));
    }
    for (FileBlockInfo b : blocks) {
      assertThat(mappingsOf(tierDir.resolve("blocks").resolve(Long.toString(b.blockId())))).isEmpty();
    }
  }

  /**
   * A stream dropped without close (its reader and the block it opened ahead hold read locks at the worker, which keep
   * those blocks from eviction and removal) lets them go once the collector finds it unreachable; before, they were
   * held until the client process ended.
   */
  @Test
  void aStreamDroppedUnclosed_letsGoOfItsBlocks_onceCollected() throws Exception {
    byte[] data = write("/sc/dropped", 3 * BLOCK + 7, 12);
    await().atMost(Duration.ofSeconds(10)).until(() -> server().openNow() == 0);
    readSomeAndDrop("/sc/dropped", data);
    assertThat(server().openNow()).as("held by the dropped stream").isPositive();
    await().atMost(Duration.ofSeconds(30)).until(() -> {
      System.gc();
      return server().openNow() == 0;
    });
  }

  /** Opens {@code path}, reads 100 bytes and returns without closing the stream, which is then unreachable. */
  private static void readSomeAndDrop(String path, byte[] data) throws IOException {
    FileInStream in = fs.openFile(path);
    byte[] b = new byte[100];
    in.readNBytes(b, 0, b.length);
    assertThat(b).isEqualTo(java.util.Arrays.copyOf(data, 100));
  }

  /**
   * A sequential short-circuit read opens the next block in the background while it reads the current one
   * (strata.user.shortcircuit.open.ahead): the read is byte-exact with each block opened once, a stream
   * closed mid-file releases the block opened ahead too, and with the key off nothing is opened ahead.
   */
  @Test
  void sequentialRead_opensTheNextBlockAhead_andCloseReleasesIt() throws Exception {
    byte[] data = write("/sc/ahead", 3 * BLOCK + 7, 11);
    await().atMost(Duration.ofSeconds(10)).until(() -> server().openNow() == 0);
    long opens = server().opens();
    assertThat(readAll(fs, "/sc/ahead")).isEqualTo(data);
    assertThat(server().opens() - opens).as("each of the 4 blocks opened once").isEqualTo(4);
    await().atMost(Duration.ofSeconds(10)).until(() -> server().openNow() == 0);

    long before = server().opens();
    try (FileInStream in = fs.openFile("/sc/ahead")) {
      byte[] b = new byte[100];
      in.readNBytes(b, 0, b.length);
      assertThat(b).isEqualTo(java.util.Arrays.copyOf(data, 100));
      // block 0 is read, block 1 opened ahead
      await().atMost(Duration.ofSeconds(10)).until(() -> server().opens() - before == 2);
      assertThat(server().openNow()).isEqualTo(2);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> server().openNow() == 0);

    long off = server().opens();
    try (FileSystem noAhead = FileSystem.create(cluster.clientConf().withAll(java.util.Map.of(
        "strata.user.shortcircuit.open.ahead", "false")));
        FileInStream in = noAhead.openFile("/sc/ahead")) {
      in.readNBytes(new byte[100], 0, 100);
      assertThat(server().opens() - off).isEqualTo(1);
      assertThat(server().openNow()).isEqualTo(1);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> server().openNow() == 0);
  }

  /**
   * Positioned reads keep the blocks they read open: many of them in one block open it once, a second block
   * is kept beside it, past the limit (here 2) the least recently read is released, and closing the
   * stream releases the rest.
   */
  @Test
  void positionedReads_keepTheirBlocksOpen_upToTheLimit_andCloseReleasesThem() throws IOException {
    byte[] data = write("/sc/pread", 3 * BLOCK, 8);
    int before = server().openNow();
    long opens = server().opens();
    java.util.Random random = new java.util.Random(3);
    try (FileSystem two = FileSystem.create(cluster.clientConf().withAll(java.util.Map.of(
        "strata.user.shortcircuit.pread.blocks.kept", "2")));
        FileInStream in = two.openFile("/sc/pread")) {
      byte[] got = new byte[1000];
      for (int i = 0; i < 20; i++) {
        int at = random.nextInt(2 * BLOCK - got.length); // blocks 0 and 1, in any order
        in.readFully(at, got, 0, got.length);
        assertThat(got).isEqualTo(java.util.Arrays.copyOfRange(data, at, at + got.length));
      }
      assertThat(server().opens() - opens).isEqualTo(2);
      assertThat(server().openNow() - before).isEqualTo(2);

      in.readFully(0, got, 0, got.length); // block 0 read last: block 1 is the least recent
      in.readFully(2 * BLOCK + 5, got, 0, got.length); // block 2: block 1 is released
      assertThat(got).isEqualTo(java.util.Arrays.copyOfRange(data, 2 * BLOCK + 5, 2 * BLOCK + 5 + got.length));
      assertThat(server().opens() - opens).isEqualTo(3);
      await().atMost(Duration.ofSeconds(10)).until(() -> server().openNow() - before == 2);
      in.readFully(10, got, 0, got.length); // block 0 still kept: no open
      assertThat(server().opens() - opens).isEqualTo(3);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> server().openNow() == before);
  }

  @Test
  void socketFile_admitsOnlyTheWorkersUserAndGroup() throws IOException {
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(server().socketPath())))
        .isEqualTo("rw-rw----");
    assertThat(server().socketPath().toString()).contains(Integer.toString(worker().rpcPort()));
  }

  @Test
  void openBlock_isNotRemoved_untilTheClientClosesIt() throws Exception {
    write("/sc/held", BLOCK, 2);
    long blockId = firstBlock("/sc/held");
    FileInStream in = fs.openFile("/sc/held");
    assertThat(in.read()).isGreaterThanOrEqualTo(0); // the block is open short-circuit now
    assertThat(server().openNow()).isEqualTo(1);

    assertThat(worker().store().remove(blockId)).isTrue(); // deferred: a reader holds it
    assertThat(worker().store().get(blockId).length()).isEqualTo(BLOCK);
    byte[] rest = new byte[BLOCK - 1];
    int n = 0;
    while (n < rest.length) {
      n += in.read(rest, n, rest.length - n);
    }
    in.close();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThatThrownBy(() -> worker().store().get(blockId)).isInstanceOf(NotFoundException.class));
    assertThat(server().openNow()).isZero();
  }

  @Test
  void twoStreamsOnOneBlock_eachHoldItsOwnOpen_andEachCloseReleasesOne() throws Exception {
    byte[] data = write("/sc/twice", BLOCK, 7);
    int before = server().openNow();
    try (FileInStream a = fs.openFile("/sc/twice"); FileInStream b = fs.openFile("/sc/twice")) {
      assertThat(a.read()).isEqualTo(data[0] & 0xff);
      assertThat(b.read()).isEqualTo(data[0] & 0xff);
      assertThat(server().openNow() - before).isEqualTo(2);
      a.close();
      await().atMost(Duration.ofSeconds(10)).until(() -> server().openNow() - before == 1);
      byte[] rest = new byte[BLOCK - 1];
      b.readFully(1, rest, 0, rest.length); // a positioned read opens a third time, kept for more of them
      assertThat(rest).isEqualTo(java.util.Arrays.copyOfRange(data, 1, BLOCK));
      assertThat(server().openNow() - before).isEqualTo(2);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> server().openNow() == before);
  }

  @Test
  void openBlock_isReleased_whenTheConnectionDies() throws Exception {
    write("/sc/dies", BLOCK, 3);
    long blockId = firstBlock("/sc/dies");
    ShortCircuitClient client = new ShortCircuitClient(ShortCircuitClient.Mode.FD,
        "/tmp/strata-worker-${strata.worker.rpc.port}.sock", 10_000);
    ShortCircuitClient.OpenBlock open = client.open(new WorkerAddress("localhost", worker().rpcPort()), blockId, false);
    assertThat(open).isNotNull();
    ByteBuffer first = ByteBuffer.allocate(16);
    assertThat(open.channel().read(first, 0)).isEqualTo(16);
    assertThat(worker().store().remove(blockId)).isTrue();
    assertThat(worker().store().get(blockId).length()).isEqualTo(BLOCK);

    client.close(); // the connection ends without a CloseBlock
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThatThrownBy(() -> worker().store().get(blockId)).isInstanceOf(NotFoundException.class));
    assertThat(server().openNow()).isZero();
  }

  /** Sends raw bytes on a fresh connection and returns the one response, or null when none came. */
  private static ShortCircuitResponse raw(byte[] bytes) throws IOException {
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(server().socketPath()));
      ch.write(ByteBuffer.wrap(bytes));
      ByteBuffer len = ByteBuffer.allocate(4);
      while (len.hasRemaining()) {
        if (ch.read(len) < 0) {
          return null;
        }
      }
      ByteBuffer body = ByteBuffer.allocate(len.flip().getInt());
      while (body.hasRemaining()) {
        if (ch.read(body) < 0) {
          throw new IOException("short response");
        }
      }
      ShortCircuitResponse r = ShortCircuitResponse.parseFrom(body.flip());
      if (!r.getErrorCode().equals("NOT_FOUND")) {
        assertThat(ch.read(ByteBuffer.allocate(1))).as("closed after a bad request").isEqualTo(-1);
      }
      return r;
    }
  }

  private static byte[] framed(byte[] body) {
    return ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).array();
  }

  /** Sends one framed request on {@code ch} and reads its one response. */
  private static ShortCircuitResponse exchange(SocketChannel ch, ShortCircuitRequest req) throws IOException {
    ch.write(ByteBuffer.wrap(framed(req.toByteArray())));
    ByteBuffer len = ByteBuffer.allocate(4);
    while (len.hasRemaining()) {
      if (ch.read(len) < 0) {
        throw new IOException("the worker closed the connection");
      }
    }
    ByteBuffer body = ByteBuffer.allocate(len.flip().getInt());
    while (body.hasRemaining()) {
      if (ch.read(body) < 0) {
        throw new IOException("short response");
      }
    }
    return ShortCircuitResponse.parseFrom(body.flip());
  }

  @Test
  void oneConnection_mayHoldSixtyFourOpenBlocks_oneMoreIsRefused_andAClosedOneMakesRoom() throws IOException {
    write("/sc/many-opens", BLOCK / 4, 9);
    long blockId = fs.getBlockLocations("/sc/many-opens").get(0).blockId();
    ShortCircuitRequest open = ShortCircuitRequest.newBuilder()
        .setOpen(OpenBlockProto.newBuilder().setBlockId(blockId)).build();
    int before = server().openNow();
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(server().socketPath()));
      for (int i = 0; i < 64; i++) {
        assertThat(exchange(ch, open).getErrorCode()).as("open %d", i).isEmpty();
      }
      ShortCircuitResponse refused = exchange(ch, open);
      assertThat(refused.getErrorCode()).isEqualTo("RESOURCE_EXHAUSTED");
      assertThat(refused.getErrorMessage()).contains("64 blocks are open on this short-circuit connection");
      assertThat(server().openNow() - before).isEqualTo(64);
      assertThat(exchange(ch, ShortCircuitRequest.newBuilder().setClose(
          io.strata.proto.CloseBlockProto.newBuilder().setBlockId(blockId)).build()).getErrorCode()).isEmpty();
      assertThat(exchange(ch, open).getErrorCode()).as("room again after a close").isEmpty();
    }
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .until(() -> server().openNow() == before);
    assertThat(readAll(fs, "/sc/many-opens")).hasSize(BLOCK / 4);
  }

  /**
   * The protocol is lockstep: a client that asks for descriptors without taking them (2,000 SEND_FD requests
   * in one write, nothing read) is disconnected instead of making the worker queue an open file per request
   * without bound; the block it held is released, and this JVM (the worker's) is left holding no more open
   * descriptors than before, give or take a few.
   */
  @Test
  void clientThatDoesNotTakeItsDescriptors_isDisconnected_andLeavesNoFilesOpen() throws Exception {
    write("/sc/not-taking", BLOCK / 4, 12);
    long blockId = firstBlock("/sc/not-taking");
    int before = server().openNow();
    long errors = server().errors();
    long fdsBefore = openDescriptors();
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(server().socketPath()));
      assertThat(exchange(ch, ShortCircuitRequest.newBuilder()
          .setOpen(OpenBlockProto.newBuilder().setBlockId(blockId)).build()).getErrorCode()).isEmpty();
      byte[] one = framed(ShortCircuitRequest.newBuilder().setSendFd(io.strata.proto.SendFdProto.newBuilder()
          .setBlockId(blockId)).build().toByteArray());
      ByteBuffer many = ByteBuffer.allocate(one.length * 2000);
      for (int i = 0; i < 2000; i++) {
        many.put(one);
      }
      many.flip();
      long[] peak = {fdsBefore};
      java.util.concurrent.atomic.AtomicBoolean sampling = new java.util.concurrent.atomic.AtomicBoolean(true);
      Thread sampler = new Thread(() -> {
        while (sampling.get()) {
          try {
            peak[0] = Math.max(peak[0], openDescriptors());
          } catch (IOException e) {
            return;
          }
        }
      });
      sampler.start();
      try {
        while (many.hasRemaining()) {
          ch.write(many);
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> server().openNow() == before);
      } finally {
        sampling.set(false);
        sampler.join();
      }
      assertThat(peak[0] - fdsBefore).as("descriptors open at most while the worker took the requests")
          .isLessThan(100);
      assertThat(server().errors() - errors).as("the cut-off is counted as an error").isPositive();
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> openDescriptors() <= fdsBefore + 20);
    assertThat(readAll(fs, "/sc/not-taking")).hasSize(BLOCK / 4);
  }

  private static long openDescriptors() throws IOException {
    try (var s = Files.list(Path.of("/proc/self/fd"))) {
      return s.count();
    }
  }

  @Test
  void badInput_getsAClearError_andTheWorkerGoesOn() throws IOException {
    long before = server().errors();
    ShortCircuitResponse unknown = raw(framed(ShortCircuitRequest.newBuilder()
        .setOpen(OpenBlockProto.newBuilder().setBlockId(987654321L)).build().toByteArray()));
    assertThat(unknown.getErrorCode()).isEqualTo("NOT_FOUND");
    assertThat(unknown.getErrorMessage()).contains("987654321");

    ShortCircuitResponse garbage = raw(framed(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01, 0x02}));
    assertThat(garbage.getErrorCode()).isEqualTo("INVALID_ARGUMENT");
    assertThat(garbage.getErrorMessage()).contains("not a valid ShortCircuitRequest");

    ShortCircuitResponse empty = raw(framed(new byte[0]));
    assertThat(empty.getErrorCode()).isEqualTo("INVALID_ARGUMENT");
    assertThat(empty.getErrorMessage()).contains("names no operation");

    ShortCircuitResponse huge = raw(new byte[] {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2, 3});
    assertThat(huge.getErrorCode()).isEqualTo("INVALID_ARGUMENT");
    assertThat(huge.getErrorMessage()).contains("longer than 65536 bytes");
    assertThat(server().errors() - before).isEqualTo(4);

    byte[] data = write("/sc/after-bad-input", BLOCK / 2, 4);
    assertThat(readAll(fs, "/sc/after-bad-input")).isEqualTo(data);
  }

  @Test
  void noSocket_fallsBackToStreaming_withTheReasonLogged() throws IOException {
    byte[] data = write("/sc/nosocket", 2 * BLOCK, 5);
    StrataConf conf = cluster.clientConf().withAll(Map.of("strata.user.shortcircuit.domain.socket.path",
        tmp.resolve("absent-${strata.worker.rpc.port}.sock").toString()));
    long opens = server().opens();
    long reads = storeReads();
    try (FileSystem other = FileSystem.create(conf); FileInStream in = other.openFile("/sc/nosocket")) {
      assertThat(in.readAllBytes()).isEqualTo(data);
      assertThat(in.shortCircuit().opens()).isZero();
      assertThat(in.shortCircuit().fallbackReasons()).hasSize(2).allSatisfy(r -> assertThat(r)
          .contains("cannot connect to " + tmp.resolve("absent-" + worker().rpcPort() + ".sock"))
          .contains("reading through its data port"));
    }
    assertThat(server().opens()).isEqualTo(opens);
    assertThat(storeReads() - reads).isEqualTo(2); // both through the gRPC read path
  }

  /**
   * The client runs in a private mount namespace where a tmpfs hides the worker's tier dir (root ignores
   * permissions, so an untraversable dir would prove nothing here): by descriptor it reads short-circuit;
   * by path it cannot open the file, falls back to streaming and says why. The 7-byte last block comes in its
   * open's answer (inline), which needs neither a path nor a descriptor: short-circuit in both modes.
   */
  @Test
  void clientThatCannotSeeTheTierDir_readsByDescriptor_andPathModeFallsBack() throws Exception {
    byte[] data = write("/sc/hidden", 2 * BLOCK + 7, 6);
    String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    assertThat(tierDir.toFile().list()).isNotEmpty();

    String fd = runHidden("fd");
    assertThat(fd).contains("sha256=" + sha, "length=" + data.length, "opens=3", "hidden=0", "fallbacks=[]");

    String path = runHidden("path");
    assertThat(path).contains("sha256=" + sha, "length=" + data.length, "opens=1", "hidden=0",
        "path mode cannot open block", "by path " + tierDir, "NoSuchFileException", "reading through its data port");
  }

  private static String runHidden(String mode) throws Exception {
    return HiddenTierDir.run(tierDir, ShortCircuitReadMain.class, Integer.toString(cluster.masterPort()), "/sc/hidden",
        mode, tierDir.toString());
  }
}
