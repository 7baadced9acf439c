package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.strata.client.BlockLocation;
import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.CacheBlockRequest;
import io.strata.proto.WriteBlockHeader;
import io.strata.proto.WriteBlockRequest;
import io.strata.worker.WorkerProcess;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
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
 * End-to-end checksums on a real cluster of two workers (each a small MEM tier over an HDD tier): a byte
 * flipped in a block file on disk is caught by streaming and by short-circuit reads, which read on
 * byte-exact from another copy or the under file system while the master drops the corrupt copy and its
 * worker deletes it; the only copy of a file not persisted is kept and its read fails with DATA_LOSS; a
 * chunk corrupted on the way in is refused; and the checksum sidecar follows a block down a tier and
 * through a worker restart.
 */
class ChecksumIntegrationTest {
  private static final int BLOCK = 1 << 20;
  private static final int C = ChunkChecksums.CHUNK_BYTES;

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;
  /** Short-circuit (descriptor) reads, verified: the default client. */
  private static FileSystem scClient;
  /** Streaming reads only. */
  private static FileSystem streamClient;
  /** Short-circuit reads of the block file's channel, not its mapping. */
  private static FileSystem channelClient;

  @BeforeAll
  static void start() throws IOException {
    Path base = tmp.resolve("cluster");
    cluster = LocalStrataCluster.builder().workers(2).baseDir(base)
        .set("strata.user.shortcircuit.read.mmap", "true") // map where allowed, without measuring (not auto)
        .set("strata.worker.tier.0.alias", "MEM")
        .set("strata.worker.tier.0.dirs", base.resolve("mem-${strata.worker.rpc.port}").toString())
        .set("strata.worker.tier.0.quota", "3MB")
        .set("strata.worker.tier.1.alias", "HDD")
        .set("strata.worker.tier.1.dirs", base.resolve("hdd-${strata.worker.rpc.port}").toString())
        .set("strata.worker.tier.1.quota", "64MB")
        .set("strata.user.file.passive.cache.enabled", "false")
        .build().start();
    scClient = cluster.client();
    streamClient = client("strata.user.shortcircuit.mode", "off");
    channelClient = client("strata.user.shortcircuit.read.mmap", "false");
  }

  private static FileSystem client(String key, String value) {
    Map<String, String> c = new HashMap<>(cluster.clientConf().explicitValues());
    c.put(key, value);
    return FileSystem.create(StrataConf.of(c));
  }

  @AfterAll
  static void stop() throws IOException {
    if (streamClient != null) {
      streamClient.close();
    }
    if (channelClient != null) {
      channelClient.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private static FileSystem reader(String mode) {
    return switch (mode) {
      case "fd" -> scClient;
      case "fd-channel" -> channelClient;
      default -> streamClient;
    };
  }

  private static byte[] write(String path, int length, WriteType type) throws IOException {
    byte[] data = new byte[length];
    new Random(path.hashCode()).nextBytes(data);
    try (FileOutStream out = scClient.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(type))) {
      out.write(data);
    }
    return data;
  }

  private static byte[] readAll(FileSystem fs, String path) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }

  private static int indexOf(WorkerAddress a) {
    for (int i = 0; i < cluster.workers().size(); i++) {
      if (cluster.worker(i).rpcPort() == a.rpcPort()) {
        return i;
      }
    }
    throw new AssertionError("no worker at " + a);
  }

  private static List<Integer> holders(String path, int block) throws IOException {
    return scClient.getBlockLocations(path).get(block).locations().stream()
        .map(l -> indexOf(l.address())).toList();
  }

  /** The block's file on worker i (in any tier), or null. */
  private static Path blockFile(int worker, long blockId) throws IOException {
    int port = cluster.worker(worker).rpcPort();
    for (String tier : List.of("mem-", "hdd-")) {
      Path p = cluster.baseDir().resolve(tier + port).resolve("blocks").resolve(Long.toString(blockId));
      if (Files.exists(p)) {
        return p;
      }
    }
    return null;
  }

