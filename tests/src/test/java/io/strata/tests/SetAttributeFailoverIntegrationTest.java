package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.SetAttributeOptions;
import io.strata.common.conf.StrataConf;
import io.strata.master.MasterProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Owner, group, mode and times set on the leader are what the standby serves after it takes over: a real
 * ZooKeeper (Curator's TestingServer), two masters sharing one journal dir, a client that follows the leader
 * through the address list.
 */
class SetAttributeFailoverIntegrationTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @TempDir
  Path tmp;
  private TestingServer zk;
  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    if (zk != null) {
      zk.close();
    }
  }

  private Map<String, String> base() {
    Map<String, String> c = new HashMap<>();
    c.put("strata.master.journal.dir", tmp.resolve("journal").toString());
    c.put("strata.master.mount.table.root.ufs", tmp.resolve("underFSStorage").toString());
    c.put("strata.master.journal.tail.interval", "50ms");
    c.put("strata.user.master.retry.window", "30s");
    c.put("strata.network.rpc.timeout", "5s");
    return c;
  }

  private MasterProcess master(int port) throws IOException {
    Map<String, String> c = base();
    c.put("strata.zookeeper.address", zk.getConnectString());
    c.put("strata.zookeeper.session.timeout", "3s");
    c.put("strata.master.rpc.port", Integer.toString(port));
    c.put("strata.master.hostname", "localhost");
    MasterProcess m = new MasterProcess(StrataConf.of(c), Clock.systemUTC()).start();
    open.add(m);
    return m;
  }

  private static List<Object> attributes(URIStatus s) {
    return List.of(s.id(), s.owner(), s.group(), s.mode(), s.modificationTimeMs(), s.accessTimeMs());
  }

  @Test
  void attributesSetOnTheLeader_areServedByTheStandby_afterItTakesOver() throws Exception {
    zk = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, -1, null, "127.0.0.1"), true);
    List<MasterProcess> ms = List.of(master(io.strata.minicluster.FreePorts.loopback()), master(io.strata.minicluster.FreePorts.loopback()));
    await().atMost(WAIT).until(() -> ms.stream().filter(MasterProcess::isLeading).count() == 1);
    MasterProcess leader = ms.get(0).isLeading() ? ms.get(0) : ms.get(1);
    MasterProcess standby = leader == ms.get(0) ? ms.get(1) : ms.get(0);

    Map<String, String> cc = base();
    cc.put("strata.master.rpc.addresses", "localhost:" + ms.get(0).rpcPort() + ",localhost:" + ms.get(1).rpcPort());
    FileSystem fs = FileSystem.create(StrataConf.of(cc));
    open.add(fs);
    fs.createDirectory("/ha/d/e", CreateDirectoryOptions.defaults().withRecursive(true));
    fs.setAttribute("/ha", SetAttributeOptions.defaults().withRecursive(true).withOwner("svc").withGroup("ops")
        .withMode(0770));
    fs.setAttribute("/ha/d/e", SetAttributeOptions.defaults().withMode(0705).withModificationTimeMs(11_000L)
        .withAccessTimeMs(22_000L));
    List<List<Object>> before = new ArrayList<>();
    for (String p : List.of("/ha", "/ha/d", "/ha/d/e")) {
      before.add(attributes(fs.getStatus(p)));
    }
    assertThat(before.get(1).subList(1, 4)).containsExactly("svc", "ops", 0770);
    assertThat(before.get(2).subList(1, 6)).containsExactly("svc", "ops", 0705, 11_000L, 22_000L);

    leader.close();
    await().atMost(WAIT).until(standby::isLeading);
    List<List<Object>> after = new ArrayList<>();
    for (String p : List.of("/ha", "/ha/d", "/ha/d/e")) {
      after.add(attributes(fs.getStatus(p)));
    }
    assertThat(after).isEqualTo(before);
  }
}
