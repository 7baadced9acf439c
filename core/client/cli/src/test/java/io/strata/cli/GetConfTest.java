package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.conf.StrataConf;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** fsadmin getConf needs no master: it prints this command line's own configuration. */
class GetConfTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(StrataConf conf, String... args) {
    return StrataCli.run(conf, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), args);
  }

  @Test
  void printsSetAndDefaultValues_andMasksCredentials() {
    StrataConf conf = StrataConf.of(Map.of("strata.master.rpc.port", "1", "strata.master.hostname", "m1"));
    assertThat(run(conf, "fsadmin", "getConf")).isZero();
    String text = out.toString(StandardCharsets.UTF_8);
    assertThat(text).contains("strata.master.rpc.port=1  (set)\n").contains("strata.master.hostname=m1  (set)\n")
        .contains("strata.user.block.read.retry.max=");
    assertThat(text.lines().filter(l -> l.endsWith("(default)")).count()).isGreaterThan(20);
    assertThat(io.strata.common.conf.Secrets.setting("strata.user.s3.secret.key", "abc")).isEqualTo("******");
  }

  @Test
  void onlyTheNamedKeys_andAnUnknownOneIsNamed() {
    StrataConf conf = StrataConf.of(Map.of("strata.master.rpc.port", "7"));
    assertThat(run(conf, "fsadmin", "getConf", "strata.master.rpc.port", "strata.no.such")).isEqualTo(1);
    assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("strata.master.rpc.port=7  (set)\n");
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("strata.no.such is not a client or common key");
  }
}
