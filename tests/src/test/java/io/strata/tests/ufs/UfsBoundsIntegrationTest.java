package io.strata.tests.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileSystem;
import io.strata.client.options.MountOptions;
import io.strata.common.exception.UnavailableException;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.server.ufs.UfsManager;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Under file system clients are bounded and closed (issue 9, point 6), over a real master: a mount whose
 * UFS never answers is refused after the check timeout and its probe really stops (the client is closed,
 * so the connection to the silent server is dropped); a mount refused by its probe keeps no client.
 */
class UfsBoundsIntegrationTest {
  private LocalStrataCluster cluster;
  private FileSystem fs;

  @BeforeEach
  void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).set("strata.master.mount.check.timeout", "2s").build().start();
    fs = cluster.client();
    fs.exists("/warm"); // opens the root mount's client, so the counts below see only the mounts' own
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  private UfsManager clients() {
    return cluster.master().ufsManager();
  }

  @Test
  void mountOfAUfsThatNeverAnswers_isRefusedAfterTheTimeout_andItsProbeIsStopped() throws Exception {
    List<Socket> accepted = new CopyOnWriteArrayList<>();
    try (ServerSocket blackHole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread acceptor = new Thread(() -> {
        try {
          while (true) {
            accepted.add(blackHole.accept()); // reads nothing, answers nothing
          }
        } catch (IOException e) {
          // closed at the end of the test
        }
      }, "black-hole");
      acceptor.setDaemon(true);
      acceptor.start();
      // loads the HDFS client's classes, so the probe below spends its time waiting on the server
      assertThatThrownBy(() -> fs.mount("/refused", "hdfs://127.0.0.1:1/data")).isInstanceOf(UnavailableException.class);
      int before = clients().openClients();
      String uri = "hdfs://127.0.0.1:" + blackHole.getLocalPort() + "/data";
      long t0 = System.nanoTime();
      assertThatThrownBy(() -> fs.mount("/silent", uri)).isInstanceOf(UnavailableException.class)
          .hasMessageContaining("did not answer within").hasMessageContaining("strata.master.mount.check.timeout");
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(15));
      assertThat(accepted).as("the probe reached the server").isNotEmpty();
      assertThat(clients().openClients()).as("the probe's client is closed").isEqualTo(before);
      assertThat(clients().isOpen(uri, Map.of())).isFalse();
      // the closed client dropped its connection: the silent server reads to the end of every stream
      await().atMost(Duration.ofSeconds(20)).until(() -> accepted.stream().allMatch(UfsBoundsIntegrationTest::atEof));
      assertThat(fs.exists("/silent")).isFalse();
    }
  }

  private static boolean atEof(Socket s) {
    try {
      s.setSoTimeout(50);
      InputStream in = s.getInputStream();
      byte[] buf = new byte[4096];
      while (true) {
        if (in.read(buf) < 0) {
          return true;
        }
      }
    } catch (java.net.SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset: closed as well
    }
  }

  @Test
  void mountRefusedByItsProbe_keepsNoClient() throws Exception {
    int before = clients().openClients();
    String missing = cluster.baseDir().resolve("no-such-dir").toString();
    Map<String, String> options = Map.of("strata.test.option", "refused");
    assertThatThrownBy(() -> fs.mount("/missing", missing, MountOptions.defaults().withProperties(options)))
        .isInstanceOf(io.strata.common.exception.FailedPreconditionException.class)
        .hasMessageContaining("does not exist in the under file system");
    assertThat(clients().openClients()).isEqualTo(before);
    // a mount that is accepted keeps its client
    java.nio.file.Path dir = java.nio.file.Files.createDirectories(cluster.baseDir().resolve("real-dir"));
    fs.mount("/real", dir.toString(), MountOptions.defaults().withProperties(options));
    assertThat(clients().openClients()).isEqualTo(before + 1);
  }
}
