package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.DeadlineExceededException;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.net.WorkerAddress;
import io.strata.minicluster.FreePorts;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.CacheBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.worker.WorkerKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Worker-to-worker copies (a cache request's, a persist's) take no byte they cannot verify, on a real cluster of
 * two workers: worker 0 as usual, worker 1 registered at 127.0.0.3 and bound at 127.0.0.2 behind a
 * {@link WorkerProxy}, which can make its ReadBlock answers what no worker of this version sends (chunks without
 * their checksums, with a byte changed; a chunk at a wrong offset). Such a copy is refused as a protocol error
 * and taken from the next source (the under file system for a cache request, a later attempt for a persist), the
 * sender's copy is not reported corrupt (it stays listed), and what the cache and the under file system end up
 * holding is the written bytes. A peer whose own checksums are gone answers DATA_LOSS: its copy is reported,
 * dropped, and the block cached from the under file system.
 */
class PeerCopyChecksumIntegrationTest {
  private static final int BLOCK = 1 << 20;
  private static final int C = ChunkChecksums.CHUNK_BYTES;
  private static final String PROXIED_HOST = "127.0.0.3";

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;
  private static WorkerProxy proxy;
  /** Streams every read (no short-circuit, no transfer port: worker 1's is not behind the proxy). */
  private static FileSystem client;

  @BeforeAll
  static void start() throws Exception {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.user.file.passive.cache.enabled", "false")
        .set("strata.master.persist.retry.interval.min", "100ms")
        .set("strata.master.persist.retry.interval.max", "300ms")
        .build().start();
    int port = FreePorts.loopback();
    proxy = new WorkerProxy(PROXIED_HOST, port, "127.0.0.2");
    cluster.addWorker(Map.of(WorkerKeys.RPC_PORT.name(), Integer.toString(port),
        WorkerKeys.BIND_HOST.name(), "127.0.0.2", WorkerKeys.HOSTNAME.name(), PROXIED_HOST));
    cluster.waitForWorkers(2, 30_000);
    client = client(Map.of());
  }

  private static FileSystem client(Map<String, String> extra) {
    Map<String, String> c = new HashMap<>(cluster.clientConf().explicitValues());
    c.put("strata.user.shortcircuit.mode", "off");
    c.put("strata.user.network.transfer.enabled", "false");
    c.putAll(extra);
    return FileSystem.create(StrataConf.of(c));
  }

