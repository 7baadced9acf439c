package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.common.id.BlockId;
import io.strata.minicluster.LocalStrataCluster;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real writer process ({@code bin/strata fs copyFromLocal - /big}, fed through its stdin, so it is
 * mid-file for as long as the test wants) is killed with SIGKILL after some of its blocks were committed.
 * With a three-second lease, the master recovers the abandoned file within a bound: the path is free to
 * create again, the master holds none of its blocks, and neither the worker's storage dir nor the UFS
 * holds a block, a temp block or a temp file of it.
 */
class LeaseRecoveryIT {
  /** 3 s against renewals every 300 ms: a writer held back a second or two by a loaded machine keeps its file. */
  private static final Duration LEASE = Duration.ofSeconds(3);
  private static final int BLOCK = 256 * 1024;

  @TempDir
  Path tmp;
  private LocalStrataCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static List<Path> filesUnder(Path dir) throws Exception {
    if (!Files.exists(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile).toList();
    }
  }

  @Test
  void writerKilledMidFile_hasItsFileRecovered_andNothingOfItLeftOnTheWorkerOrTheUfs() throws Exception {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.master.lease.timeout", LEASE.toMillis() + "ms")
        .set("strata.master.lease.check.interval", "100ms")
        .build().start();
    Path conf = Files.createDirectories(tmp.resolve("conf"));
    ProcessBuilder pb = new ProcessBuilder(Scripts.ROOT.resolve("bin/strata").toString(), "fs", "copyFromLocal",
        "-", "/big").directory(tmp.toFile()).redirectErrorStream(true)
        .redirectOutput(tmp.resolve("writer.log").toFile());
    pb.environment().put("STRATA_CONF_DIR", conf.toString());
    pb.environment().put("STRATA_LOGS_DIR", tmp.resolve("logs").toString());
    pb.environment().put("STRATA_DATA_DIR", tmp.resolve("data").toString());
    pb.environment().put("STRATA_MASTER_HOSTNAME", "localhost");
    pb.environment().put("STRATA_MASTER_RPC_PORT", Integer.toString(cluster.masterPort()));
    pb.environment().put("STRATA_USER_BLOCK_SIZE_DEFAULT", Integer.toString(BLOCK));
    pb.environment().put("STRATA_USER_STREAM_CHUNK_SIZE", "64KB");
    pb.environment().put("STRATA_USER_LEASE_RENEW_INTERVAL", "300ms");
    // CACHE_THROUGH: the writer has blocks on the worker and a UFS copy in progress when it dies.
    pb.environment().put("STRATA_USER_FILE_WRITETYPE_DEFAULT", "CACHE_THROUGH");
    Process writer = pb.start();
    var master = cluster.master().fileSystemMaster();
    long fileId;
    long killedAt;
    try (OutputStream stdin = writer.getOutputStream()) {
      byte[] chunk = new byte[64 * 1024];
      new Random(7).nextBytes(chunk);
      // Two whole blocks and part of a third: the first two get committed, the third is a temp block.
      for (int i = 0; i < (2 * BLOCK + BLOCK / 2) / chunk.length; i++) {
        stdin.write(chunk);
      }
      stdin.flush();
      await().atMost(Duration.ofSeconds(60)).until(() -> master.blockMaster().blockCount() >= 2);
      fileId = master.getStatus("/big._COPYING_").id();
      assertThat(master.getStatus("/big._COPYING_").complete()).isFalse();
      assertThat(master.blockMaster().hasBlock(BlockId.of(fileId, 0))).isTrue();
      killedAt = System.nanoTime(); // before the kill: the writer may renew up to then, not after
      writer.destroyForcibly(); // SIGKILL: no close, no cancel, no delete from the writer
      assertThat(writer.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      assertThat(writer.exitValue()).isEqualTo(137);
    } catch (java.io.IOException stdinClosedByTheKill) {
      throw new AssertionError("the writer died before it was killed: " + Files.readString(tmp.resolve("writer.log")),
          stdinClosedByTheKill);
    }
    FileSystem fs = cluster.client();
    // Recovered within the lease plus a few checks (and not before the lease ran out: it was renewed).
    await().atMost(LEASE.multipliedBy(5)).pollInterval(Duration.ofMillis(50))
        .until(() -> !fs.exists("/big._COPYING_"));
    assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).isGreaterThan(LEASE.dividedBy(2));
    assertThat(master.blockMaster().blockCount()).isZero();
    assertThat(master.tree().getFile(fileId)).isNull();
    // The worker drops the committed blocks (removal via heartbeat) and the temp block of the broken stream.
    Path workerDir = cluster.baseDir().resolve("worker-0");
    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(filesUnder(workerDir))
        .filteredOn(p -> p.getParent().getFileName().toString().matches("blocks|tmp")).isEmpty());
    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(filesUnder(cluster.rootUfsDir())).isEmpty());
    // The path is free: a new writer creates and completes it.
    byte[] small = {4, 5, 6};
    try (FileOutStream out = fs.createFile("/big._COPYING_")) {
      out.write(small);
    }
    try (FileInStream in = fs.openFile("/big._COPYING_")) {
      assertThat(in.readAllBytes()).isEqualTo(small);
    }
  }
}
