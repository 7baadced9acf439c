package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.MountOptions;
import io.strata.client.options.WriteType;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.WorkerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker's persist queue (strata.worker.persist.queue.max) with a real master and worker: persist commands for
 * files whose under file system creates hang ({@link StallingFileSystem}) fill the worker's one persist thread and
 * its one-place queue; the master gives up on them after its (short) persist timeout and sends them again, and the
 * worker drops those duplicates; commands beyond the queue are refused and reported failed at once. Nothing piles up
 * at the worker meanwhile, and once the under file system answers every file is persisted with its bytes.
 */
class PersistQueueIntegrationTest {
  private static final int FILES = 4;

  @TempDir
  Path tmp;

  @Test
  void aFullPersistQueue_refusesAndDropsDuplicates_andEveryFileIsPersistedLater() throws Exception {
    Path ufs = Files.createDirectories(tmp.resolve("slow-ufs"));
    try (LocalStrataCluster cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.master.mount.options.unsafe.allowed", "true")
        .set("strata.master.persist.check.interval", "50ms")
        .set("strata.master.persist.timeout", "500ms")
        .set("strata.master.persist.retry.interval.min", "100ms")
        .set("strata.master.persist.retry.interval.max", "300ms")
        .set("strata.worker.persist.threads", "1")
        .set("strata.worker.persist.queue.max", "1")
        .build().start();
        FileSystem fs = FileSystem.create(cluster.clientConf())) {
      cluster.waitForWorkers(1, 30_000);
      WorkerProcess worker = cluster.worker(0);
      fs.mount("/slow", ufs.toString(), MountOptions.defaults().withProperties(Map.of(
          "fs.file.impl", StallingFileSystem.class.getName())));
      List<byte[]> data = new ArrayList<>();
      StallingFileSystem.armWrites();
      AtomicInteger mostActive = new AtomicInteger();
      try {
        for (int i = 0; i < FILES; i++) {
          byte[] d = new byte[100_000 + i];
          new Random(i).nextBytes(d);
          data.add(d);
          try (FileOutStream out = fs.createFile("/slow/write-stall-" + i, CreateFileOptions.defaults()
              .withWriteType(WriteType.ASYNC_THROUGH))) {
            out.write(d);
          }
        }
        // One persist runs (stuck in its create), one waits in the queue; the others are refused, each time the
        // master sends them; the two in hand are sent again after each master-side timeout and dropped.
        await().atMost(Duration.ofSeconds(20)).until(() -> {
          mostActive.accumulateAndGet(worker.persistsActive(), Math::max);
          return StallingFileSystem.writesWaiting() == 1 && worker.persistDuplicates() >= 2 * FILES;
        });
        assertThat(worker.persistsActive()).as("files queued or persisting at the worker").isEqualTo(2);
        assertThat(mostActive.get()).as("the most in hand at once").isLessThanOrEqualTo(2);
        assertThat(worker.persistsRefused()).as("commands refused for the full queue").isGreaterThanOrEqualTo(2);
        for (int i = 0; i < FILES; i++) {
          assertThat(fs.getStatus("/slow/write-stall-" + i).isPersisted()).isFalse();
        }
      } finally {
        StallingFileSystem.releaseWrites();
      }
      // The under file system answers again: every file is persisted, none lost, with the bytes written.
      await().atMost(Duration.ofSeconds(30)).until(() -> {
        for (int i = 0; i < FILES; i++) {
          if (!fs.getStatus("/slow/write-stall-" + i).isPersisted()) {
            return false;
          }
        }
        return true;
      });
      for (int i = 0; i < FILES; i++) {
        assertThat(Files.readAllBytes(ufs.resolve("write-stall-" + i))).as("file %d in the UFS", i)
            .isEqualTo(data.get(i));
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> worker.persistsActive() == 0);
    }
  }
}