  @AfterAll
  static void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (proxy != null) {
      proxy.close();
    }
  }

  @AfterEach
  void untamper() {
    proxy.tamper(null);
  }

  /** Writes {@code path} with every block on worker {@code onWorker} (1: the proxied one) or round robin (-1). */
  private static byte[] write(String path, int length, WriteType type, int onWorker) throws IOException {
    byte[] data = new byte[length];
    new Random(path.hashCode()).nextBytes(data);
    Map<String, String> policy = onWorker < 0 ? Map.of("strata.user.block.write.location.policy", "ROUND_ROBIN")
        : Map.of("strata.user.block.write.location.policy", "SPECIFIC_HOST",
            "strata.user.block.location.policy.host", onWorker == 1 ? PROXIED_HOST : "localhost");
    try (FileSystem w = client(policy); FileOutStream out = w.createFile(path, CreateFileOptions.defaults()
        .withBlockSize(BLOCK).withWriteType(type))) {
      out.write(data);
    }
    return data;
  }

  private static byte[] readAll(String path) throws IOException {
    try (FileInStream in = client.openFile(path)) {
      return in.readAllBytes();
    }
  }

  private static int indexOf(WorkerAddress a) {
    return a.host().equals(PROXIED_HOST) ? 1 : 0;
  }

  private static List<Integer> holders(String path, int block) throws IOException {
    return client.getBlockLocations(path).get(block).locations().stream().map(l -> indexOf(l.address())).toList();
  }

  /** How many of the file's blocks worker i holds. */
  private static int held(String path, int worker) throws IOException {
    int n = 0;
    for (int i = 0; i < client.getBlockLocations(path).size(); i++) {
      n += holders(path, i).contains(worker) ? 1 : 0;
    }
    return n;
  }

  /** The block's file on worker i, or null. */
  private static Path blockFile(int worker, long blockId) {
    Path p = cluster.baseDir().resolve("worker-" + worker).resolve("blocks").resolve(Long.toString(blockId));
    return Files.exists(p) ? p : null;
  }

  /** Asks worker {@code to} to cache block {@code blockId} (from a peer the master names, else the UFS). */
  private static void cacheOn(int to, long blockId) {
    String host = to == 1 ? "127.0.0.2" : "127.0.0.1";
    ManagedChannel ch = GrpcChannels.forAddress(host, cluster.worker(to).rpcPort(), 8 << 20);
    try {
      assertThat(BlockWorkerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS)
          .cacheBlock(CacheBlockRequest.newBuilder().setBlockId(blockId).build()).getAccepted()).isTrue();
    } finally {
      GrpcChannels.close(ch);
    }
  }

  private static ByteString flipped(ByteString chunk, int at) {
    byte[] b = chunk.toByteArray();
    b[at] ^= (byte) 0xff;
    return ByteString.copyFrom(b);
  }

  /** A worker that sends its chunks without checksums, and with a byte changed in each. */
  private static ReadBlockResponse noChecksumsAndABadByte(ReadBlockResponse r) {
    return r.toBuilder().clearChunkCrc32C().clearOffset().setChunk(flipped(r.getChunk(), 100)).build();
  }

  @Test
  void cacheRequest_fromAPeerSendingNoChecksums_isRefused_andTheBlockIsCachedFromTheUfs() throws Exception {
    String path = "/peer/no-checksums";
    byte[] data = write(path, BLOCK + BLOCK / 2, WriteType.CACHE_THROUGH, 1);
    FileBlockInfo b0 = client.getBlockLocations(path).get(0);
    assertThat(holders(path, 0)).containsExactly(1);
    long ufsReads = cluster.worker(0).ufsBlockReads();
    int tampered = proxy.tampered();
    proxy.tamper(PeerCopyChecksumIntegrationTest::noChecksumsAndABadByte);

    cacheOn(0, b0.blockId());

    await().atMost(Duration.ofSeconds(20)).until(() -> holders(path, 0).size() == 2);
    assertThat(proxy.tampered()).as("worker 0 read worker 1's answer without checksums").isGreaterThan(tampered);
    assertThat(cluster.worker(0).ufsBlockReads()).as("then loaded the block from the UFS").isGreaterThan(ufsReads);
    assertThat(Files.readAllBytes(blockFile(0, b0.blockId()))).isEqualTo(Arrays.copyOf(data, BLOCK));
    // Worker 1's copy was not reported corrupt: still listed and on its disk, beats later.
    await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
        .until(() -> holders(path, 0).contains(1) && blockFile(1, b0.blockId()) != null);
    proxy.tamper(null);
    assertThat(readAll(path)).isEqualTo(data);
  }

  @Test
  void cacheRequest_fromAPeerSendingAChunkAtTheWrongOffset_isAProtocolError_andItsGoodCopyIsNotDropped()
      throws Exception {
    String path = "/peer/wrong-offset";
    byte[] data = write(path, BLOCK, WriteType.CACHE_THROUGH, 1);
    FileBlockInfo b0 = client.getBlockLocations(path).get(0);
    long ufsReads = cluster.worker(0).ufsBlockReads();
    int tampered = proxy.tampered();
    // Checksums and bytes as stored; only the offset is off by a chunk (before, the copying worker took that for a
    // corrupt chunk 0 and reported the copy, and the master dropped this good one: the file is persisted).
    proxy.tamper(r -> r.toBuilder().setOffset(r.getOffset() + C).build());

    cacheOn(0, b0.blockId());

    await().atMost(Duration.ofSeconds(20)).until(() -> holders(path, 0).contains(0));
    assertThat(proxy.tampered()).isGreaterThan(tampered);
    assertThat(cluster.worker(0).ufsBlockReads()).isGreaterThan(ufsReads);
    assertThat(Files.readAllBytes(blockFile(0, b0.blockId()))).isEqualTo(data);
    await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
        .until(() -> holders(path, 0).equals(List.of(0, 1)) || holders(path, 0).equals(List.of(1, 0)));
    assertThat(blockFile(1, b0.blockId())).isNotNull();
  }

  /**
   * The persist goes to the worker holding most of the file's blocks (worker 0, after copies), which reads the
   * block only worker 1 holds from it. Without checksums (and with a changed byte) every attempt fails and
   * nothing reaches the under file system; once worker 1 answers as it should, the next attempt persists the
   * written bytes.
   */
  @Test
  void persist_readingAPeerSendingNoChecksums_failsUntilItSendsThem_andTheUfsCopyIsExact() throws Exception {
    String path = "/peer/persist";
    byte[] data = write(path, 5 * BLOCK, WriteType.MUST_CACHE, -1);
    List<FileBlockInfo> blocks = client.getBlockLocations(path);
    List<Integer> onlyOn1 = new ArrayList<>();
    for (int i = 0; i < blocks.size(); i++) {
      if (!holders(path, i).contains(0)) {
        onlyOn1.add(i);
      }
    }
    // Copies to worker 0 (through the proxy, untouched) until it holds most blocks; at least one stays on 1 only.
    while (held(path, 0) <= held(path, 1) && onlyOn1.size() > 1) {
      int i = onlyOn1.remove(0);
      cacheOn(0, blocks.get(i).blockId());
      await().atMost(Duration.ofSeconds(20)).until(() -> holders(path, i).contains(0));
    }
    int on0 = held(path, 0);
    int held1 = held(path, 1);
    assertThat(on0).as("worker 0 holds most blocks, so the persist goes there").isGreaterThan(held1);
    assertThat(onlyOn1).isNotEmpty();
    proxy.tamper(PeerCopyChecksumIntegrationTest::noChecksumsAndABadByte);
    Path ufsCopy = cluster.rootUfsDir().resolve("peer").resolve("persist");

    int tampered = proxy.tampered();
    assertThatThrownBy(() -> client.persist(path, Duration.ofSeconds(3)))
        .isInstanceOf(DeadlineExceededException.class);
    assertThat(proxy.tampered()).as("attempts read worker 1's answer without checksums").isGreaterThan(tampered);
    assertThat(Files.exists(ufsCopy)).isFalse();
    assertThat(holders(path, onlyOn1.get(0))).containsExactly(1); // not reported corrupt

    proxy.tamper(null);
    assertThat(client.persist(path, Duration.ofSeconds(30)).isPersisted()).isTrue();
    assertThat(Files.readAllBytes(ufsCopy)).isEqualTo(data);
    assertThat(readAll(path)).isEqualTo(data);
  }

  /**
   * A peer whose checksums are gone (its sidecar deleted after the commit) cannot vouch for its bytes: it answers
   * DATA_LOSS, the copying worker reports its copy, the master drops it (the file is persisted), and the block is
   * cached from the under file system.
   */
  @Test
  void cacheRequest_fromAPeerWhoseChecksumsAreGone_reportsIt_andCachesTheUfsCopy() throws Exception {
    String path = "/peer/no-sidecar";
    byte[] data = write(path, BLOCK / 2 + 7, WriteType.CACHE_THROUGH, 0);
    FileBlockInfo b0 = client.getBlockLocations(path).get(0);
    assertThat(holders(path, 0)).containsExactly(0);
    Path file = blockFile(0, b0.blockId());
    Files.delete(file.resolveSibling(file.getFileName() + ".crc"));

    cacheOn(1, b0.blockId());

    await().atMost(Duration.ofSeconds(20)).until(() -> holders(path, 0).equals(List.of(1)));
    await().atMost(Duration.ofSeconds(20)).until(() -> blockFile(0, b0.blockId()) == null);
    assertThat(Files.readAllBytes(blockFile(1, b0.blockId()))).isEqualTo(data);
    assertThat(readAll(path)).isEqualTo(data);
  }
}
