package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.BlockLocation;
import io.strata.client.ClientKeys;
import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.WorkerInfo;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.net.TieredIdentity;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.WorkerKeys;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Worker selection on a real cluster of three workers that report different identities (all on loopback):
 * w0 node n0 rack r0, w1 node n1 rack r1, w2 node n2 rack r1. Clients claim a node and rack by key.
 * Writes land per the write policy; reads of a cached block take the nearest copy (counted by the
 * workers' block reads); a block no worker holds is read from the UFS by the worker the UFS read policy
 * picks.
 */
class WorkerSelectionIntegrationTest {
  private static final int BLOCK = 64 * 1024;
  private static LocalStrataCluster cluster;
  private static final List<FileSystem> clients = new ArrayList<>();

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(0)
        .set(ClientKeys.WORKER_LIST_REFRESH.name(), "100ms")
        .build().start();
    String[][] ids = {{"n0", "r0"}, {"n1", "r1"}, {"n2", "r1"}};
    for (String[] id : ids) {
      cluster.addWorker(Map.of(WorkerKeys.LOCALITY_NODE.name(), id[0], WorkerKeys.LOCALITY_RACK.name(), id[1]));
    }
    cluster.waitForWorkers(3, 30_000);
  }

  @AfterAll
  static void stop() {
    for (FileSystem fs : clients) {
      try {
        fs.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
    cluster.close();
  }

  /** A client on {@code node} in {@code rack} (either may be empty), with extra settings. */
  private static FileSystem client(String node, String rack, String... keyValues) {
    Map<String, String> c = new HashMap<>();
    c.put(ClientKeys.LOCALITY_NODE.name(), node);
    c.put(ClientKeys.LOCALITY_RACK.name(), rack);
    c.put(ClientKeys.PASSIVE_CACHE_ENABLED.name(), "false");
    for (int i = 0; i < keyValues.length; i += 2) {
      c.put(keyValues[i], keyValues[i + 1]);
    }
    FileSystem fs = FileSystem.create(cluster.clientConf().withAll(c));
    clients.add(fs);
    return fs;
  }

  private static byte[] write(FileSystem fs, String path, int blocks, WriteType type) throws IOException {
    byte[] data = new byte[blocks * BLOCK];
    new Random(path.hashCode()).nextBytes(data);
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(type))) {
      out.write(data);
    }
    return data;
  }

  /** Index of the worker at {@code port}. */
  private static int workerAt(int port) {
    for (int i = 0; i < cluster.workers().size(); i++) {
      if (cluster.worker(i).rpcPort() == port) {
        return i;
      }
    }
    throw new AssertionError("no worker on port " + port);
  }

  /** For each block of {@code path}, the workers (indexes) holding it. */
  private static List<Set<Integer>> holders(String path) throws IOException {
    List<Set<Integer>> out = new ArrayList<>();
    for (FileBlockInfo b : cluster.client().getBlockLocations(path)) {
      Set<Integer> ws = new TreeSet<>();
      for (BlockLocation loc : b.locations()) {
        ws.add(workerAt(loc.address().rpcPort()));
      }
      out.add(ws);
    }
    return out;
  }

  private static long reads(int worker) {
    long n = 0;
    for (long r : cluster.worker(worker).tieredStore().readsByTier()) {
      n += r;
    }
    return n;
  }

  private static long[] readsOfAll() {
    return new long[] {reads(0), reads(1), reads(2)};
  }

  @Test
  void workers_reportTheirIdentity_andTheMasterReturnsIt() throws IOException {
    Map<Integer, TieredIdentity> seen = new HashMap<>();
    for (WorkerInfo w : cluster.client().getWorkers()) {
      seen.put(workerAt(w.address().rpcPort()), w.address().identity());
    }
    assertThat(seen).containsEntry(0, new TieredIdentity("n0", "r0"))
        .containsEntry(1, new TieredIdentity("n1", "r1")).containsEntry(2, new TieredIdentity("n2", "r1"));
  }

  @Test
  void localFirst_writesEveryBlockToTheWorkerOnTheClientsNode() throws IOException {
    write(client("n1", "r1"), "/local-first", 3, WriteType.MUST_CACHE);
    assertThat(holders("/local-first")).containsExactly(Set.of(1), Set.of(1), Set.of(1));
  }

  @Test
  void localFirst_withoutAWorkerOnTheNode_writesToTheClientsRack() throws IOException {
    write(client("n9", "r1"), "/same-rack", 4, WriteType.MUST_CACHE);
    List<Set<Integer>> holders = holders("/same-rack");
    assertThat(holders).allSatisfy(h -> assertThat(h).hasSize(1).isSubsetOf(1, 2));
    // In turn over the rack's two workers.
    assertThat(holders.stream().flatMap(Set::stream).distinct()).containsExactlyInAnyOrder(1, 2);
  }

  @Test
  void aClientLocalityScript_givesTheNodeAndRack() throws IOException {
    write(client("", "", ClientKeys.LOCALITY_SCRIPT.name(), "echo node=n2 rack=r1"), "/by-script", 2,
        WriteType.MUST_CACHE);
    assertThat(holders("/by-script")).containsExactly(Set.of(2), Set.of(2));
  }

  @Test
  void aWorkerWhoseLocalityScriptFails_doesNotStart_andSaysWhy() {
    Map<String, String> conf = new HashMap<>(cluster.clientConf().explicitValues());
    conf.put(WorkerKeys.LOCALITY_SCRIPT.name(), "echo datacenter=d1");
    conf.put(WorkerKeys.TIER0_DIRS.name(), cluster.baseDir().resolve("never-started").toString());
    assertThatThrownBy(() -> new io.strata.worker.WorkerProcess(io.strata.common.conf.StrataConf.of(conf),
        java.time.Clock.systemUTC()).start())
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining(WorkerKeys.LOCALITY_SCRIPT.name()).hasMessageContaining("datacenter=d1");
    assertThat(cluster.baseDir().resolve("never-started")).doesNotExist();
  }

  @Test
  void deterministicHash_asTheWritePolicy_spreadsBlocksByBlockId() throws IOException {
    write(client("n9", "r9", ClientKeys.WRITE_LOCATION_POLICY.name(), "DeterministicHash"), "/hashed", 12,
        WriteType.MUST_CACHE);
    List<Set<Integer>> holders = holders("/hashed");
    assertThat(holders).allSatisfy(h -> assertThat(h).hasSize(1));
    // Twelve block ids over three workers (all on one is a chance of about 1 in 180000 per id range).
    assertThat(holders.stream().flatMap(Set::stream).distinct().count()).isGreaterThan(1);
  }

  @Test
  void specificHost_writesToTheNamedNode() throws IOException {
    write(client("n1", "r1", ClientKeys.WRITE_LOCATION_POLICY.name(), "SPECIFIC_HOST",
        ClientKeys.LOCATION_POLICY_HOST.name(), "n0"), "/specific", 2, WriteType.MUST_CACHE);
    assertThat(holders("/specific")).containsExactly(Set.of(0), Set.of(0));
  }

  @Test
  void specificHost_namingNoWorker_failsNamingTheKey() {
    FileSystem fs = client("n1", "r1", ClientKeys.WRITE_LOCATION_POLICY.name(), "SPECIFIC_HOST",
        ClientKeys.LOCATION_POLICY_HOST.name(), "nowhere");
    assertThatThrownBy(() -> write(fs, "/specific-nowhere", 1, WriteType.MUST_CACHE))
        .isInstanceOf(ResourceExhaustedException.class)
        .hasMessageContaining(ClientKeys.WRITE_LOCATION_POLICY.name()).hasMessageContaining("nowhere");
  }

  @Test
  void anUnknownPolicyClass_failsTheWriteNamingTheKey() {
    FileSystem fs = client("n1", "r1", ClientKeys.WRITE_LOCATION_POLICY.name(), "com.example.NoSuchPolicy");
    assertThatThrownBy(() -> write(fs, "/bad-policy", 1, WriteType.MUST_CACHE))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining(ClientKeys.WRITE_LOCATION_POLICY.name())
        .hasMessageContaining("com.example.NoSuchPolicy");
  }

  @Test
  void reads_takeTheSameNodeCopy_thenTheSameRackCopy() throws Exception {
    // One block on w0, then a copy on w2 (a passive cache by a reader on n2).
    byte[] data = write(client("n0", "r0"), "/two-copies", 1, WriteType.MUST_CACHE);
    assertThat(holders("/two-copies")).containsExactly(Set.of(0));
    assertThat(readAll(client("n2", "r1", ClientKeys.PASSIVE_CACHE_ENABLED.name(), "true"), "/two-copies"))
        .isEqualTo(data);
    await().atMost(Duration.ofSeconds(20)).until(() -> holders("/two-copies").equals(List.of(Set.of(0, 2))));

    long[] before = readsOfAll();
    assertThat(readAll(client("n2", "r1"), "/two-copies")).isEqualTo(data);
    assertThat(delta(before)).as("reads on w0, w1, w2 by a reader on n2").containsExactly(0, 0, 1);

    before = readsOfAll();
    assertThat(readAll(client("n0", "r0"), "/two-copies")).isEqualTo(data);
    assertThat(delta(before)).as("reads by a reader on n0").containsExactly(1, 0, 0);

    // On n1 (whose worker has no copy), in rack r1: w2's copy, not w0's.
    before = readsOfAll();
    assertThat(readAll(client("n1", "r1"), "/two-copies")).isEqualTo(data);
    assertThat(delta(before)).as("reads by a reader on n1 in rack r1").containsExactly(0, 0, 1);
  }

  @Test
  void ufsReads_goToTheWorkerOnTheClientsNode_byDefault() throws IOException {
    byte[] data = write(client("n1", "r1"), "/through", 2, WriteType.THROUGH);
    assertThat(holders("/through")).containsExactly(Set.of(), Set.of());
    long[] before = {cluster.worker(0).ufsBlockReads(), cluster.worker(1).ufsBlockReads(),
        cluster.worker(2).ufsBlockReads()};
    assertThat(readAll(client("n2", "r1"), "/through")).isEqualTo(data);
    assertThat(new long[] {cluster.worker(0).ufsBlockReads() - before[0],
        cluster.worker(1).ufsBlockReads() - before[1], cluster.worker(2).ufsBlockReads() - before[2]})
        .containsExactly(0, 0, 2);
  }

  @Test
  void ufsReads_followTheUfsReadPolicyKey() throws IOException {
    byte[] data = write(client("n1", "r1"), "/through-specific", 2, WriteType.THROUGH);
    long before = cluster.worker(0).ufsBlockReads();
    assertThat(readAll(client("n2", "r1", ClientKeys.UFS_READ_LOCATION_POLICY.name(), "SpecificHost",
        ClientKeys.LOCATION_POLICY_HOST.name(), "n0"), "/through-specific")).isEqualTo(data);
    assertThat(cluster.worker(0).ufsBlockReads() - before).isEqualTo(2);
    assertThat(holders("/through-specific")).containsExactly(Set.of(0), Set.of(0));
  }

  private static long[] delta(long[] before) {
    long[] now = readsOfAll();
    return new long[] {now[0] - before[0], now[1] - before[1], now[2] - before[2]};
  }

  private static byte[] readAll(FileSystem fs, String path) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }
}
