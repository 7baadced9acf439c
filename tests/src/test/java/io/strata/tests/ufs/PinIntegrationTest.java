package io.strata.tests.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Pins on a real master and worker: a pinned file's blocks survive a worker that must evict to take new
 * writes, while an unpinned file written at the same time (just as cold) is evicted. The worker's one tier
 * holds four blocks.
 */
class PinIntegrationTest {
  private static final int BLOCK = 64 * 1024;

  private static LocalStrataCluster cluster;
  private static FileSystem fs;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).set("strata.user.block.size.default", BLOCK)
        .set("strata.worker.tier.0.quota", 4 * BLOCK).set("strata.worker.tier.manager.interval", "100ms")
        .build().start();
    fs = cluster.client();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static void write(String path, int blocks, WriteType type) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withWriteType(type))) {
      out.write(UfsEndToEndContract.data(path.hashCode(), blocks * BLOCK));
    }
  }

  private static long cached(String path) throws IOException {
    return fs.getBlockLocations(path).stream().filter(b -> !b.locations().isEmpty()).count();
  }

  /**
   * Writes CACHE_THROUGH fillers (persisted, so evictable once the worker hears so from the master) until
   * {@code done}; at most 40. A filler the full cache has no room for goes to the under file system only.
   */
  private static void fillUntil(String prefix, java.util.concurrent.Callable<Boolean> done) throws Exception {
    for (int i = 0; i < 40 && !done.call(); i++) {
      write("/" + prefix + "-" + i, 1, WriteType.CACHE_THROUGH);
    }
  }

  @Test
  void pinnedBlocks_areNeverEvicted_whileUnpinnedOnesAre() throws Exception {
    // Every file here is persisted (CACHE_THROUGH): a worker never evicts blocks of files that are not.
    write("/pinned", 2, WriteType.CACHE_THROUGH);
    write("/unpinned", 1, WriteType.CACHE_THROUGH);
    assertThat(fs.pin("/pinned").pinned()).isTrue();
    long masterVersion = cluster.master().fileSystemMaster().tree().pinVersion();
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.worker(0).pinVersion() >= masterVersion);
    fillUntil("filler", () -> cached("/unpinned") == 0);
    await().atMost(Duration.ofSeconds(10)).until(() -> cached("/unpinned") == 0);
    assertThat(cached("/pinned")).isEqualTo(2);
    assertThat(cluster.worker(0).store().usedBytes()).isLessThanOrEqualTo(4L * BLOCK);
    // Unpinned again, the file is as evictable as any other.
    fs.unpin("/pinned");
    long unpinned = cluster.master().fileSystemMaster().tree().pinVersion();
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.worker(0).pinVersion() >= unpinned);
    fillUntil("more", () -> cached("/pinned") < 2);
    await().atMost(Duration.ofSeconds(10)).until(() -> cached("/pinned") < 2);
  }
}
