package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileSystem;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.UnavailableException;
import io.strata.tests.Scripts.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Master HA with real processes: a ZooKeeper in the test JVM and two masters started with
 * bin/strata-start.sh master, each with its own data, log dir and port but one shared journal dir. The
 * leader is killed with SIGKILL while a client creates files; the standby takes over once the dead
 * leader's ZooKeeper session expires, the client follows it through ZooKeeper within its retry window,
 * and every create it was told succeeded is there. Prints the failover time as a
 * {@code bench op=master_failover kill=SIGKILL} line.
 */
class MasterFailoverIT {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir
  static Path tmp;
  private static TestingServer zk;
  private static final List<Map<String, String>> started = new ArrayList<>();
  private static final List<AutoCloseable> open = new ArrayList<>();

  @BeforeAll
  static void startZooKeeper() throws Exception {
    zk = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, -1, null, "127.0.0.1"), true);
  }

  @AfterAll
  static void stopAll() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    for (Map<String, String> env : started) {
      Scripts.run(tmp, env, "bin/strata-stop.sh", "all");
    }
    zk.close();
  }

  /** A master process: its RPC port, the env it was started with, its log and its pid. */
  private record Master(int port, Map<String, String> env, Path log, long pid) {
    String logText() throws IOException {
      return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    }
  }

  private static Master startMaster(String name) throws Exception {
    int port = Scripts.freePort();
    Path home = tmp.resolve(name);
    Map<String, String> env = new HashMap<>();
    env.put("STRATA_DATA_DIR", home.resolve("data").toString());
    env.put("STRATA_LOGS_DIR", home.resolve("logs").toString());
    env.put("STRATA_MASTER_JOURNAL_DIR", tmp.resolve("journal").toString());
    env.put("STRATA_MASTER_MOUNT_TABLE_ROOT_UFS", tmp.resolve("underFSStorage").toString());
    env.put("STRATA_MASTER_RPC_PORT", Integer.toString(port));
    env.put("STRATA_ZOOKEEPER_ADDRESS", zk.getConnectString());
    env.put("STRATA_ZOOKEEPER_SESSION_TIMEOUT", "3s");
    env.put("STRATA_HEAP", "256m");
    started.add(env);
    Result r = Scripts.run(tmp, env, "bin/strata-start.sh", "master");
    assertThat(r.exit()).as("start %s: %s %s", name, r.out(), r.err()).isZero();
    long pid = Long.parseLong(Files.readString(home.resolve("data/pids/master.pid")).trim());
    return new Master(port, env, home.resolve("logs/master.log"), pid);
  }

  private static FileSystem client(Map<String, String> conf) {
    FileSystem fs = FileSystem.create(StrataConf.of(conf));
    open.add(fs);
    return fs;
  }

  /** A client of one master only: no failover, so a standby's UNAVAILABLE reaches the caller at once. */
  private static FileSystem singleAddressClient(Master m) {
    return client(Map.of("strata.master.hostname", "localhost", "strata.master.rpc.port", Integer.toString(m.port()),
        "strata.network.rpc.timeout", "5s"));
  }

  /** True when the master behind {@code single} serves: the leader answers, a standby (or a dead one) cannot. */
  private static boolean leads(FileSystem single) throws IOException {
    try {
      single.getStatus("/");
      return true;
    } catch (UnavailableException e) {
      return false;
    }
  }

  /** A create the client had acknowledged: when its call started and when it returned. */
  private record Ack(String path, long startNanos, long endNanos) {}

  @Test
  @Timeout(value = 90, unit = TimeUnit.SECONDS)
  void leaderProcessKilledWithSigkill_duringCreates_standbyTakesOver_andNoAcknowledgedCreateIsLost()
      throws Exception {
    Master m1 = startMaster("m1");
    Master m2 = startMaster("m2");
    FileSystem ask1 = singleAddressClient(m1);
    FileSystem ask2 = singleAddressClient(m2);
    await().atMost(WAIT).until(() -> leads(ask1) != leads(ask2));
    boolean firstLeads = leads(ask1);
    Master leader = firstLeads ? m1 : m2;
    Master standby = firstLeads ? m2 : m1;
    FileSystem askStandby = firstLeads ? ask2 : ask1;
    assertThat(leader.logText()).contains("is the leader");
    assertThat(standby.logText()).doesNotContain("is the leader");
    assertThatThrownBy(() -> askStandby.getStatus("/"))
        .isInstanceOf(UnavailableException.class)
        .hasMessageContaining("standby");

    FileSystem fs = client(Map.of(
        "strata.zookeeper.address", zk.getConnectString(),
        "strata.zookeeper.session.timeout", "3s",
        "strata.user.master.retry.window", "60s",
        "strata.network.rpc.timeout", "5s"));
    fs.createDirectory("/load", CreateDirectoryOptions.defaults());
    ConcurrentLinkedQueue<Ack> acked = new ConcurrentLinkedQueue<>();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    open.add(pool::shutdownNow);
    Future<Integer> failures = pool.submit(() -> {
      int failed = 0;
      for (int i = 0; !stop.get(); i++) {
        String p = "/load/f" + i;
        long start = System.nanoTime();
        try {
          fs.createFile(p).close();
          acked.add(new Ack(p, start, System.nanoTime()));
        } catch (IOException e) {
          failed++; // in flight at the kill: it may or may not have happened, so it is not counted
        }
      }
      return failed;
    });
    await().atMost(WAIT).until(() -> acked.size() >= 50);

    long killedAt = System.nanoTime();
    ProcessHandle process = ProcessHandle.of(leader.pid()).orElseThrow();
    assertThat(process.destroyForcibly()).isTrue(); // SIGKILL
    process.onExit().get(10, TimeUnit.SECONDS);
    long deadAt = System.nanoTime();
    // Any create acknowledged after the process is gone was acknowledged by the new leader.
    await().atMost(WAIT).until(() -> acked.stream().anyMatch(a -> a.endNanos() > deadAt));
    long firstAfter = acked.stream().mapToLong(Ack::endNanos).filter(t -> t > deadAt).min().orElseThrow();
    long failoverMs = TimeUnit.NANOSECONDS.toMillis(firstAfter - killedAt);
    System.out.println("bench op=master_failover kill=SIGKILL failover_ms=" + failoverMs + " (leader killed -> "
        + "first create acknowledged by the new leader; ZooKeeper session timeout 3s)");

    assertThat(leads(askStandby)).isTrue();
    assertThat(standby.logText()).contains("is the leader");
    int ackedAtFailover = acked.size();
    await().atMost(WAIT).until(() -> acked.size() > ackedAtFailover + 20);
    stop.set(true);
    assertThat(failures.get(30, TimeUnit.SECONDS)).as("creates that failed across the failover").isLessThan(5);

    for (Ack a : acked) {
      assertThat(fs.exists(a.path())).as("acknowledged create %s", a.path()).isTrue();
    }
    assertThat(fs.listStatus("/load").size()).isGreaterThanOrEqualTo(acked.size());
    // The dead leader's election node lives until its ZooKeeper session expires: no standby can lead
    // sooner, and the client's retry window (60 s) covers it.
    assertThat(failoverMs).isBetween(1_000L, 60_000L);
  }
}
