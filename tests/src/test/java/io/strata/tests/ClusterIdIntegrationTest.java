package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.master.journal.Journal;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.WorkerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Cluster ids: a formatted journal is a new cluster, whose file and block ids start again, so a worker that still
 * holds blocks of the old cluster would have them pass for the new files' (same id, same length). Such a worker is
 * refused at registration and stops; its blocks stay on its disk (a refusal removes nothing, in case the master is
 * the one pointed at the wrong journal); the new cluster's file reads its own bytes; and once the worker's dir is
 * emptied it joins the new cluster and records its id. A real master and real workers on loopback.
 */
class ClusterIdIntegrationTest {
  private static final int LENGTH = 5_000;

  private static byte[] bytes(long seed) {
    byte[] b = new byte[LENGTH];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static void write(FileSystem fs, String path, byte[] data) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withWriteType(WriteType.MUST_CACHE))) {
      out.write(data);
    }
  }

  private static byte[] read(FileSystem fs, String path) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }

  private static long blockBytes(Path workerDir) throws IOException {
    try (Stream<Path> s = Files.list(workerDir.resolve("blocks"))) {
      List<Path> blocks = s.filter(p -> !p.getFileName().toString().endsWith(".crc")).toList();
      long sum = 0;
      for (Path p : blocks) {
        sum += Files.size(p);
      }
      return sum;
    }
  }

  @Test
  void aWorkerOfTheClusterBeforeAFormat_isRefused_keepsItsBlocks_andJoinsOnceEmptied() throws Exception {
    try (LocalStrataCluster cluster = LocalStrataCluster.builder().workers(1).build().start()) {
      Path oldWorkerDir = cluster.baseDir().resolve("worker-0");
      byte[] before = bytes(1);
      long oldId;
      try (FileSystem fs = FileSystem.create(cluster.clientConf())) {
        write(fs, "/data", before);
        oldId = fs.getStatus("/data").id();
      }
      String first = cluster.master().clusterId();
      assertThat(first).isNotBlank();
      assertThat(Files.readString(oldWorkerDir.resolve("CLUSTER_ID")).trim()).isEqualTo(first);

      cluster.stopWorker(0);
      cluster.master().close();
      Journal.format(cluster.baseDir().resolve("journal"), true);
      cluster.restartMaster();
      String second = cluster.master().clusterId();
      assertThat(second).isNotBlank().isNotEqualTo(first);
      cluster.addWorker(); // a new, empty worker joins the new cluster
      cluster.waitForWorkers(1, 30_000);
      byte[] after = bytes(2);
      try (FileSystem fs = FileSystem.create(cluster.clientConf())) {
        write(fs, "/data", after);
        assertThat(fs.getStatus("/data").id()).as("ids start again after a format").isEqualTo(oldId);

        CountDownLatch refused = new CountDownLatch(1);
        WorkerProcess stale = new WorkerProcess(cluster.workerConf(0), Clock.systemUTC())
            .onFatal(refused::countDown).start();
        try {
          assertThat(refused.await(30, TimeUnit.SECONDS)).as("the old cluster's worker stops").isTrue();
          assertThat(stale.isRegistered()).isFalse();
          assertThat(fs.getClusterInfo().liveWorkers()).isEqualTo(1);
        } finally {
          stale.close();
        }
        assertThat(blockBytes(oldWorkerDir)).as("the refused worker's blocks stay on its disk").isEqualTo(LENGTH);
        assertThat(Files.readString(oldWorkerDir.resolve("CLUSTER_ID")).trim()).isEqualTo(first);
        assertThat(read(fs, "/data")).isEqualTo(after);

        // Emptied, the dir joins the new cluster.
        LocalStrataCluster.deleteRecursively(oldWorkerDir);
        cluster.restartWorker(0);
        cluster.waitForWorkers(2, 30_000);
        assertThat(Files.readString(oldWorkerDir.resolve("CLUSTER_ID")).trim()).isEqualTo(second);
        assertThat(read(fs, "/data")).isEqualTo(after);
      }
    }
  }
}
