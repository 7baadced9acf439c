package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.WorkerInfo;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.UnavailableException;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Workers leaving and coming back, and the master restarting: lost-worker detection drops locations,
 * a restarted worker re-registers with its blocks, and workers re-register with a restarted master.
 * The tests run in order on one cluster because each builds on the state the previous left.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WorkerLifecycleIntegrationTest {
  private static LocalStrataCluster cluster;
  private static FileSystem fs;
  private static final byte[] CONTENT = new byte[300_000];

  @BeforeAll
  static void start() throws IOException {
    new Random(5).nextBytes(CONTENT);
    cluster = LocalStrataCluster.builder().workers(2)
        .set("strata.master.worker.timeout", "1500ms")
        .set("strata.user.block.write.location.policy", "ROUND_ROBIN")
        .set("strata.user.worker.list.refresh.interval", "100ms")
        .build().start();
    fs = cluster.client();
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  private static byte[] read(String path) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }

  @Test
  @Order(1)
  void workersReportCapacityAndUsage() throws IOException {
    // MUST_CACHE: the workers hold the only copy, so losing a worker loses blocks for sure (order 2); an
    // ASYNC_THROUGH file might be persisted first and read back from the UFS, timing would decide.
    try (FileOutStream out = fs.createFile("/f", CreateFileOptions.defaults().withBlockSize(100_000)
        .withWriteType(WriteType.MUST_CACHE))) {
      out.write(CONTENT);
    }
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      List<WorkerInfo> workers = fs.getWorkers();
      assertThat(workers).hasSize(2);
      assertThat(workers.stream().mapToLong(WorkerInfo::usedBytes).sum()).isEqualTo(CONTENT.length);
      assertThat(workers).allSatisfy(w -> assertThat(w.capacityBytes()).isEqualTo(2L << 30));
    });
    // Round robin put the three blocks on both workers.
    URIStatus s = fs.getStatus("/f");
    assertThat(s.length()).isEqualTo(CONTENT.length);
  }

  @Test
  @Order(2)
  void stoppedWorker_isMarkedLost_andItsLocationsDropped() throws Exception {
    long before = cluster.worker(1).store().committedBlocks().size();
    assertThat(before).isPositive();
    cluster.stopWorker(1);
    await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> fs.getWorkers().size() == 1);
    assertThat(fs.getClusterInfo().lostWorkers()).isEqualTo(1);
    // The blocks that lived only on the lost worker have no location now, and no copy in the UFS.
    assertThat(fs.getStatus("/f").persistenceState()).isEqualTo(URIStatus.NOT_PERSISTED);
    assertThatThrownBy(() -> read("/f")).isInstanceOf(UnavailableException.class)
        .hasMessageContaining("no reachable worker");
  }

  @Test
  @Order(3)
  void restartedWorker_reregistersWithItsBlocks_andTheFileReadsAgain() throws Exception {
    cluster.restartWorker(1);
    await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> fs.getWorkers().size() == 2);
    assertThat(read("/f")).isEqualTo(CONTENT);
    assertThat(fs.getClusterInfo().lostWorkers()).isZero();
  }

  @Test
  @Order(4)
  void workersReregister_afterMasterRestart_andTheJournaledNamespaceServesAgain() throws Exception {
    cluster.restartMaster();
    await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> fs.getWorkers().size() == 2);
    // The new master replayed its journal: the file is there, and the workers' block reports gave its
    // blocks their locations back.
    assertThat(fs.getStatus("/f").length()).isEqualTo(CONTENT.length);
    await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> java.util.Arrays.equals(read("/f"), CONTENT));
    try (FileOutStream out = fs.createFile("/g")) {
      out.write(CONTENT);
    }
    assertThat(read("/g")).isEqualTo(CONTENT);
  }
}
