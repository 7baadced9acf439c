package io.strata.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.conf.StrataConf;
import java.net.URI;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class ClientConfsTest {
  /** What a site file could say: ZooKeeper discovery, which a URI authority must override. */
  private static final StrataConf SITE = StrataConf.of(Map.of("strata.zookeeper.address", "zk1:2181",
      "strata.master.rpc.addresses", "m1:1,m2:2", "strata.user.block.size.default", "8MB"));

  private static Configuration hadoop(String... kv) {
    Configuration c = new Configuration(false);
    for (int i = 0; i < kv.length; i += 2) {
      c.set(kv[i], kv[i + 1]);
    }
    return c;
  }

  @Test
  void hostPort_namesOneMaster_andDropsOtherDiscovery() {
    StrataConf c = ClientConfs.of(URI.create("strata://m9:4000/x"), hadoop(), SITE);
    assertThat(c.getRaw("strata.master.hostname")).isEqualTo("m9");
    assertThat(c.getRaw("strata.master.rpc.port")).isEqualTo("4000");
    assertThat(c.getRaw("strata.zookeeper.address")).isNull();
    assertThat(c.getRaw("strata.master.rpc.addresses")).isNull();
    assertThat(c.getRaw("strata.user.block.size.default")).isEqualTo("8MB");
  }

  @Test
  void hostWithoutPort_keepsTheConfiguredPort() {
    StrataConf c = ClientConfs.of(URI.create("strata://m9/"), hadoop("strata.master.rpc.port", "5000"),
        StrataConf.defaults());
    assertThat(c.getRaw("strata.master.hostname")).isEqualTo("m9");
    assertThat(c.getRaw("strata.master.rpc.port")).isEqualTo("5000");
  }

  @Test
  void masterList_becomesRpcAddresses() {
    StrataConf c = ClientConfs.of(URI.create("strata://a:1,b:2,c:3/"), hadoop(), SITE);
    assertThat(c.getRaw("strata.master.rpc.addresses")).isEqualTo("a:1,b:2,c:3");
    assertThat(c.getRaw("strata.zookeeper.address")).isNull();
  }

  @Test
  void zkAuthority_becomesTheZooKeeperAddress() {
    StrataConf c = ClientConfs.of(URI.create("strata://zk@z1:2181,z2:2182/"), hadoop(), SITE);
    assertThat(c.getRaw("strata.zookeeper.address")).isEqualTo("z1:2181,z2:2182");
    assertThat(c.getRaw("strata.master.rpc.addresses")).isNull();
  }

  @Test
  void noAuthority_keepsWhatTheConfigurationsSay_hadoopKeysOverTheSite() {
    StrataConf c = ClientConfs.of(URI.create("strata:///x"),
        hadoop("strata.user.block.size.default", "1MB", "fs.defaultFS", "hdfs://nn"), SITE);
    assertThat(c.getRaw("strata.zookeeper.address")).isEqualTo("zk1:2181");
    assertThat(c.getRaw("strata.user.block.size.default")).isEqualTo("1MB");
    assertThat(c.getRaw("fs.defaultFS")).isNull();
  }

  @Test
  void badAuthorities_areRefusedNamingTheUri() {
    assertThatThrownBy(() -> ClientConfs.of(URI.create("strata://a:1,b/"), hadoop(), SITE))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("strata://a:1,b/")
        .hasMessageContaining("'b' is not host:port");
    assertThatThrownBy(() -> ClientConfs.of(URI.create("strata://zk@z1:99999/"), hadoop(), SITE))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port 99999");
    assertThatThrownBy(() -> ClientConfs.of(URI.create("strata://me@m1:1/"), hadoop(), SITE))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("user name");
  }
}
