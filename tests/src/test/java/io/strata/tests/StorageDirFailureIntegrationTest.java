package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.cli.StrataCli;
import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.UnavailableException;
import io.strata.minicluster.LocalStrataCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * A storage dir failing under a running worker (one worker, one tier of two dirs, blocks spread by the
 * RoundRobin allocator): the dir turns BAD in {@code fsadmin report} with the count of blocks it held,
 * the master drops the worker from exactly those blocks, the other dir keeps serving reads and takes
 * every new write, and when the last dir fails the worker shuts itself down and the master marks it
 * lost. Also a worker that starts with one unusable dir.
 *
 * <p>The failure tests run in order on one cluster, each building on the state the previous left; the
 * tier manager runs every 100ms, so its dir health check finds a broken dir quickly.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class StorageDirFailureIntegrationTest {
  private static final int KB = 1024;
  private static final long QUOTA = 8L << 20;

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;
  private static FileSystem fs;
  private static Path dir0;
  private static Path dir1;
  /** File path → content, for every file written before the failure. */
  private static final Map<String, byte[]> files = new LinkedHashMap<>();
  /** The ids of the blocks dir1 held when it was broken. */
  private static Set<Long> lostBlocks;

  @BeforeAll
  static void start() throws IOException {
    dir0 = tmp.resolve("disk0");
    dir1 = tmp.resolve("disk1");
    cluster = startCluster(dir0 + "," + dir1);
    fs = cluster.client();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static LocalStrataCluster startCluster(String tier0Dirs) throws IOException {
    return LocalStrataCluster.builder().workers(1)
        .set("strata.worker.tier.0.dirs", tier0Dirs)
        .set("strata.worker.tier.0.quota", "8MB")
        .set("strata.worker.allocator.class", "RoundRobin")
        .set("strata.worker.tier.manager.interval", "100ms")
        // short, for the last test's lost worker, but not so short that a loaded machine delaying the live worker's
        // heartbeats (every 200 ms) for a second has it taken for lost, its locations dropped, in the other tests
        .set("strata.master.worker.timeout", "3s")
        .set("strata.user.block.size.default", "256KB")
        .build().start();
  }

  // ---- helpers ----

  private static String workerAddress(LocalStrataCluster c) {
    return "localhost:" + c.worker(0).rpcPort();
  }

  private static String report(LocalStrataCluster c) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = StrataCli.run(c.clientConf(), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), "fsadmin", "report");
    assertThat(code).as("fsadmin report exit code, stderr: %s", err.toString(StandardCharsets.UTF_8)).isZero();
    return out.toString(StandardCharsets.UTF_8);
  }

  /** The one {@code dir} line of the report for {@code dir}. */
  private static String dirLine(LocalStrataCluster c, String report, Path dir) {
    List<String> lines = report.lines()
        .filter(l -> l.startsWith("dir worker=" + workerAddress(c) + " tier=MEM path=" + dir + " "))
        .collect(Collectors.toList());
    assertThat(lines).as("dir lines of %s in:%n%s", dir, report).hasSize(1);
    return lines.get(0);
  }

  private static String tierLine(LocalStrataCluster c, String report) {
    List<String> lines = report.lines()
        .filter(l -> l.startsWith("  tier worker=" + workerAddress(c) + " tier=MEM "))
        .collect(Collectors.toList());
    assertThat(lines).as("tier lines in:%n%s", report).hasSize(1);
    return lines.get(0);
  }

  /** Block ids of the block files under {@code <dir>/blocks}. */
  private static Set<Long> blockFiles(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir.resolve("blocks"))) {
      // Each block file has its checksum sidecar <id>.crc beside it: only the block files count.
      return s.map(p -> p.getFileName().toString()).filter(n -> !n.endsWith(".crc"))
          .map(Long::parseLong).collect(Collectors.toSet());
    }
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
        Files.delete(p);
      }
    }
  }

  /**
   * Writes MUST_CACHE: the worker's dirs hold the only copy, so a block in a broken dir is lost for sure
   * (an ASYNC_THROUGH file might be persisted first and read back from the UFS: timing would decide).
   */
  private static byte[] write(FileSystem client, String path, long seed, int length) throws IOException {
    byte[] content = new byte[length];
    new Random(seed).nextBytes(content);
    try (FileOutStream out = client.createFile(path,
        CreateFileOptions.defaults().withWriteType(WriteType.MUST_CACHE))) {
      out.write(content);
    }
    return content;
  }

  private static byte[] read(FileSystem client, String path) throws IOException {
    try (FileInStream in = client.openFile(path)) {
      return in.readAllBytes();
    }
  }

  private static List<Long> blockIds(FileSystem client, String path) throws IOException {
    return client.getBlockLocations(path).stream().map(FileBlockInfo::blockId).collect(Collectors.toList());
  }

  // ---- a dir failing under a running worker ----

  @Test
  @Order(1)
  void brokenDir_turnsBad_withTheCountOfBlocksItHeld_andTheMasterDropsExactlyThoseLocations()
      throws IOException {
    // Single-block files alternate between the dirs; three-block files span both.
    for (int i = 0; i < 6; i++) {
      files.put("/single/s" + i, write(fs, "/single/s" + i, i, 200 * KB));
    }
    for (int i = 0; i < 2; i++) {
      files.put("/multi/m" + i, write(fs, "/multi/m" + i, 100 + i, 700 * KB));
    }
    Set<Long> all = new HashSet<>();
    for (String path : files.keySet()) {
      all.addAll(blockIds(fs, path));
    }
    assertThat(all).hasSize(6 + 2 * 3);
    Set<Long> in0 = blockFiles(dir0);
    lostBlocks = blockFiles(dir1);
    assertThat(in0).isNotEmpty().doesNotContainAnyElementsOf(lostBlocks);
    assertThat(lostBlocks).isNotEmpty();
    Set<Long> union = new HashSet<>(in0);
    union.addAll(lostBlocks);
    assertThat(union).isEqualTo(all);

    deleteTree(dir1);

    String address = workerAddress(cluster);
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      String report = report(cluster);
      assertThat(dirLine(cluster, report, dir1)).isEqualTo("dir worker=" + address + " tier=MEM path=" + dir1
          + " state=BAD capacity=" + QUOTA + " used=0 lost_blocks=" + lostBlocks.size());
      assertThat(dirLine(cluster, report, dir0)).startsWith("dir worker=" + address + " tier=MEM path=" + dir0
          + " state=OK capacity=" + QUOTA + " used=").doesNotContain("lost_blocks");
      // The tier counts only its good dir's capacity now.
      assertThat(tierLine(cluster, report)).startsWith("  tier worker=" + address + " tier=MEM capacity=" + QUOTA
          + " used=").endsWith(" bad_dirs=1 lost_blocks=" + lostBlocks.size());
    });
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      for (String path : files.keySet()) {
        for (FileBlockInfo b : fs.getBlockLocations(path)) {
          if (lostBlocks.contains(b.blockId())) {
            assertThat(b.locations()).as("block %d of %s", b.blockId(), path).isEmpty();
          } else {
            assertThat(b.locations()).as("block %d of %s", b.blockId(), path).hasSize(1);
            assertThat(b.locations().get(0).address().toString()).isEqualTo(address);
          }
        }
      }
    });
    assertThat(cluster.worker(0).isClosed()).isFalse();
    assertThat(fs.getWorkers()).hasSize(1);
  }

  @Test
  @Order(2)
  void filesInTheGoodDir_stillReadBack_andNewWritesLandOnlyThere() throws IOException {
    List<String> intact = new ArrayList<>();
    for (String path : files.keySet()) {
      if (blockIds(fs, path).stream().noneMatch(lostBlocks::contains)) {
        intact.add(path);
      }
    }
    assertThat(intact).isNotEmpty();
    for (String path : intact) {
      assertThat(read(fs, path)).as(path).isEqualTo(files.get(path));
    }

    Set<Long> before = blockFiles(dir0);
    Map<String, byte[]> fresh = new LinkedHashMap<>();
    for (int i = 0; i < 4; i++) {
      fresh.put("/after/s" + i, write(fs, "/after/s" + i, 200 + i, 200 * KB));
    }
    fresh.put("/after/m", write(fs, "/after/m", 300, 900 * KB));
    Set<Long> written = new HashSet<>();
    for (String path : fresh.keySet()) {
      written.addAll(blockIds(fs, path));
    }
    assertThat(written).hasSize(4 + 4);
    Set<Long> now = blockFiles(dir0);
    assertThat(now).containsAll(written).containsAll(before).hasSize(before.size() + written.size());
    // Nothing recreated the broken dir.
    assertThat(dir1).doesNotExist();
    for (Map.Entry<String, byte[]> f : fresh.entrySet()) {
      assertThat(read(fs, f.getKey())).as(f.getKey()).isEqualTo(f.getValue());
    }
  }

  @Test
  @Order(3)
  void fileWithALostBlock_failsWithUnavailable() throws IOException {
    List<String> damaged = new ArrayList<>();
    for (String path : files.keySet()) {
      if (blockIds(fs, path).stream().anyMatch(lostBlocks::contains)) {
        damaged.add(path);
      }
    }
    // Both three-block files had blocks in each dir; the single-block files alternated.
    assertThat(damaged).contains("/multi/m0", "/multi/m1").hasSizeGreaterThan(2);
    for (String path : damaged) {
      assertThat(fs.getStatus(path).persistenceState()).as(path).isEqualTo(URIStatus.NOT_PERSISTED);
      assertThatThrownBy(() -> read(fs, path)).as(path).isInstanceOf(UnavailableException.class)
          .hasMessageContaining("no reachable worker");
    }
  }

  @Test
  @Order(4)
  void lastDirFailing_shutsTheWorkerDown_andTheMasterMarksItLost() throws IOException {
    deleteTree(dir0);
    Files.writeString(dir0, "not a dir any more"); // the mount point turned into a file

    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.worker(0).isClosed());
    await().atMost(Duration.ofSeconds(15)).ignoreExceptions()
        .until(() -> fs.getWorkers().isEmpty() && fs.getClusterInfo().lostWorkers() == 1);
    String report = report(cluster);
    assertThat(report).contains("Live workers: 0", "Lost workers: 1",
        "lost worker id=" + cluster.worker(0).workerId() + " address=" + workerAddress(cluster));
    assertThat(fs.getStatus("/after/s0").persistenceState()).isEqualTo(URIStatus.NOT_PERSISTED);
    assertThatThrownBy(() -> read(fs, "/after/s0")).isInstanceOf(UnavailableException.class)
        .hasMessageContaining("no reachable worker");
  }

  // ---- a dir unusable at start ----

  @Test
  @Order(5)
  void workerStartedWithADirThatIsAFile_reportsItBad_andServesFromTheOtherDir() throws IOException {
    Path good = tmp.resolve("start/good");
    Path file = tmp.resolve("start/file");
    Files.createDirectories(file.getParent());
    Files.writeString(file, "a regular file where a dir should be");

    try (LocalStrataCluster c = startCluster(good + "," + file)) {
      FileSystem client = c.client();
      String address = workerAddress(c);
      String report = report(c);
      assertThat(dirLine(c, report, file)).isEqualTo("dir worker=" + address + " tier=MEM path=" + file
          + " state=BAD capacity=" + QUOTA + " used=0");
      assertThat(dirLine(c, report, good)).isEqualTo("dir worker=" + address + " tier=MEM path=" + good
          + " state=OK capacity=" + QUOTA + " used=0");
      assertThat(tierLine(c, report)).isEqualTo("  tier worker=" + address + " tier=MEM capacity=" + QUOTA
          + " used=0 bad_dirs=1 lost_blocks=0");

      Map<String, byte[]> written = new LinkedHashMap<>();
      for (int i = 0; i < 3; i++) {
        written.put("/s" + i, write(client, "/s" + i, 400 + i, 200 * KB));
      }
      written.put("/m", write(client, "/m", 500, 600 * KB));
      Set<Long> ids = new HashSet<>();
      for (String path : written.keySet()) {
        ids.addAll(blockIds(client, path));
      }
      assertThat(ids).hasSize(3 + 3);
      assertThat(blockFiles(good)).isEqualTo(ids);
      assertThat(file).isRegularFile();
      for (Map.Entry<String, byte[]> f : written.entrySet()) {
        assertThat(read(client, f.getKey())).as(f.getKey()).isEqualTo(f.getValue());
      }
      long bytes = written.values().stream().mapToLong(b -> b.length).sum();
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
          assertThat(dirLine(c, report(c), good)).isEqualTo("dir worker=" + address + " tier=MEM path=" + good
              + " state=OK capacity=" + QUOTA + " used=" + bytes));
      assertThat(c.worker(0).isClosed()).isFalse();
    }
  }
}
