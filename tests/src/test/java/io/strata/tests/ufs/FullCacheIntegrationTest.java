package io.strata.tests.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Each write type into a real worker whose one tier is full of blocks of files that are not persisted
 * (MUST_CACHE), which the worker never evicts: MUST_CACHE is refused at once naming the tier and what
 * holds it, CACHE_THROUGH writes the blocks that do not fit to the under file system only, and
 * ASYNC_THROUGH, once its wait for room runs out, writes the rest of the file through. Every file
 * acknowledged before stays readable. The tier holds four blocks of 64 KiB, sent in chunks of 16 KiB; waits
 * are 300 ms.
 */
class FullCacheIntegrationTest {
  private static final int BLOCK = 64 * 1024;
  private static final long QUOTA = 4L * BLOCK;

  private LocalStrataCluster cluster;
  private FileSystem fs;

  @BeforeEach
  void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).set("strata.user.block.size.default", BLOCK)
        .set("strata.worker.tier.0.quota", QUOTA)
        .set("strata.worker.write.space.wait.timeout", "300ms")
        .set("strata.user.write.space.wait.timeout", "300ms")
        .set("strata.user.stream.chunk.size", BLOCK / 4)
        .build().start();
    fs = cluster.client();
  }

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static byte[] data(String path, int length) {
    byte[] b = new byte[length];
    new Random(path.hashCode()).nextBytes(b);
    return b;
  }

  private void write(String path, int length, WriteType type) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withWriteType(type))) {
      out.write(data(path, length));
    }
  }

  private byte[] read(String path) throws IOException {
    try (InputStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }

  private long cachedBlocks(String path) throws IOException {
    return fs.getBlockLocations(path).stream().filter(b -> !b.locations().isEmpty()).count();
  }

  /** Three of the four blocks held by MUST_CACHE files: one block of room left. */
  private void fillThreeBlocks() throws IOException {
    write("/m1", 2 * BLOCK, WriteType.MUST_CACHE);
    write("/m2", BLOCK, WriteType.MUST_CACHE);
  }

  private void assertFillersReadBack() throws IOException {
    assertThat(read("/m1")).isEqualTo(data("/m1", 2 * BLOCK));
    assertThat(read("/m2")).isEqualTo(data("/m2", BLOCK));
  }

  @Test
  void reservationsPastTheWaitersBound_doNotWait_andSayWhy_whileTheWaitingOneGetsRoomLater() throws Exception {
    cluster.close();
    cluster = LocalStrataCluster.builder().workers(1).set("strata.user.block.size.default", BLOCK)
        .set("strata.worker.tier.0.quota", QUOTA)
        .set("strata.worker.write.space.wait.timeout", "30s")
        .set("strata.worker.write.space.waiters.max", "1")
        .build().start();
    fs = cluster.client();
    write("/m1", 2 * BLOCK, WriteType.MUST_CACHE);
    write("/m2", 2 * BLOCK, WriteType.MUST_CACHE); // full of blocks the worker never evicts
    FileOutStream a = fs.createFile("/ra", CreateFileOptions.defaults().withWriteType(WriteType.MUST_CACHE));
    FileOutStream b = fs.createFile("/rb", CreateFileOptions.defaults().withWriteType(WriteType.MUST_CACHE));
    io.grpc.ManagedChannel ch = io.strata.common.grpc.GrpcChannels.forAddress("localhost",
        cluster.worker(0).rpcPort(), 8 << 20);
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      var stub = io.strata.proto.BlockWorkerServiceGrpc.newBlockingStub(ch);
      java.util.concurrent.Future<?> waiting = pool.submit(() -> stub.withDeadlineAfter(60,
          java.util.concurrent.TimeUnit.SECONDS).reserveBlock(io.strata.proto.ReserveBlockRequest.newBuilder()
          .setBlockId(io.strata.common.id.BlockId.of(a.status().id(), 0)).setMaxLength(BLOCK).setWaitMs(30_000)
          .build()));
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
          .until(() -> cluster.worker(0).store().awaitedBytes() == BLOCK);

      // The one waiter's place is taken: this reservation is refused now, naming the key, not after 30 s.
      io.grpc.StatusRuntimeException refused = org.junit.jupiter.api.Assertions.assertThrows(
          io.grpc.StatusRuntimeException.class, () -> stub.withDeadlineAfter(20, java.util.concurrent.TimeUnit.SECONDS)
              .reserveBlock(io.strata.proto.ReserveBlockRequest.newBuilder()
                  .setBlockId(io.strata.common.id.BlockId.of(b.status().id(), 0)).setMaxLength(BLOCK)
                  .setWaitMs(30_000).build()));
      assertThat(refused.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.RESOURCE_EXHAUSTED);
      assertThat(refused.getStatus().getDescription()).contains("strata.worker.write.space.waiters.max=1");
      assertThat(waiting.isDone()).as("the first still waits for room").isFalse();

      fs.delete("/m1"); // room: the waiting reservation gets it
      waiting.get(20, java.util.concurrent.TimeUnit.SECONDS);
      // What holds the acknowledged bytes: /m2's blocks, untouched.
      assertThat(read("/m2")).isEqualTo(data("/m2", 2 * BLOCK));
    } finally {
      pool.shutdownNow();
      io.strata.common.grpc.GrpcChannels.close(ch);
      a.cancel();
      b.cancel();
    }
  }

  @Test
  void mustCache_intoACacheFullOfUnpersistedBlocks_isRefusedAtOnce_namingTheTierAndWhatHoldsIt() throws Exception {
    fillThreeBlocks();
    write("/m3", BLOCK, WriteType.MUST_CACHE); // full now

    assertThatThrownBy(() -> write("/m4", BLOCK / 2, WriteType.MUST_CACHE))
        .isInstanceOf(ResourceExhaustedException.class)
        .hasMessageContaining("Tier MEM")
        .hasMessageContaining(QUOTA + " of " + QUOTA + " bytes used")
        .hasMessageContaining("held by " + QUOTA + " bytes of blocks of files not yet persisted");

    assertThat(fs.exists("/m4")).as("the refused file is gone").isFalse();
    // A writer that goes on to close is told again that its write failed, never that it was written.
    FileOutStream out = fs.createFile("/m5", CreateFileOptions.defaults().withWriteType(WriteType.MUST_CACHE));
    assertThatThrownBy(() -> {
      out.write(data("/m5", BLOCK / 2));
      out.close(); // the first close may be where the refusal comes
    }).isInstanceOf(ResourceExhaustedException.class);
    assertThatThrownBy(out::close).isInstanceOf(IOException.class).hasMessageContaining("failed before")
        .hasCauseInstanceOf(ResourceExhaustedException.class);
    assertThatThrownBy(out::close).hasMessageContaining("failed before");
    assertThat(fs.exists("/m5")).isFalse();
    assertFillersReadBack();
    assertThat(read("/m3")).isEqualTo(data("/m3", BLOCK));
  }

  @Test
  void cacheThrough_intoAFullCache_sendsTheBlocksThatDoNotFitToTheUfsOnly_andReadsBackExact() throws Exception {
    fillThreeBlocks();

    write("/ct", 3 * BLOCK - 5, WriteType.CACHE_THROUGH); // block 0 fits, 1 and 2 do not

    URIStatus st = fs.getStatus("/ct");
    assertThat(st.isPersisted()).isTrue();
    assertThat(st.length()).isEqualTo(3 * BLOCK - 5);
    assertThat(cachedBlocks("/ct")).isEqualTo(1);
    assertThat(Files.readAllBytes(cluster.rootUfsDir().resolve("ct"))).isEqualTo(data("/ct", 3 * BLOCK - 5));
    assertThat(read("/ct")).isEqualTo(data("/ct", 3 * BLOCK - 5));
    assertFillersReadBack();
  }

  @Test
  void cacheThrough_whoseBlockRunsOutOfRoomMidBlock_dropsIt_andTheUfsCopyHasEveryByte() throws Exception {
    fillThreeBlocks();
    write("/half", BLOCK / 2, WriteType.MUST_CACHE); // half a block of room left: two chunks

    write("/mid", 2 * BLOCK, WriteType.CACHE_THROUGH);

    assertThat(fs.getStatus("/mid").isPersisted()).isTrue();
    assertThat(cachedBlocks("/mid")).isZero();
    assertThat(read("/mid")).isEqualTo(data("/mid", 2 * BLOCK));
    assertThat(read("/half")).isEqualTo(data("/half", BLOCK / 2));
    assertFillersReadBack();
  }

  @Test
  void asyncThrough_whenNoWorkerMakesRoomInTime_writesTheRestThroughToTheUfs_andCompletesPersisted()
      throws Exception {
    fillThreeBlocks();

    write("/at", 3 * BLOCK - 7, WriteType.ASYNC_THROUGH); // block 0 reserved; block 1 finds no room in 300 ms

    URIStatus st = fs.getStatus("/at");
    assertThat(st.isPersisted()).as("completed through the UFS, not left to the persist scheduler").isTrue();
    assertThat(cachedBlocks("/at")).isEqualTo(1);
    Path ufsCopy = cluster.rootUfsDir().resolve("at");
    assertThat(Files.readAllBytes(ufsCopy)).as("block 0 replayed, the rest streamed")
        .isEqualTo(data("/at", 3 * BLOCK - 7));
    assertThat(read("/at")).isEqualTo(data("/at", 3 * BLOCK - 7));
    assertFillersReadBack();
    assertThat(cluster.worker(0).store().usedBytes()).isLessThanOrEqualTo(QUOTA);
  }

  @Test
  void asyncThrough_intoACacheWithRoom_reservesWholeBlocks_andCompletesToBePersisted() throws Exception {
    write("/roomy", 2 * BLOCK + 3, WriteType.ASYNC_THROUGH);

    URIStatus st = fs.getStatus("/roomy");
    assertThat(st.persistenceState()).isIn("TO_BE_PERSISTED", "PERSISTED");
    assertThat(cachedBlocks("/roomy")).isEqualTo(3);
    assertThat(cluster.worker(0).store().usedBytes()).as("unused reservations returned at commit")
        .isEqualTo(2L * BLOCK + 3);
    assertThat(read("/roomy")).isEqualTo(data("/roomy", 2 * BLOCK + 3));
  }
}
