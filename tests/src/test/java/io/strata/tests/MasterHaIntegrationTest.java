package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.WorkerInfo;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.UnavailableException;
import io.strata.master.MasterProcess;
import io.strata.worker.WorkerProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Master HA in one JVM: a real ZooKeeper (Curator's TestingServer) and two or three {@link MasterProcess}es
 * sharing one journal dir. Leader election, takeover after the leader goes away (twice in a row, under
 * client load), discovery through ZooKeeper and through a polled address list, standbys refusing calls,
 * and standbys holding the leader's namespace before they take over. Failover times are printed as
 * {@code bench op=master_failover} lines.
 */
class MasterHaIntegrationTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @TempDir
  Path tmp;
  private TestingServer zk;
  private final List<AutoCloseable> open = new ArrayList<>();

  @BeforeEach
  void startZooKeeper() throws Exception {
    zk = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, -1, null, "127.0.0.1"), true);
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    zk.close();
  }

  /** What every process of the cluster shares; no discovery setting (see {@link #viaZooKeeper}). */
  private Map<String, String> base() {
    Map<String, String> c = new HashMap<>();
    c.put("strata.master.journal.dir", tmp.resolve("journal").toString());
    // Shared, like the journal: every master serves the same under file system.
    c.put("strata.master.mount.table.root.ufs", tmp.resolve("underFSStorage").toString());
    c.put("strata.master.journal.tail.interval", "50ms");
    c.put("strata.master.worker.timeout", "5s");
    c.put("strata.user.master.retry.window", "30s");
    c.put("strata.network.rpc.timeout", "5s");
    return c;
  }

  private Map<String, String> viaZooKeeper(Map<String, String> c) {
    c.put("strata.zookeeper.address", zk.getConnectString());
    c.put("strata.zookeeper.session.timeout", "3s");
    return c;
  }

  private MasterProcess master(int port) throws IOException {
    Map<String, String> c = viaZooKeeper(base());
    c.put("strata.master.rpc.port", Integer.toString(port));
    c.put("strata.master.hostname", "localhost");
    MasterProcess m = new MasterProcess(StrataConf.of(c), Clock.systemUTC()).start();
    open.add(m);
    return m;
  }

  private List<MasterProcess> masters(int n) throws IOException {
    List<MasterProcess> ms = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ms.add(master(io.strata.minicluster.FreePorts.loopback()));
    }
    return ms;
  }

  private WorkerProcess worker(Map<String, String> conf) throws IOException {
    Map<String, String> wc = new HashMap<>(conf);
    wc.put("strata.worker.rpc.port", "0");
    wc.put("strata.worker.tier.0.dirs", tmp.resolve("worker").toString());
    // Room for a few whole 64MB blocks: a reservation never evicts the blocks written before.
    wc.put("strata.worker.tier.0.quota", "256MB");
    wc.put("strata.worker.heartbeat.interval", "200ms");
    WorkerProcess w = new WorkerProcess(StrataConf.of(wc), Clock.systemUTC()).start();
    open.add(w);
    return w;
  }

  private FileSystem client(Map<String, String> conf) {
    FileSystem fs = FileSystem.create(StrataConf.of(conf));
    open.add(fs);
    return fs;
  }

  /** A client that talks to one master only (no failover, so the first UNAVAILABLE is final). */
  private FileSystem singleAddressClient(MasterProcess m) {
    Map<String, String> c = base();
    c.put("strata.master.hostname", "localhost");
    c.put("strata.master.rpc.port", Integer.toString(m.rpcPort()));
    return client(c);
  }

  private static List<MasterProcess> leaders(List<MasterProcess> ms) {
    return ms.stream().filter(MasterProcess::isLeading).collect(Collectors.toList());
  }

  /** Waits for the election among the open masters of {@code ms} to settle, and returns the one leader. */
  private static MasterProcess awaitSoleLeader(List<MasterProcess> ms) {
    await().atMost(WAIT).until(() -> leaders(ms).size() == 1);
    return leaders(ms).get(0);
  }

  private static byte[] bytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static byte[] read(FileSystem fs, String path) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }

  // ------------------------------------------------------------------ load

  /** A create the client had acknowledged: when its call started and when it returned. */
  private record Ack(String path, long startNanos, long endNanos) {}

  /** One client thread creating empty files in a loop, recording each acknowledged create. */
  private static final class Load implements AutoCloseable {
    final ConcurrentLinkedQueue<Ack> acked = new ConcurrentLinkedQueue<>();
    final AtomicBoolean stop = new AtomicBoolean();
    final ExecutorService pool = Executors.newSingleThreadExecutor();
    final Future<Integer> failures;

    Load(FileSystem fs, String dir) throws IOException {
      fs.createDirectory(dir, CreateDirectoryOptions.defaults().withRecursive(true));
      failures = pool.submit(() -> {
        int failed = 0;
        for (int i = 0; !stop.get(); i++) {
          String p = dir + "/f" + i;
          long start = System.nanoTime();
          try {
            fs.createFile(p).close();
            acked.add(new Ack(p, start, System.nanoTime()));
          } catch (IOException e) {
            failed++; // in flight at a failover: may or may not have happened, so not counted
          }
        }
        return failed;
      });
    }

    /**
     * Milliseconds from {@code fromNanos} to the first acknowledged create whose call started after it
     * (so one the old leader, which refused every call from then on, cannot have served).
     */
    long msToFirstAckStartedAfter(long fromNanos) {
      await().atMost(WAIT).until(() -> acked.stream().anyMatch(a -> a.startNanos() > fromNanos));
      long end = acked.stream().filter(a -> a.startNanos() > fromNanos).mapToLong(Ack::endNanos).min()
          .orElseThrow();
      return TimeUnit.NANOSECONDS.toMillis(end - fromNanos);
    }

    int stopAndCountFailures() throws Exception {
      stop.set(true);
      int f = failures.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      pool.shutdownNow();
      return f;
    }

    @Override
    public void close() {
      stop.set(true);
      pool.shutdownNow();
    }
  }

  // ------------------------------------------------------------------ tests

  @Test
  void threeMasters_leaderClosedTwiceDuringLoad_aStandbyTakesOverEachTime_andEveryAcknowledgedCreateExists()
      throws Exception {
    List<MasterProcess> all = masters(3);
    MasterProcess first = awaitSoleLeader(all);
    List<MasterProcess> alive = new ArrayList<>(all);

    FileSystem fs = client(viaZooKeeper(base()));
    Load load = new Load(fs, "/load");
    open.add(load);
    await().atMost(WAIT).until(() -> load.acked.size() >= 50);

    List<Long> failovers = new ArrayList<>();
    MasterProcess leader = first;
    for (int round = 1; round <= 2; round++) {
      int ackedBefore = load.acked.size();
      long closedAt = System.nanoTime();
      leader.close();
      alive.remove(leader);
      MasterProcess next = awaitSoleLeader(alive);
      long ms = load.msToFirstAckStartedAfter(closedAt);
      failovers.add(ms);
      System.out.println("bench op=master_failover masters=3 failover_ms=" + ms + " (round " + round
          + ": leader closed -> first create acknowledged by the new leader)");
      assertThat(next).isNotSameAs(leader);
      assertThat(leader.isLeading()).isFalse();
      await().atMost(WAIT).until(() -> load.acked.size() > ackedBefore + 20);
      leader = next;
    }
    assertThat(alive).containsExactly(leader);
    int failed = load.stopAndCountFailures();
    assertThat(failed).as("creates that failed across two failovers (the client retries the rest)")
        .isLessThan(10);

    List<String> acked = load.acked.stream().map(Ack::path).collect(Collectors.toList());
    assertThat(acked.size()).isGreaterThan(90);
    for (String p : acked) {
      assertThat(leader.fileSystemMaster().exists(p)).as("acknowledged create %s on the last leader", p).isTrue();
    }
    assertThat(fs.listStatus("/load").size()).isGreaterThanOrEqualTo(acked.size());
    assertThat(failovers).allSatisfy(ms -> assertThat(ms).isLessThan(WAIT.toMillis()));
    // Written ASYNC_THROUGH (the default): the last leader's persist scheduler picks up what its
    // predecessors had not persisted yet, from the shared journal, and the shared UFS ends up with all.
    await().atMost(WAIT).until(() -> acked.stream().allMatch(p -> {
      try {
        return fs.getStatus(p).persistenceState().equals("PERSISTED");
      } catch (IOException e) {
        return false;
      }
    }));
    for (String p : acked) {
      assertThat(tmp.resolve("underFSStorage" + p)).as("%s in the UFS", p).exists();
    }
  }

  @Test
  void clientAndWorker_pollingAnAddressList_withoutZooKeeper_followAFailover() throws Exception {
    List<MasterProcess> ms = masters(2);
    MasterProcess leader = awaitSoleLeader(ms);
    MasterProcess standby = ms.get(0) == leader ? ms.get(1) : ms.get(0);

    // Masters elect through ZooKeeper; the client and the worker only know the two addresses.
    Map<String, String> polling = base();
    polling.put("strata.master.rpc.addresses",
        "localhost:" + ms.get(0).rpcPort() + ",localhost:" + ms.get(1).rpcPort());
    assertThat(polling).doesNotContainKey("strata.zookeeper.address");
    WorkerProcess worker = worker(polling);
    FileSystem fs = client(polling);
    await().atMost(WAIT).ignoreExceptions().until(() -> fs.getWorkers().size() == 1);

    byte[] before = bytes(200_000, 1);
    try (FileOutStream out = fs.createFile("/before.bin")) {
      out.write(before);
    }
    assertThat(standby.isLeading()).isFalse();

    leader.close();
    await().atMost(WAIT).until(standby::isLeading);

    // Writing data needs a worker the new leader knows: the worker found it by polling, too.
    byte[] after = bytes(150_000, 2);
    try (FileOutStream out = fs.createFile("/after.bin")) {
      out.write(after);
    }
    assertThat(standby.fileSystemMaster().exists("/after.bin")).isTrue();
    List<WorkerInfo> workers = fs.getWorkers();
    assertThat(workers).hasSize(1);
    assertThat(workers.get(0).address().rpcPort()).isEqualTo(worker.rpcPort());
    assertThat(read(fs, "/after.bin")).isEqualTo(after);
    await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> assertThat(read(fs, "/before.bin")).isEqualTo(before));
  }

  @Test
  void standby_answersClientCallsWithUnavailable_namingItselfAStandby() throws Exception {
    List<MasterProcess> ms = masters(2);
    MasterProcess leader = awaitSoleLeader(ms);
    MasterProcess standby = ms.get(0) == leader ? ms.get(1) : ms.get(0);

    assertThat(singleAddressClient(leader).getStatus("/").path()).isEqualTo("/");
    FileSystem atStandby = singleAddressClient(standby);
    assertThatThrownBy(() -> atStandby.getStatus("/"))
        .isInstanceOf(UnavailableException.class)
        .hasMessageContaining("standby")
        .hasMessageContaining("localhost:" + standby.rpcPort());
    assertThatThrownBy(() -> atStandby.createDirectory("/nope")).isInstanceOf(UnavailableException.class);
    assertThat(leader.fileSystemMaster().exists("/nope")).isFalse();
  }

  @Test
  void standby_hasTheLeadersNamespaceApplied_whileTheLeaderIsStillAlive() throws Exception {
    List<MasterProcess> ms = masters(2);
    MasterProcess leader = awaitSoleLeader(ms);
    MasterProcess standby = ms.get(0) == leader ? ms.get(1) : ms.get(0);
    FileSystem fs = client(viaZooKeeper(base()));

    assertThat(standby.fileSystemMaster().exists("/tailed/dir")).isFalse();
    fs.createDirectory("/tailed/dir", CreateDirectoryOptions.defaults().withRecursive(true));
    fs.createFile("/tailed/dir/file").close();
    fs.rename("/tailed/dir/file", "/tailed/dir/moved");

    await().atMost(WAIT).until(() -> standby.fileSystemMaster().exists("/tailed/dir/moved"));
    assertThat(standby.fileSystemMaster().exists("/tailed/dir/file")).isFalse();
    assertThat(standby.fileSystemMaster().getStatus("/tailed/dir/moved").complete()).isTrue();
    assertThat(leader.isLeading()).isTrue();
    assertThat(standby.isLeading()).isFalse();
  }

  @Test
  void retriedCalls_whoseFirstAttemptTheOldLeaderApplied_succeedOnTheNewLeader_withTheFirstAnswer()
      throws Exception {
    List<MasterProcess> ms = masters(2);
    MasterProcess old = awaitSoleLeader(ms);
    io.grpc.ManagedChannel toOld = io.strata.common.grpc.GrpcChannels.forAddress("localhost", old.rpcPort(), 4 << 20);
    io.strata.proto.FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub m =
        io.strata.proto.FileSystemMasterServiceGrpc.newBlockingStub(toOld);
    // First attempts, all applied by the old leader (whose replies the client is taken to have lost).
    long created = m.createFile(RequestIdIntegrationTest.create("/r/f", RequestIdIntegrationTest.id("c", 1)))
        .getFile().getId();
    io.strata.proto.CompleteFileRequest complete = io.strata.proto.CompleteFileRequest.newBuilder().setPath("/r/f")
        .setFileId(created).setLength(0).setRequestId(RequestIdIntegrationTest.id("c", 2)).build();
    m.completeFile(complete);
    m.createFile(RequestIdIntegrationTest.create("/r/g", RequestIdIntegrationTest.id("c", 3)));
    io.strata.proto.RenameRequest rename = io.strata.proto.RenameRequest.newBuilder().setSrc("/r/g").setDst("/r/h")
        .setRequestId(RequestIdIntegrationTest.id("c", 4)).build();
    m.rename(rename);
    io.strata.proto.DeleteRequest delete = io.strata.proto.DeleteRequest.newBuilder().setPath("/r/h")
        .setRequestId(RequestIdIntegrationTest.id("c", 5)).build();
    m.delete(delete);
    io.strata.common.grpc.GrpcChannels.close(toOld);

    old.close();
    MasterProcess leader = awaitSoleLeader(ms);
    assertThat(leader).isNotSameAs(old);
    io.grpc.ManagedChannel toNew = io.strata.common.grpc.GrpcChannels.forAddress("localhost", leader.rpcPort(),
        4 << 20);
    open.add(() -> io.strata.common.grpc.GrpcChannels.close(toNew));
    io.strata.proto.FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub n =
        io.strata.proto.FileSystemMasterServiceGrpc.newBlockingStub(toNew);
    // The retries: the new leader learned the ids from the journal and answers as the old one did.
    assertThat(n.createFile(RequestIdIntegrationTest.create("/r/f", RequestIdIntegrationTest.id("c", 1)))
        .getFile().getId()).isEqualTo(created);
    io.strata.proto.FileInfoProto completed = n.completeFile(complete).getFile();
    assertThat(completed.getId()).isEqualTo(created);
    assertThat(completed.getComplete()).isTrue();
    n.rename(rename);
    n.delete(delete);
    // The same calls without their ids fail as they always did.
    assertThat(RequestIdIntegrationTest.failure(() -> n.createFile(RequestIdIntegrationTest.create("/r/f", null))))
        .isInstanceOf(io.strata.common.exception.AlreadyExistsException.class);
    assertThat(RequestIdIntegrationTest.failure(() -> n.rename(rename.toBuilder().clearRequestId().build())))
        .isInstanceOf(io.strata.common.exception.NotFoundException.class);
    assertThat(RequestIdIntegrationTest.failure(() -> n.delete(delete.toBuilder().clearRequestId().build())))
        .isInstanceOf(io.strata.common.exception.NotFoundException.class);
    assertThat(leader.fileSystemMaster().exists("/r/h")).isFalse();
    assertThat(leader.fileSystemMaster().getStatus("/r/f").complete()).isTrue();
  }

  /**
   * A standby that wins the election but cannot take over (damage in the journal past what it read: its tailing is
   * slowed to an hour here) runs its fatal handler with the master's monitor free: a handler that closes the master
   * on another thread and waits for it, as MasterMain's exit does through its shutdown hook, returns, and the master
   * is closed, out of the election. Before, the handler ran inside the monitor and the close waited for it for ever:
   * a master hung while still elected, so no other could lead.
   */
  @Test
  void aStandbyThatCannotTakeOver_runsItsFatalHandlerWithTheMonitorFree_andCloses() throws Exception {
    MasterProcess leader = master(io.strata.minicluster.FreePorts.loopback());
    await().atMost(WAIT).until(leader::isLeading);
    Map<String, String> c = viaZooKeeper(base());
    c.put("strata.master.rpc.port", Integer.toString(io.strata.minicluster.FreePorts.loopback()));
    c.put("strata.master.hostname", "localhost");
    c.put("strata.master.journal.tail.interval", "1h");
    java.util.concurrent.atomic.AtomicReference<MasterProcess> standby = new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.CountDownLatch handled = new java.util.concurrent.CountDownLatch(1);
    standby.set(new MasterProcess(StrataConf.of(c), Clock.systemUTC()).onFatal(() -> {
      Thread closer = new Thread(() -> standby.get().close(), "test-closer");
      closer.start();
      boolean interrupted = false;
      while (closer.isAlive()) { // the close interrupts this thread (it stops the master's role thread)
        try {
          closer.join();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      handled.countDown();
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }).start());
    open.add(standby.get());

    Path segment;
    try (var s = java.nio.file.Files.list(tmp.resolve("journal/segments"))) {
      segment = s.sorted().reduce((a, b) -> b).orElseThrow();
    }
    long readUpTo = java.nio.file.Files.size(segment);
    leader.fileSystemMaster().createDirectory("/after-the-standby-read-1", false, false, 0755);
    leader.fileSystemMaster().createDirectory("/after-the-standby-read-2", false, false, 0755);
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(segment,
        java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
      ch.read(b, readUpTo + 12);
      b.put(0, (byte) (b.get(0) ^ 0x5a)).rewind();
      ch.write(b, readUpTo + 12); // inside the first record the standby has not read; a whole one follows it
    }
    leader.close();

    assertThat(handled.await(60, TimeUnit.SECONDS)).as("the fatal handler returned").isTrue();
    assertThat(standby.get().isLeading()).isFalse();
  }

  /**
   * A standby that fell behind a checkpoint (the leader wrote one, removing segments the standby had not read, and went
   * away before the standby tailed again: its tailing is slowed to an hour here) reloads the journal from the newest
   * checkpoint when it wins the election, and leads with every change. Before, its takeover failed ("entries are
   * missing") and it gave leadership up.
   */
  @Test
  void aStandbyBehindACheckpoint_reloadsAndTakesOver_withEveryChange() throws Exception {
    Map<String, String> c = viaZooKeeper(base());
    c.put("strata.master.journal.checkpoint.period.entries", "5");
    c.put("strata.master.hostname", "localhost");
    c.put("strata.master.rpc.port", Integer.toString(io.strata.minicluster.FreePorts.loopback()));
    MasterProcess leader = new MasterProcess(StrataConf.of(c), Clock.systemUTC()).start();
    open.add(leader);
    await().atMost(WAIT).until(leader::isLeading);
    c.put("strata.master.rpc.port", Integer.toString(io.strata.minicluster.FreePorts.loopback()));
    c.put("strata.master.journal.tail.interval", "1h");
    MasterProcess standby = new MasterProcess(StrataConf.of(c), Clock.systemUTC()).start();
    open.add(standby);

    Path first;
    try (var s = java.nio.file.Files.list(tmp.resolve("journal/segments"))) {
      first = s.sorted().findFirst().orElseThrow(); // the segment the standby read from
    }
    for (int i = 0; i < 20; i++) {
      leader.fileSystemMaster().createDirectory("/behind-" + i, false, false, 0755);
    }
    // The leader checkpoints (every 5 entries, checked each second) and removes the segments it covers.
    await().atMost(WAIT).until(() -> !java.nio.file.Files.exists(first));
    leader.close();

    await().atMost(WAIT).until(standby::isLeading);
    for (int i = 0; i < 20; i++) {
      assertThat(standby.fileSystemMaster().exists("/behind-" + i)).as("/behind-" + i).isTrue();
    }
  }
}
