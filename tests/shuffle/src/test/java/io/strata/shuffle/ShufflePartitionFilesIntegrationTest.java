package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.StatusRuntimeException;
import io.strata.client.FileBlockInfo;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.MountOptions;
import io.strata.common.shuffle.BatchHeader;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.proto.PushBatchProto;
import io.strata.proto.PushRequest;
import io.strata.proto.PushResponse;
import io.strata.proto.ShuffleWorkerServiceGrpc;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The worker side of the shuffle on a real cluster of three workers (the driver-side
 * {@link ShuffleLifecycle}, the executor-side {@link PushClient} and {@link PartitionReader}, no Spark):
 * pushed batches land in partition files replicated to a second worker; the seal makes each a complete,
 * persisted Strata file under /.shuffle/&lt;app&gt;/&lt;shuffle&gt;/ with every acknowledged batch; batches
 * of a failed attempt and duplicates are skipped by readers; a shared UFS leaves one cached copy; a
 * primary lost before the seal is sealed from its replica; bad input gets clear errors.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShufflePartitionFilesIntegrationTest {
  private static final String IDLE_TIMEOUT = "1s";
  private static PushRig rig;
  private static LocalStrataCluster cluster;
  private static FileSystem fs;
  private static ShuffleChannels channels;
  private static ShuffleLifecycle lifecycle;
  private static ScheduledExecutorService retries;

  @BeforeAll
  static void start() throws Exception {
    // A short temp-block timeout and a quick reaper: a partition idle past it must keep its blocks.
    rig = new PushRig(LocalStrataCluster.builder().workers(3).set("strata.worker.shuffle.batch.size.max", "1MB")
        .set("strata.worker.temp.block.timeout", IDLE_TIMEOUT).set("strata.worker.tier.manager.interval", "50ms")
        .build().start(), 1);
    cluster = rig.cluster;
    fs = rig.fs;
    channels = rig.channels;
    lifecycle = rig.lifecycle;
    retries = rig.retries;
  }

  @AfterAll
  static void stop() {
    rig.close();
  }

  private static PushClient pusher(String app, int shuffle, List<PartitionLocation> locs) {
    return rig.pusher(app, shuffle, locs, 64 << 10);
  }

  /** Registers a shuffle of one partition and pushes {@code b} to it as map 0's attempt, acknowledged by both copies. */
  private static List<PartitionLocation> registerOneAndPush(String app, int shuffle, byte[] b, long attempt)
      throws Exception {
    List<PartitionLocation> locs = lifecycle.register(app, shuffle, 1);
    PushClient p = pusher(app, shuffle, locs);
    p.push(0, 0, attempt, b, 0, b.length);
    p.finish();
    return locs;
  }

  private static byte[] batch(int map, int partition, int i) {
    return ("map " + map + " partition " + partition + " batch " + i + " ").repeat(1 + i % 50)
        .getBytes(StandardCharsets.UTF_8);
  }

  private static List<String> read(List<String> files, Map<Integer, Long> attempts) throws Exception {
    List<String> out = new ArrayList<>();
    try (PartitionReader r = new PartitionReader(fs, files, attempts)) {
      r.forEachRemaining(b -> out.add(new String(b, StandardCharsets.UTF_8)));
    }
    return out;
  }

  private static List<String> expected(int maps, int partition, int batches) {
    return ConcurrentMaps.expected(maps, partition, batches, ShufflePartitionFilesIntegrationTest::batch);
  }

  @Test
  @Order(1)
  void seal_makesEachPartitionACompletePersistedFile_withEveryAcknowledgedBatch() throws Exception {
    List<PartitionLocation> locs = lifecycle.register("app-one", 0, 4);
    assertThat(locs).hasSize(4).allSatisfy(l -> assertThat(l.hasReplica()).isTrue());
    assertThat(locs).allSatisfy(l -> assertThat(l.primary()).isNotEqualTo(l.replica()));
    for (int m = 0; m < 3; m++) {
      PushClient p = pusher("app-one", 0, locs);
      for (int i = 0; i < 40; i++) {
        for (int part = 0; part < 4; part++) {
          byte[] b = batch(m, part, i);
          p.push(part, m, 100 + m, b, 0, b.length);
        }
      }
      p.finish();
    }
    SealedShuffle sealed = lifecycle.seal(0);
    assertThat(sealed.lost()).isEmpty();
    assertThat(sealed.files().keySet()).containsExactlyInAnyOrder(0, 1, 2, 3);
    assertThat(fs.listStatus("/.shuffle/app-one/0").stream().map(URIStatus::name))
        .containsExactlyInAnyOrder("0-0", "1-0", "2-0", "3-0");
    for (int part = 0; part < 4; part++) {
      List<String> files = sealed.files().get(part);
      assertThat(files).containsExactly("/.shuffle/app-one/0/" + part + "-0");
      URIStatus st = fs.getStatus(files.get(0));
      assertThat(st.complete()).isTrue();
      assertThat(st.persistenceState()).isEqualTo(URIStatus.PERSISTED);
      long want = 0;
      for (String s : expected(3, part, 40)) {
        want += BatchHeader.BYTES + s.getBytes(StandardCharsets.UTF_8).length;
      }
      assertThat(st.length()).isEqualTo(want);
      // A node-local UFS (the root mount is not shared): primary and replica both keep a copy.
      for (FileBlockInfo b : fs.getBlockLocations(files.get(0))) {
        assertThat(b.locations()).hasSize(2);
      }
      assertThat(read(files, Map.of(0, 100L, 1, 101L, 2, 102L))).containsExactlyInAnyOrderElementsOf(
          expected(3, part, 40));
      // The driver's status of the sealed file, which readers open it from without asking the master: its
      // blocks cover the whole file, on both copies, and reading from it gives the same batches.
      URIStatus given = sealed.statuses().get(files.get(0));
      assertThat(given).as("status of " + files.get(0)).isNotNull();
      assertThat(given.length()).isEqualTo(want);
      assertThat(given.blocks().stream().mapToLong(FileBlockInfo::length).sum()).isEqualTo(want);
      assertThat(given.blocks()).allSatisfy(b -> assertThat(b.locations()).hasSize(2));
      List<String> fromStatus = new ArrayList<>();
      try (PartitionReader r = new PartitionReader(fs, files, sealed.statuses(), Map.of(0, 100L, 1, 101L, 2, 102L))) {
        r.forEachRemaining(b -> fromStatus.add(new String(b, StandardCharsets.UTF_8)));
      }
      assertThat(fromStatus).containsExactlyInAnyOrderElementsOf(expected(3, part, 40));
    }
    // The UFS copy holds the same bytes.
    Path ufs = cluster.rootUfsDir().resolve(".shuffle/app-one/0/2-0");
    assertThat(Files.size(ufs)).isEqualTo(fs.getStatus("/.shuffle/app-one/0/2-0").length());
    // Sealing again changes nothing.
    assertThat(lifecycle.seal(0)).isEqualTo(sealed);
  }

  @Test
  @Order(2)
  void readers_skipBatchesOfFailedAttempts_andDuplicates() throws Exception {
    List<PartitionLocation> locs = lifecycle.register("app-one", 1, 2);
    PushClient failed = pusher("app-one", 1, locs);
    for (int i = 0; i < 20; i++) { // half its records, then the attempt "dies"
      byte[] b = batch(0, 0, i);
      failed.push(0, 0, 500, b, 0, b.length);
    }
    failed.finish();
    PushClient good = pusher("app-one", 1, locs);
    for (int i = 0; i < 40; i++) {
      byte[] b = batch(0, 0, i);
      good.push(0, 0, 501, b, 0, b.length, i == 39);
    }
    good.finish();
    // The same batch (map 0, attempt 501, its fourth) applied twice, as a retried push does.
    byte[] b = batch(0, 0, 3);
    PushRequest dup = PushRequest.newBuilder().setAppId("app-one").setShuffleId(1).addBatches(
        PushBatchProto.newBuilder().setPartitionId(0).setFileId(locs.get(0).fileId()).setMapIndex(0)
            .setAttemptId(501).setBatchId(BatchHeader.batchId(3, false)).setLength(b.length)
            .setCrc32C(BatchHeader.crc32c(b, 0, b.length)).setData(ByteString.copyFrom(b))).build();
    assertThat(stub(locs.get(0).primaryPort()).push(dup).getStatus()).isEqualTo(PushResponse.Status.OK);
    SealedShuffle sealed = lifecycle.seal(1);
    List<String> got = read(sealed.files().get(0), Map.of(0, 501L));
    assertThat(got).containsExactlyInAnyOrderElementsOf(expected(1, 0, 40));
    try (PartitionReader r = new PartitionReader(fs, sealed.files().get(0), Map.of(0, 501L))) {
      r.forEachRemaining(x -> { });
      assertThat(r.batchesSkipped()).isEqualTo(21); // 20 of attempt 500, one duplicate
      assertThat(r.missing(Set.of(0))).as("attempt 501's 40 batches, the last marked").isNull();
    }
    // The failed attempt's batches alone would be a partial map: they have no last batch.
    try (PartitionReader r = new PartitionReader(fs, sealed.files().get(0), Map.of(0, 500L))) {
      r.forEachRemaining(x -> { });
      assertThat(r.missing(Set.of(0))).contains("hold 20 batches of map 0 (attempt 500) but not that attempt's last");
    }
    assertThat(read(sealed.files().get(1), Map.of(0, 501L))).isEmpty();
  }

  /**
   * A reader knows whether it has every batch of a map: the last batch of each map attempt and partition is marked
   * and numbered ({@link BatchHeader#batchId}). Batches that never reached a file (pushed here straight to the
   * worker with numbers left out, as a lost batch would leave them) are named; a writer whose last batch went out
   * unmarked ends the partition with an empty marked batch, which readers count and do not return.
   */
  @Test
  @Order(2)
  void readers_tellAMapWithABatchMissing_fromOneWithAllItsBatches() throws Exception {
    List<PartitionLocation> locs = lifecycle.register("app-whole", 3, 1);
    PartitionLocation l = locs.get(0);
    var primary = stub(l.primaryPort());
    // Map 0 (attempt 10): its batches 0 and 2 (the last) arrive, 1 does not. Map 1 (attempt 11): only batch 0.
    int[][] pushed = {{0, 10, BatchHeader.batchId(0, false)}, {0, 10, BatchHeader.batchId(2, true)},
        {1, 11, BatchHeader.batchId(0, false)}};
    for (int[] x : pushed) {
      byte[] b = batch(x[0], 0, x[2]);
      PushRequest.Builder r = one("app-whole", 3, l, b, BatchHeader.crc32c(b, 0, b.length));
      r.setBatches(0, r.getBatches(0).toBuilder().setMapIndex(x[0]).setAttemptId(x[1]).setBatchId(x[2]));
      assertThat(primary.push(r.build()).getStatus()).isEqualTo(PushResponse.Status.OK);
    }
    // Map 2 (attempt 12) through the pusher: two batches, neither marked, then the end of its partitions.
    PushClient p = pusher("app-whole", 3, locs);
    for (int i = 0; i < 2; i++) {
      byte[] b = batch(2, 0, i);
      p.push(0, 2, 12, b, 0, b.length);
    }
    p.endPartitions(2, 12);
    p.endPartitions(2, 12); // nothing more: the partition has its last batch
    p.finish();
    assertThatThrownBy(() -> p.push(0, 2, 12, new byte[1], 0, 1)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already had map 2's last batch");
    List<String> files = lifecycle.seal(3).files().get(0);
    assertThat(fs.getStatus(files.get(0)).length()).as("six batches, one of them empty").isEqualTo(
        6L * BatchHeader.BYTES + batch(0, 0, 0).length + batch(0, 0, 5).length + batch(1, 0, 0).length
            + batch(2, 0, 0).length + batch(2, 0, 1).length);
    Map<Integer, Long> attempts = Map.of(0, 10L, 1, 11L, 2, 12L, 3, 13L);
    try (PartitionReader r = new PartitionReader(fs, files, attempts)) {
      List<String> got = new ArrayList<>();
      r.forEachRemaining(b -> got.add(new String(b, StandardCharsets.UTF_8)));
      assertThat(got).hasSize(5).doesNotContain("");
      assertThat(r.batchesKept()).isEqualTo(6); // and the end mark
      // Each map's own trouble, named (the maps are checked in order).
      assertThat(r.missing(Set.of(0))).contains("hold 2 distinct batches of map 0 (attempt 10), whose last "
          + "batch says it pushed 3");
    }
    try (PartitionReader r = new PartitionReader(fs, files, Map.of(1, 11L, 2, 12L, 3, 13L))) {
      r.forEachRemaining(b -> { });
      assertThat(r.missing(Set.of(2))).contains("hold 1 batches of map 1 (attempt 11) but not that attempt's last");
    }
    try (PartitionReader r = new PartitionReader(fs, files, Map.of(2, 12L, 3, 13L))) {
      r.forEachRemaining(b -> { });
      assertThat(r.missing(Set.of(2))).isNull();
      assertThat(r.missing(Set.of(2, 3))).contains("map 3 (attempt 13) reported bytes for it, but its sealed files "
          + "hold no batch of that attempt");
    }
  }

  private static ShuffleWorkerServiceGrpc.ShuffleWorkerServiceBlockingStub stub(int port) {
    return channels.blocking("localhost", port);
  }

  private static PushRequest.Builder one(String app, int shuffle, PartitionLocation l, byte[] data, int crc) {
    return PushRequest.newBuilder().setAppId(app).setShuffleId(shuffle).addBatches(PushBatchProto.newBuilder()
        .setPartitionId(l.partitionId()).setFileId(l.fileId()).setMapIndex(0).setAttemptId(1).setBatchId(0)
        .setLength(data.length).setCrc32C(crc).setData(ByteString.copyFrom(data)));
  }

  @Test
  @Order(3)
  void badInput_getsAClearError_andTheWorkerKeepsServing() throws Exception {
    List<PartitionLocation> locs = lifecycle.register("app-one", 2, 1);
    PartitionLocation l = locs.get(0);
    var worker = stub(l.primaryPort());
    byte[] data = "hello".getBytes(StandardCharsets.UTF_8);
    int crc = BatchHeader.crc32c(data, 0, data.length);
    assertThatThrownBy(() -> worker.push(one("app-one", 2, l, data, crc + 1).build()))
        .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("DATA_LOSS").hasMessageContaining("corrupt");
    assertThatThrownBy(() -> worker.push(one("app-one", 3, l, data, crc).build()))
        .hasMessageContaining("NOT_FOUND").hasMessageContaining("Unknown shuffle partition");
    assertThatThrownBy(() -> worker.push(one("../../etc", 2, l, data, crc).build()))
        .hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("Bad shuffle app id");
    byte[] big = new byte[(1 << 20) + 1];
    assertThatThrownBy(() -> worker.push(one("app-one", 2, l, big, BatchHeader.crc32c(big, 0, big.length)).build()))
        .hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("strata.worker.shuffle.batch.size.max");
    PushRequest.Builder lying = one("app-one", 2, l, data, crc);
    lying.setBatches(0, lying.getBatches(0).toBuilder().setLength(99));
    assertThatThrownBy(() -> worker.push(lying.build())).hasMessageContaining("INVALID_ARGUMENT")
        .hasMessageContaining("says it has 99 bytes");
    assertThatThrownBy(() -> lifecycle.register("../x", 0, 1)).hasMessageContaining("Bad shuffle app id");
    // A replica address that is no address is refused at open, before any batch is taken for it.
    assertThatThrownBy(() -> worker.openPartitions(io.strata.proto.OpenPartitionsRequest.newBuilder()
        .addPartitions(io.strata.proto.ShufflePartitionProto.newBuilder().setAppId("app-one").setShuffleId(2)
            .setPartitionId(7).setFileId(l.fileId() + 1000).setBlockSize(1 << 20).setReplicaHost("localhost")
            .setReplicaPort(70000)).build()))
        .hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("replica port 70000");
    // A seal names each file once (a repeated id would queue its seal again and again).
    assertThatThrownBy(() -> worker.seal(io.strata.proto.SealRequest.newBuilder().setAppId("app-one")
        .setShuffleId(2).addFileIds(l.fileId()).addFileIds(l.fileId()).build()))
        .hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("names each file id once");
    // A forward (as from a primary) may wait at its replica for the batches before it only within the worker's high
    // watermark of the copy's end, and never over a batch waiting there: else any client could park bytes there
    // without bound. Another shuffle's partition, since such a forward breaks the replica's copy.
    PartitionLocation f = lifecycle.register("app-one", 26, 1).get(0);
    var replica = stub(f.replicaPort());
    PushRequest.Builder farAhead = one("app-one", 26, f, data, crc).setForwarded(true);
    farAhead.setBatches(0, farAhead.getBatches(0).toBuilder().setOffset(1L << 40));
    assertThatThrownBy(() -> replica.push(farAhead.build())).hasMessageContaining("FAILED_PRECONDITION")
        .hasMessageContaining("bytes past its end").hasMessageContaining("strata.worker.shuffle.buffer.high.watermark");
    lifecycle.unregister(26);
    // Nothing bad was applied; a good push still is.
    assertThat(worker.push(one("app-one", 2, l, data, crc).build()).getStatus()).isEqualTo(PushResponse.Status.OK);
    SealedShuffle sealed = lifecycle.seal(2);
    assertThat(fs.getStatus(sealed.files().get(0).get(0)).length()).isEqualTo(BatchHeader.BYTES + data.length);
    // A sealed partition takes no more batches: FAILED_PRECONDITION, which makes writers revive.
    assertThatThrownBy(() -> worker.push(one("app-one", 2, l, data, crc).build()))
        .hasMessageContaining("FAILED_PRECONDITION").hasMessageContaining("sealed");
  }

  @Test
  @Order(4)
  void sharedUfs_leavesOnlyThePrimarysCachedCopy() throws Exception {
    Path dir = cluster.baseDir().resolve("shared-ufs");
    Files.createDirectories(dir);
    fs.mount("/.shuffle/app-shared", dir.toUri().toString(), MountOptions.defaults().withShared(true));
    List<PartitionLocation> locs = lifecycle.register("app-shared", 10, 2);
    PushClient p = pusher("app-shared", 10, locs);
    for (int i = 0; i < 30; i++) {
      byte[] b = batch(0, 1, i);
      p.push(1, 0, 7, b, 0, b.length);
    }
    p.finish();
    SealedShuffle sealed = lifecycle.seal(10);
    String file = sealed.files().get(1).get(0);
    String primary = locs.get(1).primary();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      for (FileBlockInfo b : fs.getBlockLocations(file)) {
        assertThat(b.locations()).hasSize(1);
        assertThat(b.locations().get(0).address().host() + ":" + b.locations().get(0).address().rpcPort())
            .isEqualTo(primary);
      }
    });
    // The status the driver gives readers (the complete's answer) names only the primary too: the replica's
    // copy was never committed, so no reader is sent to the copy that was dropped.
    URIStatus given = sealed.statuses().get(file);
    assertThat(given).isNotNull();
    assertThat(given.blocks()).isNotEmpty().allSatisfy(b -> {
      assertThat(b.locations()).hasSize(1);
      assertThat(b.locations().get(0).address().host() + ":" + b.locations().get(0).address().rpcPort())
          .isEqualTo(primary);
    });
    assertThat(Files.exists(dir.resolve("10/1-0"))).isTrue();
    assertThat(read(sealed.files().get(1), Map.of(0, 7L))).containsExactlyInAnyOrderElementsOf(expected(1, 1, 30));
  }

  @Test
  @Order(5)
  void primaryLostBeforeTheSeal_isSealedFromItsReplica() throws Exception {
    List<PartitionLocation> locs = lifecycle.register("app-one", 5, 3);
    PushClient p = pusher("app-one", 5, locs);
    for (int i = 0; i < 30; i++) {
      for (int part = 0; part < 3; part++) {
        byte[] b = batch(0, part, i);
        p.push(part, 0, 9, b, 0, b.length);
      }
    }
    p.finish();
    int victim = -1;
    for (int i = 0; i < cluster.workers().size(); i++) {
      if (("localhost:" + cluster.worker(i).rpcPort()).equals(locs.get(0).primary())) {
        victim = i;
      }
    }
    cluster.stopWorker(victim);
    try {
      SealedShuffle sealed = lifecycle.seal(5);
      assertThat(sealed.lost()).isEmpty();
      for (int part = 0; part < 3; part++) {
        assertThat(read(sealed.files().get(part), Map.of(0, 9L)))
            .containsExactlyInAnyOrderElementsOf(expected(1, part, 30));
      }
    } finally {
      cluster.restartWorker(victim);
      cluster.waitForWorkers(3, 30_000);
    }
  }

  @Test
  @Order(6)
  void unregister_removesTheShufflesFiles() throws Exception {
    List<Long> ids = fs.listStatus("/.shuffle/app-one/0").stream().map(URIStatus::id).toList();
    assertThat(ids).isNotEmpty();
    lifecycle.unregister(0);
    // The workers let go of the sealed partitions too (they kept them for ever before).
    for (int i = 0; i < 3; i++) {
      assertThat(cluster.worker(i).shuffle().store().openFileIds()).as("worker " + i).doesNotContainAnyElementsOf(ids);
    }
    assertThat(fs.exists("/.shuffle/app-one/0")).isFalse();
    assertThat(Files.exists(cluster.rootUfsDir().resolve(".shuffle/app-one/0"))).isFalse();
    Set<Integer> left = new HashSet<>(fs.listStatus("/.shuffle/app-one").stream()
        .map(s -> Integer.parseInt(s.name())).collect(Collectors.toSet()));
    assertThat(left).doesNotContain(0).contains(1);
  }

  @Test
  @Order(7)
  void partitionIdlePastTheTempBlockTimeout_keepsItsAcknowledgedBatches() throws Exception {
    byte[] early = batch(0, 0, 7);
    List<PartitionLocation> locs = registerOneAndPush("app-idle", 20, early, 500);
    PartitionLocation loc = locs.get(0);
    // An ordinary writer on the primary that goes idle beside the partition: the reaper ending it shows
    // the partition's blocks have been idle past the timeout too.
    io.strata.worker.WorkerProcess primary = cluster.workers().stream()
        .filter(w -> w.rpcPort() == loc.primaryPort()).findFirst().orElseThrow();
    io.strata.worker.store.BlockStore.TempBlock probe = primary.store()
        .createTemp(io.strata.common.id.BlockId.of(loc.fileId() + 1_000_000, 0), 1 << 20);
    probe.append(java.nio.ByteBuffer.wrap(new byte[10]));
    Path probeFile = probe.path();
    await().atMost(Duration.ofSeconds(30)).until(() -> !Files.exists(probeFile));

    PushClient second = pusher("app-idle", 20, locs);
    byte[] late = batch(1, 0, 3);
    second.push(0, 1, 501, late, 0, late.length);
    second.finish();
    SealedShuffle sealed = lifecycle.seal(20);
    assertThat(sealed.lost()).isEmpty();
    List<String> files = sealed.files().get(0);
    assertThat(fs.getStatus(files.get(0)).length())
        .isEqualTo(2L * BatchHeader.BYTES + early.length + late.length);
    assertThat(read(files, Map.of(0, 500L, 1, 501L))).containsExactlyInAnyOrder(
        new String(early, StandardCharsets.UTF_8), new String(late, StandardCharsets.UTF_8));
    lifecycle.unregister(20);
  }

  @Test
  @Order(8)
  void register_whileAListedWorkerIsDown_placesEveryPartitionOnTheOthers() throws Exception {
    String dead = "localhost:" + cluster.worker(0).rpcPort();
    cluster.stopWorker(0); // the master still lists it until its heartbeat timeout
    try {
      assertThat(fs.getWorkers().stream().map(w -> w.address().host() + ":" + w.address().rpcPort()))
          .as("the master has not yet noticed").contains(dead);
      List<PartitionLocation> locs = lifecycle.register("app-down", 21, 6);
      assertThat(locs).hasSize(6).allSatisfy(l -> {
        assertThat(l.primary()).isNotEqualTo(dead);
        assertThat(l.replica()).isNotEqualTo(dead);
        assertThat(l.hasReplica()).isTrue();
      });
      PushClient p = pusher("app-down", 21, locs);
      for (int part = 0; part < 6; part++) {
        byte[] b = batch(0, part, part);
        p.push(part, 0, 77, b, 0, b.length);
      }
      p.finish();
      SealedShuffle sealed = lifecycle.seal(21);
      assertThat(sealed.lost()).isEmpty();
      for (int part = 0; part < 6; part++) {
        assertThat(sealed.files().get(part)).hasSize(1);
        assertThat(read(sealed.files().get(part), Map.of(0, 77L)))
            .containsExactly(new String(batch(0, part, part), StandardCharsets.UTF_8));
      }
      // The rounds given up left no file behind: one file per partition.
      assertThat(fs.listStatus("/.shuffle/app-down/21")).hasSize(6);
      lifecycle.unregister(21);
    } finally {
      cluster.restartWorker(0);
      cluster.waitForWorkers(3, 30_000);
    }
  }

  /**
   * The driver keeps a channel per worker. A worker that refused a connection and came back on its port
   * within gRPC's reconnect backoff (a second, growing to minutes) must be placed on again at once, not
   * skipped as unreachable while the old channel keeps failing calls with the old error.
   */
  @Test
  @Order(8)
  void workerRestartedOnItsPort_isPlacedOnAgainAtOnce() throws Exception {
    cluster.waitForWorkers(3, 30_000);
    String back = "localhost:" + cluster.worker(1).rpcPort();
    cluster.stopWorker(1);
    try {
      List<PartitionLocation> without = lifecycle.register("app-back", 23, 3); // refused by the stopped worker
      assertThat(without).allSatisfy(l -> assertThat(List.of(l.primary(), l.replica())).doesNotContain(back));
      lifecycle.unregister(23);
    } finally {
      cluster.restartWorker(1);
    }
    List<PartitionLocation> locs = lifecycle.register("app-back", 24, 3);
    // Three partitions over three workers in turn: each worker is a primary once, with a replica.
    assertThat(locs.stream().map(PartitionLocation::primary)).containsExactlyInAnyOrder(
        back, "localhost:" + cluster.worker(0).rpcPort(), "localhost:" + cluster.worker(2).rpcPort());
    assertThat(locs).allSatisfy(l -> assertThat(l.hasReplica()).isTrue());
    PushClient p = pusher("app-back", 24, locs);
    for (int part = 0; part < 3; part++) {
      byte[] b = batch(0, part, part);
      p.push(part, 0, 5, b, 0, b.length);
    }
    p.finish();
    SealedShuffle sealed = lifecycle.seal(24);
    assertThat(sealed.lost()).isEmpty();
    for (int part = 0; part < 3; part++) {
      assertThat(read(sealed.files().get(part), Map.of(0, 5L)))
          .containsExactly(new String(batch(0, part, part), StandardCharsets.UTF_8));
    }
    lifecycle.unregister(24);
  }

  /**
   * An executor's pushers share one retry pool. Revives waiting on the driver (here: two that never get an
   * answer until the end) must not hold back another task's retry: its push to a dead worker is revived to a live
   * location and acknowledged while the other two still wait.
   */
  @Test
  @Order(8)
  void revivesWaitingOnTheDriver_leaveAnotherTasksRetryRunning() throws Exception {
    java.util.concurrent.ScheduledThreadPoolExecutor pool = StrataShuffleManager.newRetryPool();
    java.util.concurrent.ExecutorService finishing = Executors.newFixedThreadPool(3);
    CountDownLatch driverAnswers = new CountDownLatch(1);
    CountDownLatch waiting = new CountDownLatch(2);
    int deadPort;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      deadPort = s.getLocalPort(); // closed again: connections to it are refused
    }
    try {
      PartitionLocation live = lifecycle.register("app-pool", 25, 1).get(0);
      PartitionLocation dead = new PartitionLocation(0, live.epoch(), live.fileId(), live.path(), live.blockSize(),
          "localhost", deadPort, "", 0);
      PushClient.Settings noRetry = new PushClient.Settings(4, 64 << 10, 0, 10_000);
      List<java.util.concurrent.Future<?>> stuck = new ArrayList<>();
      for (int map = 0; map < 2; map++) {
        PushClient p = new PushClient(channels, "app-pool", 25, new PartitionLocation[] {dead}, (failed, bad) -> {
          waiting.countDown();
          try {
            driverAnswers.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          throw new IOException("no location from the driver");
        }, noRetry, pool);
        byte[] b = batch(map, 0, 1);
        p.push(0, map, 1, b, 0, b.length);
        stuck.add(finishing.submit(() -> {
          p.finish();
          return null;
        }));
      }
      assertThat(waiting.await(20, TimeUnit.SECONDS)).as("both revives wait on the driver").isTrue();
      PushClient other = new PushClient(channels, "app-pool", 25, new PartitionLocation[] {dead},
          (failed, bad) -> live, noRetry, pool);
      byte[] b = batch(2, 0, 1);
      other.push(0, 2, 1, b, 0, b.length);
      java.util.concurrent.Future<?> done = finishing.submit(() -> {
        other.finish();
        return null;
      });
      done.get(20, TimeUnit.SECONDS); // acknowledged by the live location while the other two still wait
      assertThat(stuck).noneMatch(java.util.concurrent.Future::isDone);
      driverAnswers.countDown();
      for (java.util.concurrent.Future<?> f : stuck) {
        assertThatThrownBy(() -> f.get(20, TimeUnit.SECONDS)).hasMessageContaining("no location from the driver");
      }
      SealedShuffle sealed = lifecycle.seal(25);
      assertThat(read(sealed.files().get(0), Map.of(2, 1L)))
          .containsExactly(new String(b, StandardCharsets.UTF_8));
      lifecycle.unregister(25);
    } finally {
      driverAnswers.countDown();
      finishing.shutdownNow();
      pool.shutdownNow();
    }
  }

  @Test
  @Order(9)
  void partitionOfAFileDeletedWhileTheWorkerMissedTheNotice_isLetGoAtRegistration() throws Exception {
    PartitionLocation loc = registerOneAndPush("app-missed", 22, batch(0, 0, 1), 600).get(0);
    List<io.strata.worker.WorkerProcess> holders = cluster.workers().stream()
        .filter(w -> w.rpcPort() == loc.primaryPort() || w.rpcPort() == loc.replicaPort()).toList();
    assertThat(holders).hasSize(2)
        .allSatisfy(w -> assertThat(w.shuffle().store().openFileIds()).contains(loc.fileId()));

    // The driver's file goes (say it died and someone cleaned up), and the master that would name it in
    // heartbeats goes at once too: the new master never heard of the delete, so only the worker's
    // registration, which lists the files it holds, can tell it.
    fs.delete(loc.path(), io.strata.client.options.DeleteOptions.defaults());
    cluster.restartMaster();
    await().atMost(Duration.ofSeconds(30)).until(() -> holders.stream()
        .noneMatch(w -> w.shuffle().store().openFileIds().contains(loc.fileId())));
    assertThat(cluster.master().fileSystemMaster().recentlyRecoveredFileIds()).as("the new master's notice")
        .doesNotContain(loc.fileId());
    cluster.waitForWorkers(3, 30_000);
  }

  @Test
  @Order(10)
  void seal_ofMorePartitionsThanOneCompleteBatch_completesEveryFile_withItsStatus() throws Exception {
    int partitions = 2 * ShuffleSealer.COMPLETE_BATCH + 37; // three CompleteFiles calls, the last one short
    long[] batchesBefore = masterBatchCounts();
    List<PartitionLocation> locs = lifecycle.register("app-many", 30, partitions);
    PushClient p = pusher("app-many", 30, locs);
    for (int part = 0; part < partitions; part += 7) {
      byte[] b = batch(0, part, part % 50);
      p.push(part, 0, 3, b, 0, b.length);
    }
    p.finish();
    SealedShuffle sealed = lifecycle.seal(30);
    assertThat(sealed.lost()).isEmpty();
    assertThat(sealed.files()).hasSize(partitions);
    // A worker commits the blocks of all the files of a seal request in one master call (CommitBlocks), and asks
    // their UFS write targets in one (GetUfsWriteTargets): one request per worker and step (primaries, replicas) of
    // each part of the round, so at most that many calls of each kind.
    long[] batches = masterBatchCounts();
    long commitCalls = batches[0] - batchesBefore[0];
    long commits = batches[1] - batchesBefore[1];
    long targetCalls = batches[2] - batchesBefore[2];
    long targets = batches[3] - batchesBefore[3];
    assertThat(targets).as("UFS write targets asked for").isEqualTo(partitions);
    assertThat(commits).as("blocks committed").isGreaterThanOrEqualTo(partitions / 7);
    long requestsAtMost = 2L * ShuffleSealer.parts(locs, 0).size() * cluster.workers().size();
    assertThat(commitCalls).as("commit calls for %d commits", commits).isLessThanOrEqualTo(requestsAtMost)
        .isLessThan(commits);
    assertThat(targetCalls).as("target calls for %d targets", targets).isLessThanOrEqualTo(requestsAtMost)
        .isLessThan(targets);
    assertThat(sealed.statuses()).hasSize(partitions);
    for (int part = 0; part < partitions; part++) {
      String file = "/.shuffle/app-many/30/" + part + "-0";
      assertThat(sealed.files().get(part)).containsExactly(file);
      long want = part % 7 == 0 ? BatchHeader.BYTES + batch(0, part, part % 50).length : 0;
      URIStatus given = sealed.statuses().get(file);
      assertThat(given.complete()).as(file).isTrue();
      assertThat(given.persistenceState()).isEqualTo(URIStatus.PERSISTED);
      assertThat(given.length()).as(file).isEqualTo(want);
      assertThat(given.blocks().stream().mapToLong(FileBlockInfo::length).sum()).isEqualTo(want);
      assertThat(given.blocks()).allSatisfy(b -> assertThat(b.locations()).hasSize(2));
      assertThat(Files.size(cluster.rootUfsDir().resolve(".shuffle/app-many/30/" + part + "-0"))).isEqualTo(want);
    }
    // Read from the given statuses, a partition with data and one without.
    try (PartitionReader r = new PartitionReader(fs, sealed.files().get(14), sealed.statuses(), Map.of(0, 3L))) {
      assertThat(r.hasNext()).isTrue();
      assertThat(new String(r.next(), StandardCharsets.UTF_8)).isEqualTo(new String(batch(0, 14, 14),
          StandardCharsets.UTF_8));
      assertThat(r.hasNext()).isFalse();
    }
    try (PartitionReader r = new PartitionReader(fs, sealed.files().get(15), sealed.statuses(), Map.of(0, 3L))) {
      assertThat(r.hasNext()).isFalse();
    }
    lifecycle.unregister(30);
  }

  /** Summed over the workers: see {@link io.strata.worker.WorkerProcess#masterBatchCounts()}. */
  private static long[] masterBatchCounts() {
    long[] sum = new long[4];
    for (int w = 0; w < 3; w++) {
      long[] c = cluster.worker(w).masterBatchCounts();
      for (int i = 0; i < 4; i++) {
        sum[i] += c[i];
      }
    }
    return sum;
  }

  @Test
  @Order(12)
  void batchedWorkerCalls_withNoEntry_orEntriesOfTwoWorkers_areRefusedWhole() {
    io.grpc.ManagedChannel ch = io.grpc.ManagedChannelBuilder.forAddress("localhost", cluster.masterPort())
        .usePlaintext().build();
    try {
      var stub = io.strata.proto.BlockMasterWorkerServiceGrpc.newBlockingStub(ch);
      assertThatThrownBy(() -> stub.commitBlocks(io.strata.proto.CommitBlocksRequest.getDefaultInstance()))
          .hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("1 to 1000 entries, not 0");
      var two = io.strata.proto.GetUfsWriteTargetsRequest.newBuilder()
          .addTargets(io.strata.proto.GetUfsWriteTargetRequest.newBuilder().setWorkerId(1).setFileId(5))
          .addTargets(io.strata.proto.GetUfsWriteTargetRequest.newBuilder().setWorkerId(2).setFileId(6)).build();
      assertThatThrownBy(() -> stub.getUfsWriteTargets(two)).hasMessageContaining("INVALID_ARGUMENT")
          .hasMessageContaining("must all name one worker: worker 1 and worker 2");
    } finally {
      ch.shutdownNow();
    }
  }

  /**
   * A primary that committed its blocks and then failed to write the UFS copy says so; before the replica is
   * sealed in its place (its blocks have the same ids), the primary drops its copy, committed blocks too, so
   * the two are never listed side by side: they hold the same acknowledged batches but not the same bytes
   * (partition 1 has one unacknowledged batch of equal size on each copy alone, so both copies' blocks have
   * the same lengths and block 0 differs; partition 0's may differ in order). After the seal the replica's
   * sealed copy and the UFS file hold every acknowledged batch; the primary holds none of the blocks.
   */
  @Test
  @Order(11)
  void primaryThatCommittedBeforeItsUfsWriteFailed_dropsItsCopyBeforeItsReplicaIsSealedInItsPlace() throws Exception {
    Path dir = mountNodeLocal("app-cf", "commit-then-fail");
    List<PartitionLocation> locs = lifecycle.register("app-cf", 40, 2);
    byte[] mine = "p".repeat(1000).getBytes(StandardCharsets.UTF_8);
    byte[] theirs = "r".repeat(1000).getBytes(StandardCharsets.UTF_8);
    PartitionLocation odd = locs.get(1);
    // forwarded: as a primary's forward is taken (appended here only), so the two copies get one each
    assertThat(stub(odd.primaryPort()).push(one("app-cf", 40, odd, mine, BatchHeader.crc32c(mine, 0, 1000))
        .setForwarded(true).build()).getStatus()).isEqualTo(PushResponse.Status.OK);
    assertThat(stub(odd.replicaPort()).push(one("app-cf", 40, odd, theirs, BatchHeader.crc32c(theirs, 0, 1000))
        .setForwarded(true).build()).getStatus()).isEqualTo(PushResponse.Status.OK);
    PushClient p = pusher("app-cf", 40, locs);
    byte[][] sent = new byte[20][];
    for (int i = 0; i < 20; i++) {
      sent[i] = new byte[64 << 10];
      new java.util.Random(i).nextBytes(sent[i]);
      for (int part = 0; part < 2; part++) {
        p.push(part, 0, 5, sent[i], 0, sent[i].length);
      }
    }
    p.finish();

    // The UFS directory is a plain file for a while: each primary commits, then fails its UFS write.
    Path shuffleDir = dir.resolve("40");
    Path aside = dir.resolve("40.aside");
    if (Files.isDirectory(shuffleDir)) {
      Files.move(shuffleDir, aside);
    }
    Files.write(shuffleDir, new byte[0]);
    long[] committedLength = new long[2];
    for (int part = 0; part < 2; part++) {
      PartitionLocation l = locs.get(part);
      var answer = stub(l.primaryPort()).seal(io.strata.proto.SealRequest.newBuilder().setAppId("app-cf")
          .setShuffleId(40).addFileIds(l.fileId()).setWriteThrough(true).build()).getPartitions(0);
      assertThat(answer.getError()).as("partition " + part).isNotEmpty();
      assertThat(answer.getCommitted()).as("partition " + part + ": committed before the UFS write").isTrue();
      committedLength[part] = answer.getLength();
    }
    long want = 20L * (BatchHeader.BYTES + (64 << 10));
    assertThat(committedLength[0]).isEqualTo(want);
    assertThat(committedLength[1]).isEqualTo(want + BatchHeader.BYTES + 1000);
    Files.delete(shuffleDir);
    if (Files.isDirectory(aside)) {
      Files.move(aside, shuffleDir);
    }
    // Block 1 leaves each primary (as an eviction or a lost disk would take it), so its retried UFS write
    // fails again at the seal: the sealer turns to the replicas. Block 0, partition 1's differing one, stays.
    for (PartitionLocation l : locs) {
      workerAt(l.primaryPort()).store().remove(io.strata.common.id.BlockId.of(l.fileId(), 1));
    }

    SealedShuffle sealed = lifecycle.seal(40);
    assertThat(sealed.lost()).isEmpty();
    List<String> expect = new ArrayList<>();
    for (byte[] b : sent) {
      expect.add(new String(b, StandardCharsets.ISO_8859_1));
    }
    for (int part = 0; part < 2; part++) {
      PartitionLocation l = locs.get(part);
      List<String> got = new ArrayList<>();
      try (PartitionReader r = new PartitionReader(fs, sealed.files().get(part), Map.of(0, 5L))) {
        r.forEachRemaining(b -> got.add(new String(b, StandardCharsets.ISO_8859_1)));
      }
      assertThat(got).as("partition " + part).containsExactlyInAnyOrderElementsOf(expect);
      assertThat(Files.size(dir.resolve("40/" + part + "-0"))).isEqualTo(committedLength[part]);
      // No listed copy of any block holds other bytes than the UFS file's: the primary's own copy was dropped
      // (a listing may name it until its heartbeat reports the removal: a reader sent there fails over), or a
      // reader sent to it before then cached the block there again, from the UFS. The replica holds each.
      byte[] ufsCopy = Files.readAllBytes(dir.resolve("40/" + part + "-0"));
      for (FileBlockInfo b : fs.getBlockLocations(l.path())) {
        byte[] bytes = java.util.Arrays.copyOfRange(ufsCopy, (int) b.offset(), (int) (b.offset() + b.length()));
        for (var loc : b.locations()) {
          byte[] held = storedBytes(workerAt(loc.address().rpcPort()), b.blockId());
          assertThat(held == null || java.util.Arrays.equals(held, bytes))
              .as("block " + b.blockId() + " on " + loc.address() + " holds the UFS copy's bytes or none").isTrue();
        }
        assertThat(java.util.Arrays.equals(storedBytes(workerAt(l.replicaPort()), b.blockId()), bytes))
            .as("the replica's block " + b.blockId()).isTrue();
      }
    }
    lifecycle.unregister(40);
  }

  /** The bytes of a block in a worker's store, or null when it holds none. */
  /**
   * With a node-local UFS a replica commits beside its primary only when its copy has the primary's length and
   * CRC. One that differs (here partition 1: one batch on each copy alone, of equal size) drops its copy before
   * any of its blocks reaches the master, and says so (dropped): asked directly, it answers dropped and holds no
   * block of the file; at the seal the complete's status names only the primary, the driver asks for no drop and
   * no status again, and the partition reads whole. Partition 0's copies hold the same bytes: the status names
   * both, and each holds the primary's bytes.
   */
  @Test
  @Order(13)
  void replicaUnlikeItsPrimary_dropsItsCopyBeforeAnyCommit_andTheStatusNamesOnlyThePrimary() throws Exception {
    mountNodeLocal("app-unlike", "unlike");
    List<PartitionLocation> locs = lifecycle.register("app-unlike", 50, 3);
    for (PartitionLocation odd : List.of(locs.get(1), locs.get(2))) {
      pushUnlike("app-unlike", 50, odd, 500);
    }
    PushClient p = pusher("app-unlike", 50, locs);
    for (int i = 0; i < 10; i++) {
      for (int part = 0; part < 3; part++) {
        byte[] b = batch(0, part, i);
        p.push(part, 0, 9, b, 0, b.length);
      }
    }
    p.finish();

    // Partition 2, asked directly with the primary's length and CRC: the replica differs, commits nothing.
    PartitionLocation direct = locs.get(2);
    var answer = stub(direct.replicaPort()).seal(io.strata.proto.SealRequest.newBuilder().setAppId("app-unlike")
        .setShuffleId(50).addFileIds(direct.fileId()).addExpectLength(12345).addExpectCrc32C(42).build())
        .getPartitions(0);
    assertThat(answer.getError()).contains("differs from its primary's copy");
    assertThat(answer.getDropped()).isTrue();
    assertThat(answer.getCommitted()).isFalse();
    assertThat(storedBytes(workerAt(direct.replicaPort()), io.strata.common.id.BlockId.of(direct.fileId(), 0)))
        .isNull();

    SealedShuffle sealed = lifecycle.seal(50);
    assertThat(sealed.lost()).isEmpty();
    for (int part = 0; part < 3; part++) {
      PartitionLocation l = locs.get(part);
      URIStatus given = sealed.statuses().get(l.path());
      assertThat(given).as("status of partition " + part).isNotNull();
      String primary = "localhost:" + l.primaryPort();
      for (FileBlockInfo b : given.blocks()) {
        List<String> at = b.locations().stream().map(x -> x.address().host() + ":" + x.address().rpcPort()).toList();
        if (part == 0) {
          // Alike: the replica placed each forwarded batch where its primary had, so both copies are listed.
          assertThat(at).containsExactlyInAnyOrder(primary, "localhost:" + l.replicaPort());
          for (var loc : b.locations()) {
            assertThat(storedBytes(workerAt(loc.address().rpcPort()), b.blockId()))
                .isEqualTo(storedBytes(workerAt(l.primaryPort()), b.blockId()));
          }
        } else {
          assertThat(at).containsExactly(primary);
        }
      }
      if (part > 0) {
        assertThat(storedBytes(workerAt(l.replicaPort()), io.strata.common.id.BlockId.of(l.fileId(), 0))).isNull();
      }
      List<String> got = new ArrayList<>();
      try (PartitionReader r = new PartitionReader(fs, sealed.files().get(part), sealed.statuses(), Map.of(0, 9L))) {
        r.forEachRemaining(b -> got.add(new String(b, StandardCharsets.UTF_8)));
      }
      assertThat(got).as("partition " + part).containsExactlyInAnyOrderElementsOf(expected(1, part, 10));
    }
    lifecycle.unregister(50);
  }

  /**
   * The seal gap: a primary commits its copy, then dies before it answers the seal (here: sealed directly, its
   * answer dropped, then stopped). Its replica's copy, which differs (one batch on each copy alone), is sealed in
   * its place; the replica's commits replace the primary's copy at the master. When the primary comes back with
   * its store and reports its committed blocks, the master refuses them and has it remove them: no reader is ever
   * sent to bytes other than the UFS copy's, and the partition reads whole.
   */
  @Test
  @Order(14)
  void primaryThatCommittedAndDiedBeforeAnswering_isNotListedAgainWhenItComesBack() throws Exception {
    List<PartitionLocation> locs = lifecycle.register("app-gap", 60, 1);
    PartitionLocation l = locs.get(0);
    pushUnlike("app-gap", 60, l, 700);
    PushClient p = pusher("app-gap", 60, locs);
    for (int i = 0; i < 10; i++) {
      byte[] b = batch(0, 0, i);
      p.push(0, 0, 9, b, 0, b.length);
    }
    p.finish();
    var committed = stub(l.primaryPort()).seal(io.strata.proto.SealRequest.newBuilder().setAppId("app-gap")
        .setShuffleId(60).addFileIds(l.fileId()).setWriteThrough(false).build()).getPartitions(0);
    assertThat(committed.getError()).isEmpty();
    long block0 = io.strata.common.id.BlockId.of(l.fileId(), 0);
    // The file is not complete yet: the master's own record shows the primary's committed copy.
    assertThat(cluster.master().fileSystemMaster().blockMaster().getBlock(block0).locations())
        .extracting(x -> x.worker().address().rpcPort()).containsExactly(l.primaryPort());
    int victim = cluster.workers().indexOf(workerAt(l.primaryPort()));
    cluster.stopWorker(victim);
    try {
      SealedShuffle sealed = lifecycle.seal(60);
      assertThat(sealed.lost()).isEmpty();
      assertThat(sealed.statuses().get(l.path()).blocks()).allSatisfy(b -> assertThat(b.locations())
          .extracting(x -> x.address().rpcPort()).containsExactly(l.replicaPort()));
      assertThat(fs.getBlockLocations(l.path())).allSatisfy(b -> assertThat(b.locations())
          .extracting(x -> x.address().rpcPort()).containsExactly(l.replicaPort()));
    } finally {
      cluster.restartWorker(victim);
      cluster.waitForWorkers(3, 30_000);
    }
    // Back with its store: its copy of block 0 (other bytes than the replica's) is refused, then removed there.
    io.strata.worker.WorkerProcess back = cluster.worker(victim);
    await().atMost(Duration.ofSeconds(20)).until(() -> storedBytes(back, block0) == null);
    byte[] ufsCopy = Files.readAllBytes(cluster.rootUfsDir().resolve(".shuffle/app-gap/60/0-0"));
    assertListedOnlyAtReplica(l, ufsCopy);
    assertThat(read(List.of(l.path()), Map.of(0, 9L))).containsExactlyInAnyOrderElementsOf(expected(1, 0, 10));
    lifecycle.unregister(60);
  }

  /**
   * Node-local UFS, many map attempts pushing to the same partitions at once, so the primary appends their batches
   * in whatever order they come and forwards them side by side: the replica places each where its primary did, so
   * at the seal both copies are alike and both are committed. Every block is listed at both workers, each holding
   * the bytes of the file's UFS copy, and the partitions read whole.
   */
  @Test
  @Order(15)
  void concurrentPushes_leaveTheReplicaAlikeItsPrimary_andBothCopiesListed() throws Exception {
    Path dir = mountNodeLocal("app-alike", "alike");
    int maps = 4;
    int parts = 2;
    int perMap = 40;
    List<PartitionLocation> locs = lifecycle.register("app-alike", 70, parts);
    ConcurrentMaps.push(maps, parts, perMap, map -> pusher("app-alike", 70, locs),
        ShufflePartitionFilesIntegrationTest::batch);
    SealedShuffle sealed = lifecycle.seal(70);
    assertThat(sealed.lost()).isEmpty();
    for (int part = 0; part < parts; part++) {
      PartitionLocation l = locs.get(part);
      assertThat(l.replicaPort()).isNotEqualTo(l.primaryPort());
      URIStatus given = sealed.statuses().get(l.path());
      byte[] ufsCopy = Files.readAllBytes(dir.resolve("70/" + part + "-0"));
      assertThat(given.length()).isEqualTo(ufsCopy.length);
      for (FileBlockInfo b : given.blocks()) {
        assertThat(b.locations()).extracting(x -> x.address().rpcPort())
            .as("partition %d block %d", part, b.blockId()).containsExactlyInAnyOrder(l.primaryPort(), l.replicaPort());
        byte[] want = java.util.Arrays.copyOfRange(ufsCopy, (int) b.offset(), (int) (b.offset() + b.length()));
        assertThat(storedBytes(workerAt(l.primaryPort()), b.blockId())).isEqualTo(want);
        assertThat(storedBytes(workerAt(l.replicaPort()), b.blockId())).isEqualTo(want);
      }
      List<String> got = new ArrayList<>();
      try (PartitionReader r = new PartitionReader(fs, sealed.files().get(part), sealed.statuses(),
          ConcurrentMaps.firstAttempts(maps))) {
        r.forEachRemaining(b -> got.add(new String(b, StandardCharsets.UTF_8)));
      }
      assertThat(got).as("partition " + part).containsExactlyInAnyOrderElementsOf(expected(maps, part, perMap));
    }
    lifecycle.unregister(70);
  }

  /**
   * The seal gap across a master restart, where removal lists are gone: the primary applied one batch more than
   * its replica got (a forward that failed: pushed here as a forward, so the primary keeps it alone), committed,
   * and died before answering; its replica, a shorter prefix of its copy, is sealed in its place. The master then
   * restarts, and the primary comes back with its store: its copy of the block has another length than the one
   * committed, so the master refuses it and has it removed. Readers are only ever sent to the replica's bytes,
   * which are the UFS copy's.
   */
  @Test
  @Order(16)
  void primaryWithALongerCopy_comingBackAfterAMasterRestart_isRefusedForItsLength() throws Exception {
    List<PartitionLocation> locs = lifecycle.register("app-gap2", 80, 1);
    PartitionLocation l = locs.get(0);
    PushClient p = pusher("app-gap2", 80, locs);
    for (int i = 0; i < 10; i++) {
      byte[] b = batch(0, 0, i);
      p.push(0, 0, 9, b, 0, b.length);
    }
    p.finish();
    byte[] extra = "only on the primary".getBytes(StandardCharsets.UTF_8);
    assertThat(stub(l.primaryPort()).push(one("app-gap2", 80, l, extra, BatchHeader.crc32c(extra, 0, extra.length))
        .setForwarded(true).build()).getStatus()).isEqualTo(PushResponse.Status.OK);
    var committed = stub(l.primaryPort()).seal(io.strata.proto.SealRequest.newBuilder().setAppId("app-gap2")
        .setShuffleId(80).addFileIds(l.fileId()).setWriteThrough(false).build()).getPartitions(0);
    assertThat(committed.getError()).isEmpty();
    long block0 = io.strata.common.id.BlockId.of(l.fileId(), 0);
    int victim = cluster.workers().indexOf(workerAt(l.primaryPort()));
    cluster.stopWorker(victim);
    SealedShuffle sealed;
    try {
      sealed = lifecycle.seal(80);
    } finally {
      cluster.restartMaster();
      cluster.restartWorker(victim);
    }
    assertThat(sealed.lost()).isEmpty();
    long replicaLength = sealed.statuses().get(l.path()).length();
    assertThat(committed.getLength()).isEqualTo(replicaLength + BatchHeader.BYTES + extra.length);
    cluster.waitForWorkers(3, 30_000);
    io.strata.worker.WorkerProcess back = cluster.worker(victim);
    await().atMost(Duration.ofSeconds(20)).until(() -> storedBytes(back, block0) == null);
    byte[] ufsCopy = Files.readAllBytes(cluster.rootUfsDir().resolve(".shuffle/app-gap2/80/0-0"));
    assertThat(ufsCopy).hasSize((int) replicaLength);
    assertListedOnlyAtReplica(l, ufsCopy);
    assertThat(read(List.of(l.path()), Map.of(0, 9L))).containsExactlyInAnyOrderElementsOf(expected(1, 0, 10));
    lifecycle.unregister(80);
  }

  /**
   * A forward its primary gives up through a real gRPC deadline: a batch sent to the replica as a forward for a
   * place far ahead waits there for the ones before it; when the caller's deadline passes, the call is cancelled
   * on the replica, which freezes its copy (the gap will not fill) and lets go of the waiting bytes. The next
   * forward for the partition is refused, naming the gap.
   */
  @Test
  @Order(17)
  void forwardWaitingOnTheReplica_whoseCallerGivesUp_freezesTheCopy_andLetsGoOfItsBytes() throws Exception {
    cluster.waitForWorkers(3, 30_000);
    List<PartitionLocation> locs = lifecycle.register("app-deadline", 100, 1);
    PartitionLocation l = locs.get(0);
    byte[] data = "far ahead".getBytes(StandardCharsets.UTF_8);
    int crc = BatchHeader.crc32c(data, 0, data.length);
    PushRequest.Builder ahead = one("app-deadline", 100, l, data, crc).setForwarded(true);
    ahead.setBatches(0, ahead.getBatches(0).toBuilder().setOffset(1_000_000));
    io.strata.worker.WorkerProcess replica = workerAt(l.replicaPort());
    assertThatThrownBy(() -> stub(l.replicaPort()).withDeadlineAfter(300, java.util.concurrent.TimeUnit.MILLISECONDS)
        .push(ahead.build())).isInstanceOf(StatusRuntimeException.class).hasMessageContaining("DEADLINE_EXCEEDED");
    await().atMost(Duration.ofSeconds(10)).until(() -> replica.shuffle().pipeline().bufferedBytes() == 0);
    PushRequest.Builder first = one("app-deadline", 100, l, data, crc).setForwarded(true);
    first.setBatches(0, first.getBatches(0).toBuilder().setOffset(0));
    assertThatThrownBy(() -> stub(l.replicaPort()).push(first.build())).isInstanceOf(StatusRuntimeException.class)
        .hasMessageContaining("has a gap at offset 0");
    assertThat(replica.shuffle().store().appendedBytes(l.fileId())).isZero();
    lifecycle.unregister(100);
  }

  /**
   * Readers asking for their partitions while a seal round runs: the first asker's round seals in parts
   * (beginning at its partition), and every asker gets back at least its partitions, sealed whole and alike what
   * the finished round lists; concurrent askers neither wait forever nor start a second round for sealed partitions.
   */
  @Test
  @Order(18)
  void readersOfSomePartitions_getThemSealed_whileTheRoundSealsTheRestInParts() throws Exception {
    cluster.waitForWorkers(3, 30_000);
    int partitions = ShuffleSealer.FIRST_PART * 3 + 7;
    List<PartitionLocation> locs = lifecycle.register("app-parts", 110, partitions);
    PushClient p = pusher("app-parts", 110, locs);
    for (int part = 0; part < partitions; part++) {
      byte[] b = batch(0, part, part);
      p.push(part, 0, 500, b, 0, b.length);
    }
    p.finish();
    int[][] ranges = {{100, 101}, {0, 1}, {40, 50}, {partitions - 1, partitions}, {60, 100}};
    java.util.concurrent.ExecutorService readers = Executors.newFixedThreadPool(ranges.length);
    try {
      List<java.util.concurrent.Future<SealedShuffle>> answers = new ArrayList<>();
      for (int[] r : ranges) {
        answers.add(readers.submit(() -> lifecycle.seal(110, r[0], r[1])));
      }
      SealedShuffle whole = lifecycle.seal(110);
      assertThat(whole.lost()).isEmpty();
      assertThat(whole.files().keySet()).hasSize(partitions);
      assertThat(lifecycle.sealedIfSettled(110, 0, partitions)).isEqualTo(whole);
      for (int i = 0; i < ranges.length; i++) {
        SealedShuffle got = answers.get(i).get(60, java.util.concurrent.TimeUnit.SECONDS);
        for (int part = ranges[i][0]; part < ranges[i][1]; part++) {
          assertThat(got.files().get(part)).as("partition " + part).isEqualTo(whole.files().get(part))
              .containsExactly("/.shuffle/app-parts/110/" + part + "-0");
          assertThat(read(got.files().get(part), Map.of(0, 500L)))
              .containsExactly(new String(batch(0, part, part), StandardCharsets.UTF_8));
        }
      }
      for (int part = 0; part < partitions; part++) {
        assertThat(fs.getStatus(whole.files().get(part).get(0)).complete()).isTrue();
      }
    } finally {
      readers.shutdownNow();
    }
    lifecycle.unregister(110);
  }

  /**
   * Many pushers whose pushes to one partition's location failed ask the driver for a new one at once (released
   * together): they all get one new location, epoch 1, away from the worker they blame, and exactly one new file is
   * made. A revive of epoch 0 asked later still gets epoch 1; a revive of epoch 1 makes epoch 2. Each epoch takes
   * batches, and the seal lists all three files of the partition, which read whole.
   */
  @Test
  @Order(19)
  @Timeout(120)
  void revive_manyConcurrentAsksForOneFailedLocation_giveOneNewEpoch() throws Exception {
    cluster.waitForWorkers(3, 30_000);
    List<PartitionLocation> locs = lifecycle.register("app-revive", 120, 2);
    PartitionLocation failed = locs.get(0);
    byte[] first = batch(0, 0, 1);
    PushClient toFailed = pusher("app-revive", 120, locs);
    toFailed.push(0, 0, 3, first, 0, first.length);
    toFailed.finish();
    Set<String> blamed = Set.of(failed.primary());
    int askers = 16;
    ExecutorService pool = Executors.newFixedThreadPool(askers);
    CountDownLatch go = new CountDownLatch(1);
    List<PartitionLocation> answers = new ArrayList<>();
    try {
      List<Future<PartitionLocation>> asked = new ArrayList<>();
      for (int i = 0; i < askers; i++) {
        asked.add(pool.submit(() -> {
          go.await();
          return lifecycle.revive(120, 0, failed.epoch(), blamed);
        }));
      }
      go.countDown();
      for (Future<PartitionLocation> f : asked) {
        answers.add(f.get(60, TimeUnit.SECONDS));
      }
    } finally {
      pool.shutdownNow();
    }
    PartitionLocation next = answers.get(0);
    assertThat(answers).as("every asker's answer").hasSize(askers).containsOnly(next);
    assertThat(next.epoch()).isEqualTo(1);
    assertThat(next.path()).isEqualTo("/.shuffle/app-revive/120/0-1");
    assertThat(next.fileId()).isNotEqualTo(failed.fileId());
    assertThat(List.of(next.primary(), next.replica())).as("placed away from the blamed " + failed.primary())
        .doesNotContain(failed.primary());
    assertThat(fs.listStatus("/.shuffle/app-revive/120").stream().map(URIStatus::name))
        .containsExactlyInAnyOrder("0-0", "0-1", "1-0");
    assertThat(lifecycle.current(120)).containsExactly(next, locs.get(1));
    assertThat(lifecycle.revive(120, 0, failed.epoch(), Set.of())).as("a late ask for epoch 0").isEqualTo(next);

    byte[] second = batch(0, 0, 2);
    PushClient toNext = pusher("app-revive", 120, lifecycle.current(120));
    toNext.push(0, 1, 3, second, 0, second.length); // another map: each pusher numbers its batches from 0
    toNext.finish();
    PartitionLocation after = lifecycle.revive(120, 0, next.epoch(), Set.of());
    assertThat(after.epoch()).isEqualTo(2);
    byte[] third = batch(0, 0, 3);
    PushClient toAfter = pusher("app-revive", 120, lifecycle.current(120));
    toAfter.push(0, 2, 3, third, 0, third.length);
    toAfter.finish();
    SealedShuffle sealed = lifecycle.seal(120);
    assertThat(sealed.lost()).isEmpty();
    assertThat(sealed.files().get(0)).containsExactly("/.shuffle/app-revive/120/0-0", "/.shuffle/app-revive/120/0-1",
        "/.shuffle/app-revive/120/0-2");
    assertThat(read(sealed.files().get(0), Map.of(0, 3L, 1, 3L, 2, 3L))).containsExactlyInAnyOrder(
        new String(first, StandardCharsets.UTF_8), new String(second, StandardCharsets.UTF_8),
        new String(third, StandardCharsets.UTF_8));
    lifecycle.unregister(120);
  }

  /**
   * A pusher has at most {@code spark.strata.shuffle.push.inflight.max} push calls open (sent, not answered) at once:
   * with a bound of 1, then 2, and a request per batch, the most open at once is the bound and never more, also while
   * the pushes to a partition whose first location is a dead port fail, are revived and sent again. With a bound of
   * 16, more than 2 were open at once, so the count does see calls overlap. Every batch is sealed and read back.
   */
  @Test
  @Order(20)
  @Timeout(180)
  void pushClient_neverHasMorePushesInFlightThanItsBound() throws Exception {
    cluster.waitForWorkers(3, 30_000);
    int deadPort;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      deadPort = s.getLocalPort(); // closed again: connections to it are refused
    }
    int parts = 4;
    int perPartition = 50;
    for (int bound : new int[] {1, 2, 16}) {
      int shuffle = 130 + bound;
      List<PartitionLocation> locs = new ArrayList<>(lifecycle.register("app-inflight", shuffle, parts));
      PartitionLocation live = locs.get(parts - 1);
      locs.set(parts - 1, new PartitionLocation(live.partitionId(), live.epoch(), live.fileId(), live.path(),
          live.blockSize(), "localhost", deadPort, "", 0));
      PushClient p = new PushClient(channels, "app-inflight", shuffle, locs.toArray(new PartitionLocation[0]),
          (failed, bad) -> lifecycle.revive(shuffle, failed.partitionId(), failed.epoch(), bad),
          new PushClient.Settings(bound, 1, 0, 10_000), retries); // a request per batch; a failure revives at once
      for (int i = 0; i < perPartition; i++) {
        for (int part = 0; part < parts; part++) {
          byte[] b = batch(0, part, i);
          p.push(part, 0, 8, b, 0, b.length);
        }
      }
      p.finish();
      if (bound < 16) {
        assertThat(p.mostPushesInFlight()).as("push calls open at once, bound " + bound).isEqualTo(bound);
      } else {
        assertThat(p.mostPushesInFlight()).as("push calls open at once, bound 16").isBetween(3, 16);
      }
      assertThat(p.revives()).as("the dead location's partition was revived").isPositive();
      SealedShuffle sealed = lifecycle.seal(shuffle);
      assertThat(sealed.lost()).isEmpty();
      assertThat(sealed.files().get(parts - 1)).as("one new epoch for the dead location")
          .containsExactly(live.path(), ShuffleLifecycle.dir("app-inflight", shuffle) + "/" + (parts - 1) + "-1");
      for (int part = 0; part < parts; part++) {
        assertThat(read(sealed.files().get(part), Map.of(0, 8L))).as("bound " + bound + ", partition " + part)
            .containsExactlyInAnyOrderElementsOf(expected(1, part, perPartition));
      }
      lifecycle.unregister(shuffle);
    }
  }

  /**
   * Node-local UFS, so the seal keeps both copies of a partition file and the status readers get names both. The
   * worker a reader tries first (the first listed) is stopped after the seal, and the UFS copy is moved away: the
   * reader fails over to the other worker's copy and reads every batch, the same bytes the UFS copy holds.
   */
  @Test
  @Order(21)
  @Timeout(180)
  void sealedFileWithTwoCopies_isReadWhole_fromTheOtherCopy_whenTheFirstCopysWorkerIsStoppedAfterTheSeal()
      throws Exception {
    cluster.waitForWorkers(3, 30_000);
    Path dir = mountNodeLocal("app-failover", "failover");
    List<PartitionLocation> locs = lifecycle.register("app-failover", 140, 2);
    PushClient p = pusher("app-failover", 140, locs);
    List<String> sent = new ArrayList<>();
    for (int i = 0; i < 20; i++) { // 20 batches of 64 KiB: each file spans two 1 MiB blocks
      byte[] b = new byte[64 << 10];
      new java.util.Random(i).nextBytes(b);
      sent.add(new String(b, StandardCharsets.ISO_8859_1));
      for (int part = 0; part < 2; part++) {
        p.push(part, 0, 5, b, 0, b.length);
      }
    }
    p.endPartitions(0, 5);
    p.finish();
    SealedShuffle sealed = lifecycle.seal(140);
    assertThat(sealed.lost()).isEmpty();
    URIStatus given = sealed.statuses().get(locs.get(0).path());
    assertThat(given.blocks()).hasSize(2).allSatisfy(b -> assertThat(b.locations()).extracting(
        x -> x.address().rpcPort()).containsExactlyInAnyOrder(locs.get(0).primaryPort(), locs.get(0).replicaPort()));
    io.strata.common.net.WorkerAddress first = given.blocks().get(0).locations().get(0).address();
    int victim = cluster.workers().indexOf(workerAt(first.rpcPort()));
    Path ufs = dir.resolve("140");
    Path aside = dir.resolve("140.aside");
    Files.move(ufs, aside);
    cluster.stopWorker(victim);
    try {
      for (int part = 0; part < 2; part++) {
        List<String> got = new ArrayList<>();
        try (PartitionReader r = new PartitionReader(fs, sealed.files().get(part), sealed.statuses(), Map.of(0, 5L))) {
          r.forEachRemaining(b -> got.add(new String(b, StandardCharsets.ISO_8859_1)));
          assertThat(r.missing(Set.of(0))).as("partition " + part).isNull();
        }
        assertThat(got).as("partition " + part).containsExactlyInAnyOrderElementsOf(sent);
      }
      // The same file as a stream: it tried the stopped worker first, and read the UFS copy's bytes elsewhere.
      byte[] want = Files.readAllBytes(aside.resolve("0-0"));
      try (io.strata.client.FileInStream in = fs.openFile(given, io.strata.client.options.OpenFileOptions.defaults())) {
        assertThat(in.readAllBytes()).isEqualTo(want);
        assertThat(in.failedWorkers()).containsExactly(first);
      }
    } finally {
      Files.move(aside, ufs);
      cluster.restartWorker(victim);
      cluster.waitForWorkers(3, 30_000);
    }
    lifecycle.unregister(140);
  }

  /**
   * Mounts a node-local dir of the test's at the app's shuffle dir (its shuffles' copies then stay on both workers);
   * creates /.shuffle first when the test runs alone (no shuffle registered before it).
   */
  private static Path mountNodeLocal(String app, String dirName) throws Exception {
    Path dir = cluster.baseDir().resolve(dirName);
    Files.createDirectories(dir);
    if (!fs.exists("/.shuffle")) {
      fs.createDirectory("/.shuffle");
    }
    fs.mount("/.shuffle/" + app, dir.toUri().toString(), MountOptions.defaults());
    return dir;
  }

  /**
   * Makes the partition's two copies differ: one batch of {@code size} bytes on each copy alone (pushed as a
   * primary's forward is, applied there only), of equal size, so their lengths match and their bytes do not.
   */
  private static void pushUnlike(String app, int shuffle, PartitionLocation l, int size) {
    byte[] mine = "p".repeat(size).getBytes(StandardCharsets.UTF_8);
    byte[] theirs = "r".repeat(size).getBytes(StandardCharsets.UTF_8);
    assertThat(stub(l.primaryPort()).push(one(app, shuffle, l, mine, BatchHeader.crc32c(mine, 0, size))
        .setForwarded(true).build()).getStatus()).isEqualTo(PushResponse.Status.OK);
    assertThat(stub(l.replicaPort()).push(one(app, shuffle, l, theirs, BatchHeader.crc32c(theirs, 0, size))
        .setForwarded(true).build()).getStatus()).isEqualTo(PushResponse.Status.OK);
  }

  /** Every block of the partition's file is listed at its replica alone, which holds the UFS copy's bytes there. */
  private static void assertListedOnlyAtReplica(PartitionLocation l, byte[] ufsCopy) throws Exception {
    for (FileBlockInfo b : fs.getBlockLocations(l.path())) {
      assertThat(b.locations()).extracting(x -> x.address().rpcPort()).containsExactly(l.replicaPort());
      assertThat(storedBytes(workerAt(l.replicaPort()), b.blockId())).isEqualTo(java.util.Arrays.copyOfRange(
          ufsCopy, (int) b.offset(), (int) (b.offset() + b.length())));
    }
  }

  private static byte[] storedBytes(io.strata.worker.WorkerProcess w, long blockId) throws Exception {
    try (io.strata.worker.store.BlockStore.ReadHandle h = w.store().openForRead(blockId, false)) {
      java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate((int) h.meta().length());
      while (buf.hasRemaining() && h.channel().read(buf, buf.position()) >= 0) {
        // fill
      }
      return buf.array();
    } catch (io.strata.common.exception.NotFoundException e) {
      return null;
    }
  }

  private static io.strata.worker.WorkerProcess workerAt(int port) {
    for (io.strata.worker.WorkerProcess w : cluster.workers()) {
      if (w.rpcPort() == port) {
        return w;
      }
    }
    throw new AssertionError("No worker at port " + port);
  }
}
