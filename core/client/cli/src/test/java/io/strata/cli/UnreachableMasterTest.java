package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.conf.StrataConf;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The real client against a port nobody listens on: the public entry point, end to end. */
class UnreachableMasterTest {
  private int port;
  private StrataConf conf;
  private String out;
  private String err;

  @BeforeEach
  void closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    conf = StrataConf.of(Map.of("strata.master.hostname", "localhost",
        "strata.master.rpc.port", Integer.toString(port), "strata.network.rpc.timeout", "5s"));
  }

  private int run(String... args) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    ByteArrayOutputStream e = new ByteArrayOutputStream();
    int code = StrataCli.run(conf, new PrintStream(o, true, StandardCharsets.UTF_8),
        new PrintStream(e, true, StandardCharsets.UTF_8), args);
    out = o.toString(StandardCharsets.UTF_8);
    err = e.toString(StandardCharsets.UTF_8);
    return code;
  }

  @Test
  void run_namesTheMasterAddress_whenNothingListens() {
    assertThat(run("fs", "ls", "/")).isEqualTo(1);
    assertThat(err)
        .startsWith("ls: cannot reach the master at localhost:" + port + ": ")
        .doesNotContain("\tat ");
    assertThat(out).isEmpty();
  }

  @Test
  void unreachableMaster_isReportedOnce_notOncePerPath() {
    assertThat(run("fs", "ls", "/a", "/b")).isEqualTo(1);
    assertThat(err.lines()).singleElement().asString()
        .startsWith("ls: cannot reach the master at localhost:" + port + ": ");
    assertThat(out).isEmpty();
  }

  @Test
  void fsadminReport_namesTheMasterAddress() {
    assertThat(run("fsadmin", "report")).isEqualTo(1);
    assertThat(err.lines()).singleElement().asString()
        .startsWith("fsadmin: cannot reach the master at localhost:" + port + ": ");
    assertThat(out).isEmpty();
  }

  @Test
  void aStrataUri_namesTheMasterTheRunTriesAndReports() throws IOException {
    int other;
    try (ServerSocket s = new ServerSocket(0)) {
      other = s.getLocalPort();
    }
    assertThat(run("fs", "-ls", "strata://localhost:" + other + "/a")).isEqualTo(1);
    assertThat(err.lines()).singleElement().asString()
        .startsWith("ls: cannot reach the master at localhost:" + other + ": ");
  }
}
