package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.WorkerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Block streaming over the worker's data domain socket, on one real worker: reads, positioned reads and
 * writes of a client on the worker's host go over the socket (the worker counts calls per transport) and
 * are byte-exact; a missing socket or the client key turned off make the client stream over TCP, the
 * first with its reason logged; the socket file's mode, its path from the port, a stale file replaced at
 * start and the file removed at stop.
 */
class DomainSocketStreamingIntegrationTest {
  private static final int BLOCK = 1 << 20;

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.worker.tier.0.quota", "64MB").build().start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static WorkerProcess worker() {
    return cluster.worker(0);
  }

  /** A client with these settings on top of the cluster's (short-circuit off unless they say otherwise). */
  private static FileSystem client(Map<String, String> settings) {
    // Reads over gRPC too (not the block transfer protocol): the data service's socket is what is tested.
    StrataConf conf = cluster.clientConf().withAll(Map.of("strata.user.shortcircuit.mode", "off",
        "strata.user.network.transfer.enabled", "false")).withAll(settings);
    return FileSystem.create(conf);
  }

  private static byte[] data(int length, long seed) {
    byte[] data = new byte[length];
    new Random(seed).nextBytes(data);
    return data;
  }

  private static void write(FileSystem fs, String path, byte[] data) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(WriteType.MUST_CACHE))) {
      out.write(data);
    }
  }

  private static long calls(String method, boolean overDomainSocket) {
    return worker().dataCalls(method, overDomainSocket);
  }

  @Test
  void readsAndWrites_streamOverTheDomainSocket_byteExact() throws IOException {
    byte[] data = data(2 * BLOCK + 4321, 1);
    long udsWrites = calls("WriteBlock", true);
    long tcpWrites = calls("WriteBlock", false);
    long udsReads = calls("ReadBlock", true);
    long tcpReads = calls("ReadBlock", false);
    try (FileSystem fs = client(Map.of())) {
      write(fs, "/uds/exact", data);
      assertThat(calls("WriteBlock", true) - udsWrites).isEqualTo(3);

      try (FileInStream in = fs.openFile("/uds/exact")) {
        assertThat(in.readAllBytes()).isEqualTo(data);
      }
      assertThat(calls("ReadBlock", true) - udsReads).isEqualTo(3);
      byte[] part = new byte[BLOCK];
      try (FileInStream in = fs.openFile("/uds/exact")) {
        in.readFully(BLOCK / 2, part, 0, part.length); // spans blocks 0 and 1
      }
      assertThat(part).isEqualTo(Arrays.copyOfRange(data, BLOCK / 2, BLOCK / 2 + BLOCK));
      assertThat(calls("ReadBlock", true) - udsReads).isEqualTo(5);
      assertThat(fs.domainSocketFallbackReasons()).isEmpty();
    }
    // Nothing of it went through the TCP data port.
    assertThat(calls("WriteBlock", false)).isEqualTo(tcpWrites);
    assertThat(calls("ReadBlock", false)).isEqualTo(tcpReads);
  }

  @Test
  void shortCircuitFallback_streamsOverTheDomainSocket() throws IOException {
    byte[] data = data(BLOCK + 17, 2);
    try (FileSystem fs = client(Map.of("strata.user.shortcircuit.mode", "fd",
        "strata.user.shortcircuit.domain.socket.path", tmp.resolve("no-sc-${strata.worker.rpc.port}.sock").toString()))) {
      write(fs, "/uds/sc-fallback", data);
      long udsReads = calls("ReadBlock", true);
      long tcpReads = calls("ReadBlock", false);
      try (FileInStream in = fs.openFile("/uds/sc-fallback")) {
        assertThat(in.readAllBytes()).isEqualTo(data);
        assertThat(in.shortCircuit().opens()).isZero();
        assertThat(in.shortCircuit().fallbackReasons()).isNotEmpty();
      }
      assertThat(calls("ReadBlock", true) - udsReads).isEqualTo(2);
      assertThat(calls("ReadBlock", false)).isEqualTo(tcpReads);
    }
  }

  @Test
  void missingSocket_fallsBackToTcp_withTheReasonLogged() throws IOException {
    byte[] data = data(BLOCK + 99, 3);
    Path absent = tmp.resolve("absent-" + worker().rpcPort() + "-data.sock");
    long udsCalls = calls("WriteBlock", true) + calls("ReadBlock", true);
    long tcpWrites = calls("WriteBlock", false);
    long tcpReads = calls("ReadBlock", false);
    try (FileSystem fs = client(Map.of("strata.user.data.domain.socket.path",
        tmp.resolve("absent-${strata.worker.rpc.port}-data.sock").toString()))) {
      write(fs, "/uds/fallback", data);
      try (FileInStream in = fs.openFile("/uds/fallback")) {
        assertThat(in.readAllBytes()).isEqualTo(data);
      }
      assertThat(fs.domainSocketFallbackReasons()).singleElement().satisfies(r -> assertThat(r)
          .contains("worker localhost:" + worker().rpcPort())
          .contains("no socket at " + absent)
          .contains("streaming through its TCP data port"));
    }
    assertThat(calls("WriteBlock", false) - tcpWrites).isEqualTo(2);
    assertThat(calls("ReadBlock", false) - tcpReads).isEqualTo(2);
    assertThat(calls("WriteBlock", true) + calls("ReadBlock", true)).isEqualTo(udsCalls);
  }

  @Test
  void clientKeyOff_streamsOverTcp_withoutAFallbackReason() throws IOException {
    byte[] data = data(BLOCK / 3, 4);
    long tcpReads = calls("ReadBlock", false);
    long udsReads = calls("ReadBlock", true);
    try (FileSystem fs = client(Map.of("strata.user.data.domain.socket.enabled", "false"))) {
      write(fs, "/uds/off", data);
      try (FileInStream in = fs.openFile("/uds/off")) {
        assertThat(in.readAllBytes()).isEqualTo(data);
      }
      assertThat(fs.domainSocketFallbackReasons()).isEmpty();
    }
    assertThat(calls("ReadBlock", false) - tcpReads).isEqualTo(1);
    assertThat(calls("ReadBlock", true)).isEqualTo(udsReads);
  }

  @Test
  void socketFile_admitsOnlyTheWorkersUserAndGroup_atAPathFromThePort() throws IOException {
    Path socket = worker().dataDomainSocket();
    assertThat(socket).isEqualTo(Path.of("/tmp/strata-worker-" + worker().rpcPort() + "-data.sock"));
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket))).isEqualTo("rw-rw----");
    assertThat(Files.isRegularFile(socket)).isFalse();
  }

  @Test
  void staleSocketFile_isReplacedAtStart_andRemovedAtStop() throws IOException {
    Path socket = tmp.resolve("stale/worker-data.sock");
    Files.createDirectories(socket.getParent());
    Files.writeString(socket, "left by a worker that died");
    byte[] data = data(BLOCK / 2, 5);
    try (LocalStrataCluster own = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("own"))
        .set("strata.worker.tier.0.quota", "16MB")
        .set("strata.worker.data.domain.socket.path", socket.toString())
        .set("strata.user.data.domain.socket.path", socket.toString())
        .set("strata.user.shortcircuit.mode", "off").set("strata.user.network.transfer.enabled", "false").build().start()) {
      assertThat(Files.isRegularFile(socket)).isFalse(); // a socket now, not the stale file
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket))).isEqualTo("rw-rw----");
      FileSystem fs = own.client();
      write(fs, "/uds/stale", data);
      try (FileInStream in = fs.openFile("/uds/stale")) {
        assertThat(in.readAllBytes()).isEqualTo(data);
      }
      assertThat(own.worker(0).dataCalls("ReadBlock", true)).isEqualTo(1);
      own.stopWorker(0);
      assertThat(Files.exists(socket)).isFalse();
    }
  }
}
