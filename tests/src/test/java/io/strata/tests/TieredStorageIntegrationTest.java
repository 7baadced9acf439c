package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.cli.StrataCli;
import io.strata.client.BlockLocation;
import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.ReadType;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.TieredBlockStore;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Blocks across three tiers of one worker (MEM 4MB, SSD 8MB, HDD 32MB, 1MB blocks), seen from outside:
 * {@code strata fs location}, {@code strata fsadmin report} and the client's block locations. The tier
 * manager's interval is an hour, so the test drives its rounds itself and every placement is
 * deterministic; the master learns of moves from heartbeats (every 200ms), so those are awaited.
 *
 * <p>The tests run in order on one cluster: the first writes 14 blocks (3.5 times the MEM quota, so
 * every tier gets some) and the later ones move them.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TieredStorageIntegrationTest {
  private static final int MB = 1 << 20;
  private static final long MEM_QUOTA = 4L * MB;
  private static final long SSD_QUOTA = 8L * MB;
  private static final long HDD_QUOTA = 32L * MB;
  private static final int FILES = 7;
  private static final int BLOCKS_PER_FILE = 2;
  /** {@code fs location} lines; one worker, so one address and one tier per block. */
  private static final Pattern LOCATION =
      Pattern.compile("block=(\\d+) offset=(\\d+) length=(\\d+) workers=(\\S*) tiers=(\\S*)");

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;
  private static FileSystem fs;
  private static Path memDir;
  private static Path ssdDir;
  private static Path hddDir;
  /** File path → content, in write order. */
  private static final Map<String, byte[]> files = new LinkedHashMap<>();
  /** Every block id in write order. */
  private static final List<Long> blocksInWriteOrder = new ArrayList<>();

  @BeforeAll
  static void start() throws IOException {
    memDir = tmp.resolve("mem");
    ssdDir = tmp.resolve("ssd");
    hddDir = tmp.resolve("hdd");
    cluster = LocalStrataCluster.builder().workers(1)
        .set("strata.worker.tier.0.alias", "MEM")
        .set("strata.worker.tier.0.dirs", memDir)
        .set("strata.worker.tier.0.quota", "4MB")
        .set("strata.worker.tier.1.alias", "SSD")
        .set("strata.worker.tier.1.dirs", ssdDir)
        .set("strata.worker.tier.1.quota", "8MB")
        .set("strata.worker.tier.2.alias", "HDD")
        .set("strata.worker.tier.2.dirs", hddDir)
        .set("strata.worker.tier.2.quota", "32MB")
        .set("strata.worker.annotator.class", "LRU")
        .set("strata.worker.tier.manager.interval", "1h")
        .set("strata.user.block.size.default", "1MB")
        .build().start();
    fs = cluster.client();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  // ---- helpers ----

  private static TieredBlockStore store() {
    return cluster.worker(0).tieredStore();
  }

  private static String workerAddress() {
    return "localhost:" + cluster.worker(0).rpcPort();
  }

  /** Runs the command line as {@code bin/strata} does; returns stdout, failing on a non-zero exit. */
  private static String cli(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = StrataCli.run(cluster.clientConf(), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), args);
    assertThat(code).as("exit code of %s, stderr: %s", List.of(args), err.toString(StandardCharsets.UTF_8))
        .isZero();
    return out.toString(StandardCharsets.UTF_8);
  }

  /** Block id → tier, as {@code strata fs location} prints it for every file; checks the line format. */
  private static Map<Long, String> tiersFromLocationCommand() {
    List<String> args = new ArrayList<>(List.of("fs", "location"));
    args.addAll(files.keySet());
    String out = cli(args.toArray(new String[0]));
    Map<Long, String> tiers = new HashMap<>();
    List<String> lines = out.lines().collect(Collectors.toList());
    assertThat(lines).hasSize(FILES * BLOCKS_PER_FILE);
    for (String line : lines) {
      Matcher m = LOCATION.matcher(line);
      assertThat(m.matches()).as(line).isTrue();
      assertThat(Long.parseLong(m.group(3))).as(line).isEqualTo(MB);
      assertThat(m.group(4)).as(line).isEqualTo(workerAddress());
      tiers.put(Long.parseLong(m.group(1)), m.group(5));
    }
    return tiers;
  }

  /** Block id → tier, from the client's block locations. */
  private static Map<Long, String> tiersFromClient() throws IOException {
    Map<Long, String> tiers = new HashMap<>();
    for (String path : files.keySet()) {
      for (FileBlockInfo b : fs.getBlockLocations(path)) {
        assertThat(b.locations()).as("locations of block %d", b.blockId()).hasSize(1);
        BlockLocation l = b.locations().get(0);
        assertThat(l.address().toString()).isEqualTo(workerAddress());
        tiers.put(b.blockId(), l.tier());
      }
    }
    return tiers;
  }

  /** Block id → tier, as the worker's store holds them now. */
  private static Map<Long, String> tiersInStore() {
    Map<Long, String> tiers = new HashMap<>();
    for (BlockStore.BlockMeta b : store().committedBlocks()) {
      tiers.put(b.blockId(), b.tier());
    }
    return tiers;
  }

  /** Block id → tier: the first {@code mem} blocks written in MEM, the next {@code ssd} in SSD, the rest in HDD. */
  private static Map<Long, String> placedInWriteOrder(int mem, int ssd) {
    Map<Long, String> out = new HashMap<>();
    for (int i = 0; i < blocksInWriteOrder.size(); i++) {
      out.put(blocksInWriteOrder.get(i), i < mem ? "MEM" : i < mem + ssd ? "SSD" : "HDD");
    }
    return out;
  }

  private static byte[] read(String path, ReadType type) throws IOException {
    try (FileInStream in = fs.openFile(path, OpenFileOptions.defaults().withReadType(type))) {
      return in.readAllBytes();
    }
  }

  /** The {@code dir ...} line of {@code fsadmin report} for one dir; fails when there is none. */
  private static String dirLine(String report, Path dir) {
    String prefix = "dir worker=" + workerAddress() + " tier=";
    List<String> matching = report.lines()
        .filter(l -> l.startsWith(prefix) && l.contains(" path=" + dir + " "))
        .collect(Collectors.toList());
    assertThat(matching).as("dir lines of %s in:%n%s", dir, report).hasSize(1);
    return matching.get(0);
  }

  private static long field(String line, String name) {
    Matcher m = Pattern.compile(" " + name + "=(\\d+)").matcher(line);
    assertThat(m.find()).as("%s in %s", name, line).isTrue();
    return Long.parseLong(m.group(1));
  }

  // ---- tests ----

  @Test
  @Order(1)
  void writes_fillTheTopTierFirst_thenSpillToSsdAndHdd() throws IOException {
    Random random = new Random(42);
    for (int f = 0; f < FILES; f++) {
      byte[] content = new byte[BLOCKS_PER_FILE * MB];
      random.nextBytes(content);
      String path = "/tiered/f" + f;
      // MUST_CACHE: a background persist would read the blocks too, and these tests count block reads.
      try (FileOutStream out = fs.createFile(path, io.strata.client.options.CreateFileOptions.defaults()
          .withWriteType(io.strata.client.options.WriteType.MUST_CACHE))) {
        out.write(content);
      }
      files.put(path, content);
      for (FileBlockInfo b : fs.getBlockLocations(path)) {
        blocksInWriteOrder.add(b.blockId());
      }
    }
    assertThat(blocksInWriteOrder).hasSize(FILES * BLOCKS_PER_FILE).doesNotHaveDuplicates();

    // A new block goes to the highest tier with room: MEM takes the first 4, SSD the next 8, HDD the rest.
    Map<Long, String> want = placedInWriteOrder((int) (MEM_QUOTA / MB), (int) (SSD_QUOTA / MB));
    assertThat(want.values()).filteredOn("HDD"::equals).hasSize(2);
    assertThat(tiersInStore()).isEqualTo(want);
    // The commits told the master each block's tier, so no heartbeat is needed.
    assertThat(tiersFromClient()).isEqualTo(want);
    assertThat(tiersFromLocationCommand()).isEqualTo(want);
  }

  @Test
  @Order(2)
  void tierAlignment_movesTheNewestBlocksToMem_andTheMasterLearnsTheNewTiers() {
    // Writes do not reorder tiers; the tier manager does (reserver, then at most 4 moves up per round).
    for (int round = 0; round < 6; round++) {
      cluster.worker(0).tierManager().runOnce();
    }
    Map<Long, String> inStore = tiersInStore();
    List<Long> newest = blocksInWriteOrder.subList(blocksInWriteOrder.size() - 4, blocksInWriteOrder.size());
    List<Long> inMem = inStore.entrySet().stream().filter(e -> e.getValue().equals("MEM"))
        .map(Map.Entry::getKey).collect(Collectors.toList());
    assertThat(inMem).containsExactlyInAnyOrderElementsOf(newest);
    assertThat(inStore).hasSize(FILES * BLOCKS_PER_FILE);
    assertThat(inStore.values().stream().filter("SSD"::equals).count()).isBetween(1L, SSD_QUOTA / MB);
    assertThat(inStore.values()).containsOnly("MEM", "SSD", "HDD");

    await().atMost(Duration.ofSeconds(10)).ignoreExceptions().untilAsserted(() -> {
      assertThat(tiersFromClient()).isEqualTo(inStore);
      assertThat(tiersFromLocationCommand()).isEqualTo(inStore);
    });
  }

  @Test
  @Order(3)
  void fsadminReport_showsEachTiersDir_withItsQuotaAsCapacity_andItsUsage() {
    Map<String, Long> usedInStore = new HashMap<>();
    for (BlockStore.DirReport d : store().dirReports()) {
      usedInStore.put(d.path(), d.usedBytes());
    }
    assertThat(usedInStore.get(memDir.toString())).isEqualTo(4L * MB);
    assertThat(usedInStore.get(ssdDir.toString())).isPositive();

    // Usage reaches the master with the heartbeat after the tier manager's moves.
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      String report = cli("fsadmin", "report");
      Object[][] dirs = {{memDir, "MEM", MEM_QUOTA}, {ssdDir, "SSD", SSD_QUOTA}, {hddDir, "HDD", HDD_QUOTA}};
      for (Object[] d : dirs) {
        String line = dirLine(report, (Path) d[0]);
        assertThat(line).as(line).startsWith("dir worker=" + workerAddress() + " tier=" + d[1] + " path=" + d[0]
            + " state=OK ").doesNotContain("lost_blocks");
        assertThat(field(line, "capacity")).as(line).isEqualTo((long) d[2]);
        assertThat(field(line, "used")).as(line).isEqualTo(usedInStore.get(d[0].toString()));
        List<String> tierLines = report.lines()
            .filter(l -> l.startsWith("  tier worker=" + workerAddress() + " tier=" + d[1] + " "))
            .collect(Collectors.toList());
        assertThat(tierLines).hasSize(1);
        assertThat(tierLines.get(0)).endsWith(" bad_dirs=0 lost_blocks=0");
        assertThat(field(tierLines.get(0), "capacity")).isEqualTo((long) d[2]);
        assertThat(field(tierLines.get(0), "used")).isEqualTo(usedInStore.get(d[0].toString()));
      }
      assertThat(field(dirLine(report, memDir), "used")).isPositive();
      assertThat(field(dirLine(report, ssdDir), "used")).isPositive();
    });
  }

  @Test
  @Order(4)
  void everyFile_readsBackByteExact_fromWhicheverTierHoldsIt() throws IOException {
    long[] before = store().readsByTier();
    for (Map.Entry<String, byte[]> f : files.entrySet()) {
      assertThat(read(f.getKey(), ReadType.CACHE)).as(f.getKey()).isEqualTo(f.getValue());
    }
    long[] after = store().readsByTier();
    long total = 0;
    for (int t = 0; t < after.length; t++) {
      assertThat(after[t]).as("reads from tier %d", t).isGreaterThanOrEqualTo(before[t]);
      total += after[t] - before[t];
    }
    // One block read per block: every tier served some.
    assertThat(total).isEqualTo(FILES * BLOCKS_PER_FILE);
    assertThat(after[0] - before[0]).isEqualTo(4);
    assertThat(after[1] - before[1]).isPositive();
    // A CACHE read moves nothing.
    assertThat(tiersInStore().values().stream().filter("MEM"::equals).count()).isEqualTo(4);
  }

  @Test
  @Order(5)
  void cachePromoteRead_movesItsBlocksToMem_andTheMasterReportsTheMovesAfterHeartbeats() throws IOException {
    String oldest = files.keySet().iterator().next();
    List<Long> blocks = blocksInWriteOrder.subList(0, BLOCKS_PER_FILE);
    Map<Long, String> before = tiersInStore();
    assertThat(blocks).allSatisfy(b -> assertThat(before.get(b)).isNotEqualTo("MEM"));
    long memReadsBefore = store().readsByTier()[0];

    assertThat(read(oldest, ReadType.CACHE_PROMOTE)).isEqualTo(files.get(oldest));

    Map<Long, String> after = tiersInStore();
    assertThat(blocks).allSatisfy(b -> assertThat(after.get(b)).isEqualTo("MEM"));
    // The blocks were moved before they were read, so MEM served both reads.
    assertThat(store().readsByTier()[0] - memReadsBefore).isEqualTo(BLOCKS_PER_FILE);
    // MEM was full: two of its blocks made room by moving down.
    List<Long> movedDown = before.entrySet().stream()
        .filter(e -> e.getValue().equals("MEM") && !after.get(e.getKey()).equals("MEM"))
        .map(Map.Entry::getKey).collect(Collectors.toList());
    assertThat(movedDown).hasSize(BLOCKS_PER_FILE);
    assertThat(after.values().stream().filter("MEM"::equals).count()).isEqualTo(4);

    await().atMost(Duration.ofSeconds(10)).ignoreExceptions().untilAsserted(() -> {
      String location = cli("fs", "location", oldest);
      assertThat(location.lines()).hasSize(BLOCKS_PER_FILE)
          .allSatisfy(l -> assertThat(l).endsWith(" workers=" + workerAddress() + " tiers=MEM"));
      // Every move, up and down, is known to the master.
      assertThat(tiersFromClient()).isEqualTo(after);
      assertThat(tiersFromLocationCommand()).isEqualTo(after);
    });
    assertThat(read(oldest, ReadType.CACHE)).isEqualTo(files.get(oldest));
  }
}
