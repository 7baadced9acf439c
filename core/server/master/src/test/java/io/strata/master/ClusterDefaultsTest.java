package io.strata.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.conf.StrataConf;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the master serves clients as cluster defaults, and when their hash changes. */
class ClusterDefaultsTest {

  @Test
  void servesOnlyClientKeys_sorted() {
    ClusterDefaults d = new ClusterDefaults(StrataConf.of(Map.of("strata.user.list.batch.size", "7",
        "strata.master.rpc.port", "1", "strata.worker.hostname", "w", "strata.user.block.size.default", "1MB")));
    assertThat(d.values()).containsExactly(Map.entry("strata.user.block.size.default", "1MB"),
        Map.entry("strata.user.list.batch.size", "7"));
  }

  @Test
  void hash_changesWithAClientValue_notWithServerKeys() {
    String base = new ClusterDefaults(StrataConf.of(Map.of("strata.user.list.batch.size", "7"))).hash();
    assertThat(new ClusterDefaults(StrataConf.of(Map.of("strata.user.list.batch.size", "7",
        "strata.master.rpc.port", "9"))).hash()).isEqualTo(base);
    assertThat(new ClusterDefaults(StrataConf.of(Map.of("strata.user.list.batch.size", "8"))).hash())
        .isNotEqualTo(base);
    assertThat(new ClusterDefaults(StrataConf.defaults()).hash()).isNotEqualTo(base).hasSize(64);
  }
}
