package io.strata.hadoop;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.conf.StrataConf;
import io.strata.master.MasterProcess;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code strata://zk@host:port/}: a real ZooKeeper (Curator's TestingServer) where a master with ZooKeeper HA
 * elects itself leader; the Hadoop client finds it there and nowhere else (the Hadoop configuration names a
 * wrong master, which the zk@ authority overrides).
 */
class StrataZkAuthorityIntegrationTest {
  @TempDir
  java.nio.file.Path tmp;

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  @Test
  void zkAuthority_findsTheLeaderInZooKeeper() throws Exception {
    try (TestingServer zk = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, -1, null, "127.0.0.1"),
        true)) {
      Map<String, String> c = new HashMap<>();
      c.put("strata.master.journal.dir", tmp.resolve("journal").toString());
      c.put("strata.master.mount.table.root.ufs", tmp.resolve("underFSStorage").toString());
      c.put("strata.zookeeper.address", zk.getConnectString());
      c.put("strata.zookeeper.session.timeout", "3s");
      c.put("strata.master.rpc.port", Integer.toString(freePort()));
      c.put("strata.master.hostname", "localhost");
      c.put("strata.master.bind.host", "127.0.0.1");
      try (MasterProcess master = new MasterProcess(StrataConf.of(c), Clock.systemUTC()).start()) {
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(master::isLeading);
        Configuration conf = new Configuration();
        conf.setBoolean("fs.strata.impl.disable.cache", true);
        conf.set("strata.master.hostname", "localhost");
        conf.set("strata.master.rpc.port", Integer.toString(freePort())); // nobody there
        URI uri = URI.create("strata://zk@" + zk.getConnectString() + "/");
        try (FileSystem fs = FileSystem.get(uri, conf)) {
          StrataConf client = ((StrataFileSystem) fs).client().conf();
          assertThat(client.getRaw("strata.zookeeper.address")).isEqualTo(zk.getConnectString());
          assertThat(fs.mkdirs(new Path("/via/zk"))).isTrue();
          assertThat(fs.getFileStatus(new Path("/via/zk")).isDirectory()).isTrue();
          assertThat(fs.getFileStatus(new Path("/via/zk")).getPath().toUri().getAuthority())
              .isEqualTo("zk@" + zk.getConnectString());
          assertThat(fs.listStatus(new Path("/via"))).hasSize(1);
        }
      }
    }
  }
}
