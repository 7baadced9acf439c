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
import io.strata.common.exception.StrataException;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Read and write failover in one JVM ({@link LocalStrataCluster}): a worker stopped in the middle of a
 * block stream. Short-circuit is off so the block bytes travel over the worker's data port, the stream
 * that the stop cuts. Blocks of 4 MiB in 64 KiB chunks, so a stop lands mid-block. The kill of a real
 * worker process, with 256 MiB files, is {@code WorkerFailoverIT}.
 */
@Timeout(120)
class FailoverIntegrationTest {
  private static final int BLOCK = 4 << 20;
  private LocalStrataCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private FileSystem start(int workers, String... keyValues) throws IOException {
    LocalStrataCluster.Builder b = LocalStrataCluster.builder().workers(workers)
        .set("strata.user.shortcircuit.mode", "off")
        .set("strata.user.stream.chunk.size", "64KB")
        .set("strata.user.block.write.location.policy", "ROUND_ROBIN")
        .set("strata.user.block.retry.backoff.base", "10ms")
        .set("strata.user.file.passive.cache.enabled", "false");
    for (int i = 0; i < keyValues.length; i += 2) {
      b.set(keyValues[i], keyValues[i + 1]);
    }
    cluster = b.build().start();
    return cluster.client();
  }

  private static byte[] content(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static void write(FileSystem fs, String path, WriteType type, byte[] data) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK).withWriteType(type))) {
      out.write(data);
    }
  }

  /** The index of the worker at this data port. */
  private int workerAt(int port) {
    for (int i = 0; i < cluster.workers().size(); i++) {
      if (cluster.worker(i).rpcPort() == port) {
        return i;
      }
    }
    throw new AssertionError("no worker on port " + port);
  }

  /** The only worker that lists block {@code index} of {@code path}. */
  private int onlyHolder(FileSystem fs, String path, int index) throws IOException {
    FileBlockInfo block = fs.getBlockLocations(path).get(index);
    assertThat(block.locations()).as("copies of block %d", index).hasSize(1);
    return workerAt(block.locations().get(0).address().rpcPort());
  }

  private Path workerDir(int i) {
    return cluster.baseDir().resolve("worker-" + i);
  }

  private static List<Path> tempBlocks(Path workerDir) throws IOException {
    Path tmp = workerDir.resolve("tmp");
    if (!Files.isDirectory(tmp)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(tmp)) {
      return s.filter(Files::isRegularFile).toList();
    }
  }

  /** The worker receiving the block being written now (the one with a temp block). */
  private int writingWorker() {
    int[] found = {-1};
    await().atMost(Duration.ofSeconds(20)).until(() -> {
      for (int i = 0; i < cluster.workers().size(); i++) {
        if (!cluster.worker(i).isClosed() && !tempBlocks(workerDir(i)).isEmpty()) {
          found[0] = i;
          return true;
        }
      }
      return false;
    });
    return found[0];
  }

  @Test
  void read_failsOverToTheUfsThroughAnotherWorker_whenTheWorkerServingTheBlockStopsMidBlock_andIsByteExact()
      throws Exception {
    FileSystem fs = start(2);
    byte[] data = content(3 * BLOCK + 1000, 1);
    write(fs, "/persisted", WriteType.CACHE_THROUGH, data);
    int holder = onlyHolder(fs, "/persisted", 1);

    byte[] back = new byte[data.length];
    try (FileInStream in = fs.openFile("/persisted")) {
      int first = BLOCK + BLOCK / 4; // a quarter into block 1
      assertThat(in.readNBytes(back, 0, first)).isEqualTo(first);
      cluster.stopWorker(holder);
      int rest = in.readNBytes(back, first, data.length - first);
      assertThat(first + rest).isEqualTo(data.length);
      assertThat(in.read()).isEqualTo(-1);
    }
    assertThat(back).isEqualTo(data);
  }

  @Test
  void positionedRead_failsOverToTheUfs_whenTheWorkerStopsMidRange_andIsByteExact() throws Exception {
    FileSystem fs = start(2);
    byte[] data = content(2 * BLOCK, 2);
    write(fs, "/pread", WriteType.CACHE_THROUGH, data);
    int holder = onlyHolder(fs, "/pread", 0);

    try (FileInStream in = fs.openFile("/pread")) {
      byte[] head = new byte[1000];
      in.readFully(10, head, 0, head.length); // a first read from the holder
      cluster.stopWorker(holder);
      byte[] range = new byte[BLOCK - 100];
      in.readFully(50, range, 0, range.length);
      assertThat(range).isEqualTo(java.util.Arrays.copyOfRange(data, 50, 50 + range.length));
      assertThat(in.getPos()).isZero();
    }
  }

  @Test
  void read_afterTheLastCopyFailed_errorNamesTheFileBlockPositionAndEveryWorkerTriedWithItsFailure()
      throws Exception {
    FileSystem fs = start(2);
    byte[] data = content(2 * BLOCK, 3);
    write(fs, "/gone", WriteType.CACHE_THROUGH, data);
    int holder = onlyHolder(fs, "/gone", 0);
    String holderAddress = fs.getBlockLocations("/gone").get(0).locations().get(0).address().toString();
    long blockId = fs.getBlockLocations("/gone").get(0).blockId();
    // The UFS copy goes too (behind Strata's back), so the other worker's UFS read fails as well.
    Files.delete(cluster.rootUfsDir().resolve("gone"));

    try (FileInStream in = fs.openFile("/gone")) {
      byte[] buf = new byte[100_000];
      in.readNBytes(buf, 0, buf.length);
      cluster.stopWorker(holder);
      assertThat(in.getPos()).isEqualTo(buf.length);
      // Back within block 0: the stream must ask a worker again. (Read on from here, the bytes of block 0
      // the flow-control window let the stopped worker send ahead would still be served from the buffer.)
      in.seek(buf.length / 2);
      String other = cluster.worker(1 - holder).rpcPort() + "";
      assertThatThrownBy(() -> in.readNBytes(new byte[BLOCK], 0, BLOCK))
          .isInstanceOf(StrataException.class)
          .hasMessageContaining("/gone")
          .hasMessageContaining("block " + blockId)
          .hasMessageContaining("position " + in.getPos())
          .hasMessageContaining(holderAddress)
          .hasMessageContaining(":" + other)
          .hasMessageContaining("under file system");
    }
  }

  @Test
  void read_triesTheOnlyCopyAgain_whenItsWorkerComesBack_insteadOfFailingAtOnce() throws Exception {
    // One worker, a file in no under file system: the worker's copy is the only one. The retries are
    // generous so the worker's restart (and gRPC's reconnect backoff) fits within them.
    FileSystem fs = start(1, "strata.user.block.retry.backoff.base", "200ms",
        "strata.user.block.retry.backoff.max", "2s", "strata.user.block.read.retry.max", "10");
    byte[] data = content(2 * BLOCK + 500, 5);
    write(fs, "/comeback", WriteType.MUST_CACHE, data);
    String address = fs.getBlockLocations("/comeback").get(0).locations().get(0).address().toString();

    byte[] back = new byte[data.length];
    try (FileInStream in = fs.openFile("/comeback")) {
      int first = BLOCK / 4;
      assertThat(in.readNBytes(back, 0, first)).isEqualTo(first);
      cluster.stopWorker(0);
      Thread restarter = new Thread(() -> {
        try {
          Thread.sleep(1000);
          cluster.restartWorker(0);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      restarter.start();
      // Back within block 0 (bytes the stopped worker sent ahead are buffered): the stream asks the worker
      // again while it is down, fails, and tries it again until it is back. The bytes are held by the
      // worker's dir, which the restart keeps.
      in.seek(first / 2);
      int rest = in.readNBytes(back, first / 2, data.length - first / 2);
      restarter.join();
      assertThat(first / 2 + rest).isEqualTo(data.length);
      assertThat(in.failedWorkers()).as("the read failed on the stopped worker first")
          .extracting(Object::toString).containsExactly(address);
    }
    assertThat(back).isEqualTo(data);
  }

  @ParameterizedTest
  @EnumSource(value = WriteType.class, names = {"MUST_CACHE", "ASYNC_THROUGH"})
  void write_failsOverMidBlockToAnotherWorker_whenItsWorkerStops_andTheFileReadsBackExact(WriteType type)
      throws Exception {
    FileSystem fs = start(3, "strata.user.file.writetype.default", type.name());
    byte[] data = content(4 * BLOCK + 12345, 4);
    int cut = 2 * BLOCK + BLOCK / 2; // half-way through block 2
    int stopped;
    try (FileOutStream out = fs.createFile("/w", CreateFileOptions.defaults().withBlockSize(BLOCK))) {
      out.write(data, 0, cut);
      stopped = writingWorker();
      cluster.stopWorker(stopped);
      out.write(data, cut, data.length - cut);
    }
    // MUST_CACHE keeps one copy per block: the stopped worker's earlier blocks come back with it.
    cluster.restartWorker(stopped);
    int stoppedPort = cluster.worker(stopped).rpcPort();
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
        assertThat(fs.getBlockLocations("/w")).allSatisfy(b -> assertThat(b.locations()).isNotEmpty()));
    assertThat(fs.getBlockLocations("/w").get(2).locations())
        .as("block 2 was committed by the worker it failed over to")
        .allSatisfy(l -> assertThat(l.address().rpcPort()).isNotEqualTo(stoppedPort));
    try (FileInStream in = fs.openFile("/w")) {
      assertThat(in.readAllBytes()).isEqualTo(data);
    }
  }

  @Test
  void write_failsCleanly_whenTheBlockSoFarOutgrewTheFailoverBuffer() throws Exception {
    FileSystem fs = start(2, "strata.user.block.write.failover.buffer.size", "1MB");
    byte[] data = content(2 * BLOCK, 5);
    int cut = BLOCK + BLOCK / 2;
    FileOutStream out = fs.createFile("/big", CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(WriteType.MUST_CACHE));
    out.write(data, 0, cut);
    int stopped = writingWorker();
    cluster.stopWorker(stopped);
    assertThatThrownBy(() -> {
      out.write(data, cut, data.length - cut);
      out.close();
    }).isInstanceOf(StrataException.class)
        .hasMessageContaining("/big")
        .hasMessageContaining("strata.user.block.write.failover.buffer.size")
        .hasMessageContaining(":" + cluster.worker(stopped).rpcPort());
    assertThat(fs.exists("/big")).as("nothing of a failed write is visible").isFalse();
    int survivor = 1 - stopped;
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(tempBlocks(workerDir(survivor))).as("temp blocks left on the surviving worker").isEmpty());
  }

  /**
   * CACHE_THROUGH over two workers in ROUND_ROBIN: block 0 goes to one, the under file system stream to the
   * other; the block's worker stops mid-block.
   */
  private int startCacheThroughAndStopTheBlockWorker(FileSystem fs, FileOutStream out, byte[] data, int cut)
      throws IOException {
    out.write(data, 0, cut);
    int stopped = writingWorker();
    assertThat(cluster.worker(stopped).openStreams()).as("the block's worker is not the UFS stream's").isEqualTo(1);
    cluster.stopWorker(stopped);
    return stopped;
  }

  @Test
  void write_cacheThrough_failsOverTheCachedPart_whenTheBlockWorkerStops() throws Exception {
    FileSystem fs = start(2);
    byte[] data = content(BLOCK + BLOCK / 3, 6);
    int cut = BLOCK / 2;
    int stopped;
    try (FileOutStream out = fs.createFile("/ct", CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(WriteType.CACHE_THROUGH))) {
      stopped = startCacheThroughAndStopTheBlockWorker(fs, out, data, cut);
      out.write(data, cut, data.length - cut);
    }
    int stoppedPort = cluster.worker(stopped).rpcPort();
    assertThat(fs.getStatus("/ct").isPersisted()).isTrue();
    assertThat(fs.getBlockLocations("/ct")).as("both blocks cached, on the worker that did not stop")
        .allSatisfy(b -> assertThat(b.locations()).singleElement()
            .satisfies(l -> assertThat(l.address().rpcPort()).isNotEqualTo(stoppedPort)));
    assertThat(Files.readAllBytes(cluster.rootUfsDir().resolve("ct"))).isEqualTo(data);
    try (FileInStream in = fs.openFile("/ct")) {
      assertThat(in.readAllBytes()).isEqualTo(data);
    }
  }

  @Test
  void write_cacheThrough_leavesTheBlockToTheUfsCopy_whenItCannotFailOver() throws Exception {
    FileSystem fs = start(2, "strata.user.block.write.failover.buffer.size", "1MB");
    byte[] data = content(BLOCK + BLOCK / 3, 7);
    int cut = BLOCK / 2; // past the 1 MB buffer: block 0 cannot be sent again
    try (FileOutStream out = fs.createFile("/ct2", CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(WriteType.CACHE_THROUGH))) {
      startCacheThroughAndStopTheBlockWorker(fs, out, data, cut);
      out.write(data, cut, data.length - cut);
    }
    assertThat(fs.getStatus("/ct2").isPersisted()).isTrue();
    assertThat(fs.getBlockLocations("/ct2").get(0).locations()).as("block 0 is in the UFS copy only").isEmpty();
    assertThat(fs.getBlockLocations("/ct2").get(1).locations()).as("the next block is cached again").hasSize(1);
    assertThat(Files.readAllBytes(cluster.rootUfsDir().resolve("ct2"))).isEqualTo(data);
    try (FileInStream in = fs.openFile("/ct2")) {
      assertThat(in.readAllBytes()).isEqualTo(data);
    }
  }
}