  /** The checksums in a block file's sidecar (layout in ChecksumSidecar: 24-byte header, then one int each). */
  private static int[] sidecarOf(Path blockFile) throws IOException {
    byte[] all = Files.readAllBytes(blockFile.resolveSibling(blockFile.getFileName() + ".crc"));
    java.nio.ByteBuffer buf = java.nio.ByteBuffer.wrap(all);
    int n = buf.getInt(20);
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      out[i] = buf.getInt(24 + 4 * i);
    }
    return out;
  }

  /** Flips every bit of one byte of a file on disk, as a failing disk or a stray write would. */
  private static void flipByte(Path file, long offset) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(offset);
      int b = f.read();
      f.seek(offset);
      f.write(b ^ 0xff);
    }
  }

  /** A second copy of the block on the other worker, cached from the first (CacheBlock: a peer copy). */
  private static void copyToOtherWorker(String path, int block, int from) throws IOException {
    int to = 1 - from;
    long id = scClient.getBlockLocations(path).get(block).blockId();
    WorkerProcess w = cluster.worker(to);
    ManagedChannel ch = GrpcChannels.forAddress("localhost", w.rpcPort(), 8 << 20);
    try {
      assertThat(BlockWorkerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS)
          .cacheBlock(CacheBlockRequest.newBuilder().setBlockId(id).build()).getAccepted()).isTrue();
    } finally {
      GrpcChannels.close(ch);
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> holders(path, block).size() == 2);
  }

  /** Block 0 of {@code path}, copied to the other worker too (both hold it once this returns). */
  private static FileBlockInfo firstBlockOnBothWorkers(String path) throws IOException {
    FileBlockInfo b0 = scClient.getBlockLocations(path).get(0);
    copyToOtherWorker(path, 0, indexOf(b0.locations().get(0).address()));
    return b0;
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"fd", "fd-channel", "off"})
  void corruptCopy_isReadFromTheOtherWorker_andDroppedByTheMaster(String mode) throws IOException {
    String path = "/crc/other-copy-" + mode;
    byte[] data = write(path, 2 * BLOCK + 12345, WriteType.MUST_CACHE);
    FileBlockInfo b0 = firstBlockOnBothWorkers(path);
    // The reader tries the first listed copy first (every worker is on this node): corrupt that one.
    int bad = holders(path, 0).get(0);
    int good = 1 - bad;
    Path file = blockFile(bad, b0.blockId());
    flipByte(file, 5L * C + 123);

    // The bytes are held by the other worker's copy (cached from this one before the flip).
    assertThat(readAll(reader(mode), path)).isEqualTo(data);

    await().atMost(Duration.ofSeconds(20)).until(() -> holders(path, 0).equals(List.of(good)));
    await().atMost(Duration.ofSeconds(20)).until(() -> blockFile(bad, b0.blockId()) == null
        && !Files.exists(file.resolveSibling(b0.blockId() + ".crc")));
    assertThat(readAll(reader(mode), path)).isEqualTo(data);
  }

  /**
   * A copy the master still listed when the stream opened, whose worker no longer holds the block (removed
   * since, as after a drop or an eviction): opening it fails with NOT_FOUND, and the stream reads on from the
   * other copy, byte-exact, on every read path. The bytes are held by the other worker's copy.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"fd", "fd-channel", "off"})
  void copyRemovedAfterTheStreamOpened_isSkipped_andTheOtherCopyIsRead(String mode) throws IOException {
    String path = "/crc/gone-" + mode;
    byte[] data = write(path, 2 * BLOCK + 999, WriteType.MUST_CACHE);
    FileBlockInfo b0 = firstBlockOnBothWorkers(path);
    try (FileInStream in = reader(mode).openFile(path)) {
      List<Integer> listed = holders(path, 0);
      assertThat(listed).hasSize(2);
      assertThat(cluster.worker(listed.get(0)).store().remove(b0.blockId())).isTrue();
      assertThat(in.readAllBytes()).isEqualTo(data);
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"fd", "fd-channel", "off"})
  void corruptCopy_ofAPersistedFile_isReadFromTheUfs_atTheSamePosition(String mode) throws IOException {
    String path = "/crc/persisted-" + mode;
    byte[] data = write(path, 3 * BLOCK + 777, WriteType.CACHE_THROUGH);
    assertThat(scClient.getStatus(path).isPersisted()).isTrue();
    FileBlockInfo b1 = scClient.getBlockLocations(path).get(1);
    assertThat(b1.locations()).hasSize(1);
    int bad = indexOf(b1.locations().get(0).address());
    flipByte(blockFile(bad, b1.blockId()), BLOCK - 1); // the block's very last byte

    // An unaligned positioned read across the corrupt chunk and on into block 2, then the whole file
    // sequentially: the bytes are held by the under file system copy (written through at create).
    byte[] part = new byte[3 * C];
    try (FileInStream in = reader(mode).openFile(path)) {
      in.readFully(2L * BLOCK - C - 99, part, 0, part.length);
      assertThat(part).isEqualTo(java.util.Arrays.copyOfRange(data, 2 * BLOCK - C - 99, 2 * BLOCK + 2 * C - 99));
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> !holders(path, 1).contains(bad));
    await().atMost(Duration.ofSeconds(20)).until(() -> blockFile(bad, b1.blockId()) == null);
    assertThat(readAll(reader(mode), path)).isEqualTo(data);
  }

  @Test
  void corruptOnlyCopy_ofAFileNotPersisted_failsWithDataLoss_andIsKept() throws IOException {
    String path = "/crc/only-copy";
    write(path, BLOCK / 2, WriteType.MUST_CACHE);
    FileBlockInfo b0 = scClient.getBlockLocations(path).get(0);
    int holder = indexOf(b0.locations().get(0).address());
    Path file = blockFile(holder, b0.blockId());
    flipByte(file, 3);

    // Nothing holds the good bytes of chunk 0 any more: the read says so instead of returning them wrong.
    for (FileSystem fs : List.of(scClient, streamClient)) {
      assertThatThrownBy(() -> readAll(fs, path)).isInstanceOf(DataLossException.class)
          .hasMessageContaining("Block " + b0.blockId()).hasMessageContaining("corrupt at offset 0")
          .hasMessageContaining("not in the under file system");
    }
    // The copy is kept (its other chunks are all that is left) and still listed: in some tier (the 3 MB MEM
    // tier may have moved it down to HDD meanwhile, with the other tests' blocks).
    assertThat(holders(path, 0)).containsExactly(holder);
    assertThat(blockFile(holder, b0.blockId())).isNotNull();
  }

  /**
   * {@code strata.user.shortcircuit.checksum.verify=false} trusts the local file: a short-circuit read returns the
   * block file's bytes as they are on disk, flipped byte included, and reports nothing (the copy stays listed),
   * while a streaming read of the same copy still checks it and fails with DATA_LOSS.
   */
  @ParameterizedTest(name = "mmap={0}")
  @ValueSource(strings = {"true", "false"})
  void shortCircuitVerifyOff_readsTheFileAsItIs_whileStreamingStillChecks(String mmap) throws IOException {
    String path = "/crc/unverified-" + mmap;
    byte[] data = write(path, BLOCK / 2 + 77, WriteType.MUST_CACHE);
    FileBlockInfo b0 = scClient.getBlockLocations(path).get(0);
    int holder = indexOf(b0.locations().get(0).address());
    flipByte(blockFile(holder, b0.blockId()), 2L * C + 5);
    byte[] onDisk = data.clone();
    onDisk[2 * C + 5] ^= (byte) 0xff;

    Map<String, String> c = new HashMap<>(cluster.clientConf().explicitValues());
    c.put("strata.user.shortcircuit.checksum.verify", "false");
    c.put("strata.user.shortcircuit.read.mmap", mmap);
    try (FileSystem unverified = FileSystem.create(StrataConf.of(c))) {
      assertThat(readAll(unverified, path)).isEqualTo(onDisk);
    }
    assertThat(holders(path, 0)).containsExactly(holder);
    assertThatThrownBy(() -> readAll(streamClient, path)).isInstanceOf(DataLossException.class)
        .hasMessageContaining("Block " + b0.blockId());
  }

  @Test
  void chunkCorruptedOnTheWayIn_isRefusedWithDataLoss_andNothingIsCommitted() throws Exception {
    WorkerProcess w = cluster.worker(0);
    long blockId = BlockId.of(987_654, 0);
    byte[] data = new byte[C + 10];
    new Random(3).nextBytes(data);
    int[] sums = ChunkChecksums.of(java.nio.ByteBuffer.wrap(data));
    data[C + 4] ^= 1; // the second chunk changes after its checksum was taken
    ManagedChannel ch = GrpcChannels.forAddress("localhost", w.rpcPort(), 8 << 20);
    try {
      StrataException e = BadInputIntegrationTest.rawWriteError(ch, blockId,
          WriteBlockRequest.newBuilder().setHeader(WriteBlockHeader.newBuilder().setBlockId(blockId)
              .setMaxLength(BLOCK).setBytesPerChecksum(C)).setChunk(ByteString.copyFrom(data))
              .addChunkCrc32C(sums[0]).build(),
          WriteBlockRequest.newBuilder().addChunkCrc32C(sums[1]).build());
      assertThat(e).isInstanceOf(DataLossException.class).hasMessageContaining("Block " + blockId)
          .hasMessageContaining("checksum chunk 1").hasMessageContaining("nothing is committed");
    } finally {
      GrpcChannels.close(ch);
    }
    assertThatThrownBy(() -> w.store().get(blockId)).isInstanceOf(NotFoundException.class);
    int port = w.rpcPort();
    for (String tier : List.of("mem-", "hdd-")) {
      Path dir = cluster.baseDir().resolve(tier + port);
      try (Stream<Path> files = Stream.concat(Files.list(dir.resolve("tmp")), Files.list(dir.resolve("blocks")))) {
        assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith(blockId + ""));
      }
    }
  }

  /**
   * The persist scheduler sends a file's persist to the worker holding most of its blocks: with that
   * worker's copy of block 0 corrupt, every attempt went there and failed. The worker now reports the
   * copy, the master drops it, and the next attempt persists the good copy (from the other worker).
   */
  @Test
  void corruptCopy_foundByAPersist_isReportedAndDropped_andTheGoodCopyIsPersisted() throws IOException {
    String path = "/crc/persist-corrupt";
    byte[] data = new byte[3 * BLOCK];
    new Random(11).nextBytes(data);
    try (FileSystem rr = client("strata.user.block.write.location.policy", "ROUND_ROBIN");
        FileOutStream out = rr.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
            .withWriteType(WriteType.MUST_CACHE))) {
      out.write(data);
    }
    FileBlockInfo b0 = scClient.getBlockLocations(path).get(0);
    int bad = indexOf(b0.locations().get(0).address());
    // `bad` gets every block, the other worker blocks 0 and 1 only: the persist goes to `bad`.
    for (int i = 1; i < 3; i++) {
      if (!holders(path, i).contains(bad)) {
        copyToOtherWorker(path, i, 1 - bad);
      }
    }
    copyToOtherWorker(path, 0, bad);
    int badHolds = 0;
    int goodHolds = 0;
    for (int i = 0; i < 3; i++) {
      badHolds += holders(path, i).contains(bad) ? 1 : 0;
      goodHolds += holders(path, i).contains(1 - bad) ? 1 : 0;
    }
    assertThat(badHolds).as("blocks on the worker with the corrupt copy").isEqualTo(3);
    assertThat(goodHolds).as("blocks on the other worker (round robin put one there)").isEqualTo(2);
    flipByte(blockFile(bad, b0.blockId()), 77);

    URIStatus done = scClient.persist(path, Duration.ofSeconds(30));

    assertThat(done.isPersisted()).isTrue();
    assertThat(Files.readAllBytes(cluster.rootUfsDir().resolve("crc").resolve("persist-corrupt"))).isEqualTo(data);
    assertThat(holders(path, 0)).containsExactly(1 - bad);
    await().atMost(Duration.ofSeconds(20)).until(() -> blockFile(bad, b0.blockId()) == null);
  }

  /** A worker caching a block from a peer whose copy is corrupt reports it, then loads the block from the UFS. */
  @Test
  void corruptPeerCopy_foundByACacheRequest_isReportedAndDropped_andTheUfsCopyIsCached() throws IOException {
    String path = "/crc/peer-corrupt";
    byte[] data = write(path, BLOCK / 2, WriteType.CACHE_THROUGH);
    FileBlockInfo b0 = scClient.getBlockLocations(path).get(0);
    int bad = indexOf(b0.locations().get(0).address());
    flipByte(blockFile(bad, b0.blockId()), 1000);
    WorkerProcess other = cluster.worker(1 - bad);
    ManagedChannel ch = GrpcChannels.forAddress("localhost", other.rpcPort(), 8 << 20);
    try {
      assertThat(BlockWorkerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS)
          .cacheBlock(CacheBlockRequest.newBuilder().setBlockId(b0.blockId()).build()).getAccepted()).isTrue();
    } finally {
      GrpcChannels.close(ch);
    }

    // Only the copy cached from the under file system is left: the corrupt one is no longer listed.
    await().atMost(Duration.ofSeconds(20)).until(() -> holders(path, 0).equals(List.of(1 - bad)));
    await().atMost(Duration.ofSeconds(20)).until(() -> blockFile(bad, b0.blockId()) == null);
    assertThat(readAll(streamClient, path)).isEqualTo(data);
  }

  /**
   * Short-circuit reads map only block files on a memory file system (tmpfs, ramfs), whatever their tier is
   * called: a disk's read error under a mapping would end the JVM. With every block of a file kept open by
   * positioned reads (read-locked, so none moves), a block is mapped in this JVM exactly when its file is on
   * such a file system. The tier called MEM here is a dir under the test's temp dir, so where that is a disk
   * (as /tmp is on ext4) its blocks are read by channel too: the tier's name never decides. All byte-exact.
   */
  @Test
  void shortCircuitReads_mapOnlyBlockFilesOnAMemoryFileSystem_whateverTheTierIsCalled() throws IOException {
    String path = "/crc/tiers";
    byte[] data = write(path, 8 * BLOCK, WriteType.MUST_CACHE); // 8 MiB over two 3 MB MEM tiers: some on HDD
    List<FileBlockInfo> blocks = scClient.getBlockLocations(path);
    byte[] buf = new byte[BLOCK];
    int mem = 0;
    int hdd = 0;
    int memOnDisk = 0;
    try (FileInStream in = scClient.openFile(path)) {
      for (FileBlockInfo b : blocks) {
        in.readFully(b.offset(), buf, 0, BLOCK);
        assertThat(buf).isEqualTo(java.util.Arrays.copyOfRange(data, (int) b.offset(), (int) b.offset() + BLOCK));
      }
      List<String> maps = Files.readAllLines(Path.of("/proc/self/maps"));
      for (FileBlockInfo b : blocks) {
        Path f = blockFile(indexOf(b.locations().get(0).address()), b.blockId());
        String name = f.toRealPath().toString();
        boolean mapped = maps.stream().anyMatch(l -> l.endsWith(" " + name));
        String fsType = Files.getFileStore(f).type();
        boolean onMemoryFs = fsType.equals("tmpfs") || fsType.equals("ramfs");
        assertThat(mapped).as("block file %s (on %s) mapped", f, fsType).isEqualTo(onMemoryFs);
        if (f.getParent().getParent().getFileName().toString().startsWith("mem-")) {
          mem++;
          memOnDisk += onMemoryFs ? 0 : 1;
        } else {
          hdd++;
        }
      }
    }
    // MEM may be full of the other tests' blocks here; ShortCircuitIntegrationTest sees tmpfs blocks mapped.
    assertThat(hdd).as("blocks on HDD (of %d; %d in MEM, %d of them on a disk)", blocks.size(), mem, memOnDisk)
        .isPositive();
  }

  @Test
  void sidecar_followsTheBlockDownATier_andThroughARestart_andStillCatchesCorruption() throws IOException {
    String path = "/crc/moved";
    // Eight 1 MiB blocks over two workers with 3 MB of MEM each: some go down to HDD.
    byte[] data = write(path, 8 * BLOCK, WriteType.MUST_CACHE);
    // A stopped worker moves nothing, so its dirs can be looked at without racing tier alignment.
    FileBlockInfo moved = null;
    int holder = -1;
    for (int w = 0; w < 2 && moved == null; w++) {
      cluster.stopWorker(w);
      for (FileBlockInfo b : scClient.getBlockLocations(path)) {
        Path f = blockFile(w, b.blockId());
        if (f != null && f.getParent().getParent().getFileName().toString().startsWith("hdd-")) {
          moved = b;
          holder = w;
          break;
        }
      }
      if (moved == null) {
        cluster.restartWorker(w);
      }
    }
    assertThat(moved).as("a block evicted down to HDD").isNotNull();
    Path file = blockFile(holder, moved.blockId());
    Path memSidecar = cluster.baseDir().resolve("mem-" + cluster.worker(holder).rpcPort())
        .resolve("blocks").resolve(moved.blockId() + ".crc");
    assertThat(memSidecar).doesNotExist();
    assertThat(sidecarOf(file)).isEqualTo(ChunkChecksums.of(java.nio.ByteBuffer.wrap(data,
        BlockId.index(moved.blockId()) * BLOCK, BLOCK)));

    cluster.restartWorker(holder);
    cluster.waitForWorkers(2, 30_000);
    int movedIndex = BlockId.index(moved.blockId());
    await().atMost(Duration.ofSeconds(20)).until(() -> holders(path, movedIndex).size() == 1);

    // The restarted worker found the sidecar: both read paths verify and read byte-exact ...
    assertThat(readAll(scClient, path)).isEqualTo(data);
    assertThat(readAll(streamClient, path)).isEqualTo(data);
    // ... and a flip in the moved block (wherever the restarted worker keeps it now: tier alignment may
    // have moved it up again, sidecar and all) is caught by its checksums (the only copy: DATA_LOSS).
    Path now = blockFile(holder, moved.blockId());
    assertThat(now.resolveSibling(moved.blockId() + ".crc")).exists();
    flipByte(now, 7L * C);
    assertThatThrownBy(() -> readAll(streamClient, path)).isInstanceOf(DataLossException.class)
        .hasMessageContaining("corrupt at offset " + 7L * C);
  }
}
