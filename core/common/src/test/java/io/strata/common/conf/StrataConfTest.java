package io.strata.common.conf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StrataConfTest {
  private static final PropertyKey<Long> SIZE = PropertyKey.bytesKey("test.size").defaultValue("1KB").build();
  private static final PropertyKey<Duration> TIMEOUT =
      PropertyKey.durationKey("test.timeout").defaultValue("1s").build();
  private static final PropertyKey<Boolean> FLAG = PropertyKey.booleanKey("test.flag").defaultValue(false).build();
  private static final PropertyKey<List<String>> HOSTS = PropertyKey.listKey("test.hosts").defaultValue("").build();
  private static final PropertyKey<Integer> COUNT = PropertyKey.intKey("test.count").defaultValue(3).build();
  private static final PropertyKey<Long> BIG = PropertyKey.longKey("test.big").defaultValue(1L << 40).build();
  private static final PropertyKey<String> NO_DEFAULT = PropertyKey.stringKey("test.no.default").build();

  @TempDir
  Path tmp;

  private static Path writeSite(Path dir, String content) throws IOException {
    Files.createDirectories(dir);
    return Files.writeString(dir.resolve(StrataConf.SITE_FILE), content);
  }

  // ---- typed values through keys ----

  @Test
  void get_parsesSizesThroughTheKey() {
    StrataConf conf = StrataConf.defaults();
    assertThat(conf.get(SIZE)).isEqualTo(1024L);
    assertThat(conf.with(SIZE, "64MB").get(SIZE)).isEqualTo(64L << 20);
    assertThat(conf.with(SIZE, "1.5GB").get(SIZE)).isEqualTo(3L << 29);
  }

  @Test
  void get_badSize_isRejectedNamingTheKeyTheValueAndTheType() {
    StrataConf conf = StrataConf.defaults().with(SIZE, "64XB");
    assertThatThrownBy(() -> conf.get(SIZE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("test.size")
        .hasMessageContaining("'64XB'")
        .hasMessageContaining("size")
        .hasMessageContaining("unknown size unit");
  }

  @Test
  void get_parsesDurationsThroughTheKey() {
    StrataConf conf = StrataConf.defaults();
    assertThat(conf.get(TIMEOUT)).isEqualTo(Duration.ofSeconds(1));
    assertThat(conf.with(TIMEOUT, "5min").get(TIMEOUT)).isEqualTo(Duration.ofMinutes(5));
    assertThat(conf.with(TIMEOUT, "1500").get(TIMEOUT)).isEqualTo(Duration.ofMillis(1500));
  }

  @Test
  void get_badDuration_isRejectedNamingTheKeyAndValue() {
    StrataConf conf = StrataConf.defaults().with(TIMEOUT, "soon");
    assertThatThrownBy(() -> conf.get(TIMEOUT))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("test.timeout")
        .hasMessageContaining("'soon'");
  }

  @Test
  void get_overflowingDuration_isRejectedNamingTheKey() {
    StrataConf conf = StrataConf.defaults().with(TIMEOUT, "9223372036854775807h");
    assertThatThrownBy(() -> conf.get(TIMEOUT))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("test.timeout");
  }

  @Test
  void get_booleans_areCaseInsensitiveAndTrimmed() {
    StrataConf conf = StrataConf.defaults();
    assertThat(conf.get(FLAG)).isFalse();
    assertThat(conf.with(FLAG, "TRUE").get(FLAG)).isTrue();
    assertThat(conf.with(FLAG, " true ").get(FLAG)).isTrue();
    assertThat(conf.with(FLAG, "False").get(FLAG)).isFalse();
  }

  @Test
  void get_badBoolean_isRejectedNamingTheKeyAndValue() {
    StrataConf conf = StrataConf.defaults().with(FLAG, "yes");
    assertThatThrownBy(() -> conf.get(FLAG))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("test.flag")
        .hasMessageContaining("'yes'")
        .hasMessageContaining("true or false");
  }

  @Test
  void get_lists() {
    StrataConf conf = StrataConf.defaults();
    assertThat(conf.get(HOSTS)).isEmpty();
    assertThat(conf.with(HOSTS, "a:1, b:2,").get(HOSTS)).containsExactly("a:1", "b:2");
  }

  @Test
  void get_intAndLong() {
    StrataConf conf = StrataConf.defaults();
    assertThat(conf.get(COUNT)).isEqualTo(3);
    assertThat(conf.with(COUNT, " 42 ").get(COUNT)).isEqualTo(42);
    assertThat(conf.get(BIG)).isEqualTo(1L << 40);
    assertThatThrownBy(() -> conf.with(COUNT, "3000000000").get(COUNT))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("test.count")
        .hasMessageContaining("'3000000000'");
    assertThatThrownBy(() -> conf.with(BIG, "1e3").get(BIG))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("test.big");
  }

  @Test
  void get_missingValueWithoutDefault_isRejectedNamingTheKey() {
    StrataConf conf = StrataConf.defaults();
    assertThat(conf.isSet(NO_DEFAULT)).isFalse();
    assertThatThrownBy(() -> conf.get(NO_DEFAULT))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("test.no.default")
        .hasMessageContaining("no default");
    assertThat(conf.with(NO_DEFAULT, "v").get(NO_DEFAULT)).isEqualTo("v");
  }

  // ---- validators ----

  @Test
  void masterRpcPort_rejects70000_namingTheKeyAndTheRange() {
    StrataConf conf = StrataConf.defaults().with(CommonKeys.MASTER_RPC_PORT, 70000);
    assertThatThrownBy(() -> conf.get(CommonKeys.MASTER_RPC_PORT))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("strata.master.rpc.port")
        .hasMessageContaining("'70000'")
        .hasMessageContaining("between 0 and 65535");
  }

  @Test
  void masterRpcPort_acceptsTheBoundsAndRejectsNegative() {
    StrataConf conf = StrataConf.defaults();
    assertThat(conf.with(CommonKeys.MASTER_RPC_PORT, 0).get(CommonKeys.MASTER_RPC_PORT)).isZero();
    assertThat(conf.with(CommonKeys.MASTER_RPC_PORT, 65535).get(CommonKeys.MASTER_RPC_PORT)).isEqualTo(65535);
    assertThatThrownBy(() -> conf.with(CommonKeys.MASTER_RPC_PORT, -1).get(CommonKeys.MASTER_RPC_PORT))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("strata.master.rpc.port");
    assertThatThrownBy(() -> conf.with(CommonKeys.MASTER_RPC_PORT, 65536).get(CommonKeys.MASTER_RPC_PORT))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void maxMessageSize_validatorBoundsAreInclusive_andOutsideIsRejectedNamingTheKey() {
    PropertyKey<Long> k = CommonKeys.NETWORK_MAX_MESSAGE_SIZE;
    StrataConf conf = StrataConf.defaults();
    assertThat(conf.with(k, "64KB").get(k)).isEqualTo(64L * 1024);
    assertThat(conf.with(k, "256MB").get(k)).isEqualTo(256L << 20);
    assertThatThrownBy(() -> conf.with(k, "32KB").get(k))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("strata.network.max.message.size")
        .hasMessageContaining("'32KB'")
        .hasMessageContaining("between 64KB and 256MB");
    assertThatThrownBy(() -> conf.with(k, "257MB").get(k))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("strata.network.max.message.size");
  }

  @Test
  void commonKeys_defaults() {
    StrataConf conf = StrataConf.defaults();
    assertThat(conf.get(CommonKeys.MASTER_HOSTNAME)).isEqualTo("localhost");
    assertThat(conf.get(CommonKeys.MASTER_RPC_PORT)).isEqualTo(19998);
    assertThat(conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE)).isEqualTo(8L << 20);
    assertThat(conf.get(CommonKeys.RPC_TIMEOUT)).isEqualTo(Duration.ofSeconds(30));
    assertThat(conf.get(CommonKeys.HOME)).isEqualTo(".");
    assertThat(conf.explicitValues()).isEmpty();
  }

  // ---- envName ----

  @Test
  void envName_uppercasesAndReplacesDots() {
    assertThat(CommonKeys.MASTER_RPC_PORT.envName()).isEqualTo("STRATA_MASTER_RPC_PORT");
    assertThat(CommonKeys.NETWORK_MAX_MESSAGE_SIZE.envName()).isEqualTo("STRATA_NETWORK_MAX_MESSAGE_SIZE");
    assertThat(CommonKeys.MASTER_HOSTNAME.envName()).isEqualTo("STRATA_MASTER_HOSTNAME");
  }

  @Test
  void envName_isTheVariableThatLoadReadsForTheKey() {
    for (PropertyKey<?> key : List.of(CommonKeys.MASTER_HOSTNAME, CommonKeys.MASTER_RPC_PORT,
        CommonKeys.NETWORK_MAX_MESSAGE_SIZE, CommonKeys.RPC_TIMEOUT)) {
      StrataConf conf = StrataConf.load(Map.of(key.envName(), "raw-" + key.name()), new Properties());
      assertThat(conf.getRaw(key.name())).as(key.name()).isEqualTo("raw-" + key.name());
      assertThat(conf.isSet(key)).isTrue();
    }
  }

  // ---- precedence ----

  @Test
  void load_precedence_siteFile_then_env_then_systemProperties_then_with() throws IOException {
    Path confDir = tmp.resolve("conf");
    writeSite(confDir, String.join("\n",
        "strata.master.hostname = site-host  ",
        "strata.master.rpc.port=1000",
        "strata.network.rpc.timeout=5s",
        "strata.network.max.message.size=1MB",
        ""));
    Map<String, String> env = Map.of(
        "STRATA_CONF_DIR", confDir.toString(),
        "STRATA_MASTER_RPC_PORT", "2000",
        "STRATA_NETWORK_RPC_TIMEOUT", "7s",
        "STRATA_NETWORK_MAX_MESSAGE_SIZE", "2MB");
    Properties props = new Properties();
    props.setProperty("strata.network.rpc.timeout", "9s");
    props.setProperty("strata.network.max.message.size", "3MB");

    StrataConf conf = StrataConf.load(env, props);

    assertThat(conf.get(CommonKeys.MASTER_HOSTNAME)).isEqualTo("site-host"); // site only, trimmed
    assertThat(conf.get(CommonKeys.MASTER_RPC_PORT)).isEqualTo(2000);         // env beats site
    assertThat(conf.get(CommonKeys.RPC_TIMEOUT)).isEqualTo(Duration.ofSeconds(9)); // props beat env+site
    assertThat(conf.get(CommonKeys.HOME)).isEqualTo(".");                       // nobody set it

    StrataConf overridden = conf.with(CommonKeys.NETWORK_MAX_MESSAGE_SIZE, "4MB");
    assertThat(overridden.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE)).isEqualTo(4L << 20); // with beats all
    assertThat(conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE)).isEqualTo(3L << 20);       // original unchanged
  }

  @Test
  void load_confDirFromSystemProperty_beatsTheEnvironment() throws IOException {
    Path envDir = tmp.resolve("env-conf");
    Path propDir = tmp.resolve("prop-conf");
    writeSite(envDir, "strata.master.hostname=from-env-dir\n");
    writeSite(propDir, "strata.master.hostname=from-prop-dir\n");
    Properties props = new Properties();
    props.setProperty("strata.conf.dir", propDir.toString());

    StrataConf conf = StrataConf.load(Map.of("STRATA_CONF_DIR", envDir.toString()), props);

    assertThat(conf.get(CommonKeys.MASTER_HOSTNAME)).isEqualTo("from-prop-dir");
  }

  @Test
  void load_confDirWithoutSiteFile_givesDefaults() {
    StrataConf conf = StrataConf.load(Map.of("STRATA_CONF_DIR", tmp.toString()), new Properties());
    assertThat(conf.get(CommonKeys.MASTER_RPC_PORT)).isEqualTo(19998);
    assertThat(conf.explicitValues()).isEmpty();
  }

  @Test
  void load_ignoresUnrelatedEnvironmentAndProperties_andLauncherVariables() {
    Map<String, String> env = new HashMap<>();
    env.put("PATH", "/usr/bin");
    env.put("STRATAX_MASTER_HOSTNAME", "nope");
    env.put("STRATA_CONF_DIR", tmp.resolve("absent").toString());
    env.put("STRATA_JAVA_OPTS", "-Xmx1g");
    Properties props = new Properties();
    props.setProperty("java.io.tmpdir", "/tmp");
    props.setProperty("stratafoo", "x");

    StrataConf conf = StrataConf.load(env, props);

    assertThat(conf.explicitValues()).isEmpty();
    assertThat(conf.get(CommonKeys.MASTER_HOSTNAME)).isEqualTo("localhost");
  }

  @Test
  void load_badEnvironmentValue_failsOnReadNamingTheKey() {
    StrataConf conf = StrataConf.load(Map.of("STRATA_MASTER_RPC_PORT", "70000"), new Properties());
    assertThatThrownBy(() -> conf.get(CommonKeys.MASTER_RPC_PORT))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("strata.master.rpc.port");
  }

  // ---- copies ----

  @Test
  void withAll_overridesSeveral_andLeavesTheOriginalUnchanged() {
    StrataConf base = StrataConf.of(Map.of("test.count", "5", "test.flag", "true"));
    StrataConf copy = base.withAll(Map.of("test.count", "6", "test.size", "2KB"));
    assertThat(copy.get(COUNT)).isEqualTo(6);
    assertThat(copy.get(FLAG)).isTrue();
    assertThat(copy.get(SIZE)).isEqualTo(2048L);
    assertThat(base.get(COUNT)).isEqualTo(5);
    assertThat(base.isSet(SIZE)).isFalse();
  }

  @Test
  void equals_comparesExplicitValues() {
    assertThat(StrataConf.of(Map.of("a", "1"))).isEqualTo(StrataConf.defaults().withAll(Map.of("a", "1")));
    assertThat(StrataConf.of(Map.of("a", "1")).hashCode())
        .isEqualTo(StrataConf.defaults().withAll(Map.of("a", "1")).hashCode());
    assertThat(StrataConf.of(Map.of("a", "1"))).isNotEqualTo(StrataConf.of(Map.of("a", "2")));
  }
}
