package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.conf.StrataConf;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class VersionCommandTest {
  @Test
  void printsTheBuildsVersionAndTheJava_withoutAMaster() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    // No master listens on port 1: version must not need one.
    int code = StrataCli.run(StrataConf.of(java.util.Map.of("strata.master.rpc.port", "1")),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), "version");
    assertThat(code).isZero();
    String text = out.toString(StandardCharsets.UTF_8);
    assertThat(text).matches("(?s)Strata \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?\\nJava " + System.getProperty("java.version") + " .*");
    assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
  }
}
