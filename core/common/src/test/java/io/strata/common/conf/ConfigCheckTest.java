package io.strata.common.conf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** Start-up checks of a configuration: bad values fail in one line, unknown keys get the nearest known one. */
class ConfigCheckTest {
  private static final PropertyKey<List<String>> QUOTA = PropertyKey.listKey("strata.worker.tier.0.quota")
      .doc("d").build();
  private static final PropertyKey<List<String>> QUOTA1 = PropertyKey.listKey("strata.worker.tier.1.quota")
      .doc("d").build();
  private static final PropertyKey<Integer> PORT = PropertyKey.intKey("strata.master.rpc.port").doc("d").build();
  private static final List<PropertyKey<?>> KEYS = List.of(QUOTA, QUOTA1, PORT, CommonKeys.RPC_TIMEOUT);

  @Test
  void levenshtein_countsEdits() {
    assertThat(ConfigCheck.levenshtein("quota", "quota")).isZero();
    assertThat(ConfigCheck.levenshtein("qouta", "quota")).isEqualTo(2);
    assertThat(ConfigCheck.levenshtein("", "abc")).isEqualTo(3);
    assertThat(ConfigCheck.levenshtein("kitten", "sitting")).isEqualTo(3);
  }

  @Test
  void aMisspeltKey_isNamedWithTheNearestDeclaredKey() {
    assertThat(ConfigCheck.unknownKeyWarning("strata.worker.tier.0.qouta", KEYS))
        .isEqualTo("Unknown configuration key strata.worker.tier.0.qouta (ignored); did you mean "
            + "strata.worker.tier.0.quota?");
    // Templated keys: the tier number is part of the match, so tier 1's typo points at tier 1's key.
    assertThat(ConfigCheck.unknownKeyWarning("strata.worker.tier.1.quotas", KEYS))
        .endsWith("did you mean strata.worker.tier.1.quota?");
    assertThat(ConfigCheck.unknownKeyWarning("strata.master.rpc.prot", KEYS))
        .endsWith("did you mean strata.master.rpc.port?");
  }

  @Test
  void declaredKeys_otherNames_andNamesTheScriptsUse_areNotWarnedAbout() {
    assertThat(ConfigCheck.unknownKeyWarning("strata.worker.tier.0.quota", KEYS)).isNull();
    assertThat(ConfigCheck.unknownKeyWarning("java.home", KEYS)).isNull();
    assertThat(ConfigCheck.unknownKeyWarning("strata.heap", KEYS)).isNull(); // STRATA_HEAP of the scripts
    assertThat(ConfigCheck.unknownKeyWarning("strata.log.name", KEYS)).isNull();
  }

  @Test
  void check_warnsOfUnknownKeysFromTheEnvironmentAndSystemProperties() {
    Properties sys = new Properties();
    sys.setProperty("strata.network.rpc.timeuot", "5s");
    StrataConf conf = StrataConf.load(Map.of("STRATA_NETWORK_RPC_TIMEOUT", "10s", "STRATA_NETWORK_RPC_TIMOUT", "1s"),
        sys);
    assertThat(ConfigCheck.check(conf, ConfigCheck.keysOf(CommonKeys.class), List.of())).containsExactly(
        "Unknown configuration key strata.network.rpc.timeuot (ignored); did you mean strata.network.rpc.timeout?",
        "Unknown configuration key strata.network.rpc.timout (ignored); did you mean strata.network.rpc.timeout?");
  }

  @Test
  void check_leavesOtherProcessesKeysToThem_butStillValidatesItsOwn() {
    StrataConf conf = StrataConf.of(Map.of("strata.worker.tier.0.qouta", "1GB", "strata.master.rpc.port", "5",
        "strata.masterr.x", "1"));
    assertThat(ConfigCheck.check(conf, KEYS, List.of("strata.worker."))).containsExactly(
        "Unknown configuration key strata.masterr.x (ignored); did you mean strata.master.rpc.port?");
    assertThat(ConfigCheck.keysOf(CommonKeys.class)).contains(CommonKeys.RPC_TIMEOUT, CommonKeys.MASTER_RPC_PORT);
  }

  @Test
  void check_failsOnABadValue_inOneLineNamingTheKeyTheValueAndWhatIsExpected() {
    StrataConf conf = StrataConf.of(Map.of("strata.network.rpc.timeout", "soon"));
    assertThatThrownBy(() -> ConfigCheck.check(conf, ConfigCheck.keysOf(CommonKeys.class), List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Invalid value 'soon' for strata.network.rpc.timeout: 'soon' is not a duration such as 500ms, "
            + "10s or 5min");
    StrataConf port = StrataConf.of(Map.of("strata.master.rpc.port", "lots"));
    assertThatThrownBy(() -> ConfigCheck.validate(port, KEYS))
        .hasMessage("Invalid value 'lots' for strata.master.rpc.port: expected an integer between -2147483648 and "
            + "2147483647");
  }

  @Test
  void aZooKeeperSessionTimeoutTooLongForZooKeepersInt_isRefusedNamingTheMaximum() {
    StrataConf conf = StrataConf.of(Map.of("strata.zookeeper.session.timeout", "30d"));
    assertThatThrownBy(() -> ConfigCheck.check(conf, ConfigCheck.keysOf(CommonKeys.class), List.of()))
        .hasMessage("Invalid value '30d' for strata.zookeeper.session.timeout: must be between 1ms and "
            + "2147483647ms (about 24 days)");
  }
}
