package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.ClientKeys;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.FileSystemContext;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Cluster configuration on a real master and worker: the master serves the client keys set in its
 * configuration; a client starts with them (its own keys win), and when the master comes back with other
 * defaults the client's periodic check re-initialises it while a read is in flight: the read completes
 * byte-exact on the old channels, new calls use the new defaults, and the old pool is freed once the read
 * closes.
 */
class ClusterConfigurationIntegrationTest {
  private static final int BLOCK = 256 * 1024;
  private static final byte[] DATA = new byte[2 * BLOCK];
  private static LocalStrataCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).build().start();
    new Random(3).nextBytes(DATA);
    try (FileSystem writer = cluster.client()) {
      try (FileOutStream out = writer.createFile("/conf-data", CreateFileOptions.defaults().withBlockSize(BLOCK)
          .withWriteType(WriteType.MUST_CACHE))) {
        out.write(DATA);
      }
    }
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  private static void restartMasterWith(String writeType) throws IOException {
    cluster.restartMaster(Map.of(ClientKeys.WRITE_TYPE_DEFAULT.name(), writeType,
        ClientKeys.STREAM_CHUNK_SIZE.name(), "64KB"));
    cluster.waitForWorkers(1, 30_000);
  }

  private static void readSequentially(FileInStream in, byte[] buf, int off, int len) throws IOException {
    int end = off + len;
    while (off < end) {
      int n = in.read(buf, off, end - off);
      assertThat(n).as("bytes before the end").isPositive();
      off += n;
    }
  }

  @Test
  void changedClusterDefaults_reinitialiseTheClient_whileAReadInFlightCompletesByteExact() throws IOException {
    restartMasterWith("MUST_CACHE");
    // Streams over gRPC in small chunks one at a time, so the block read stays open while held.
    StrataConf own = cluster.clientConf().withAll(Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "off",
        ClientKeys.PASSIVE_CACHE_ENABLED.name(), "false", ClientKeys.STREAM_CHUNK_SIZE.name(), "4KB",
        ClientKeys.READ_PREFETCH_CHUNKS.name(), "1", ClientKeys.CONF_SYNC_INTERVAL.name(), "100ms",
        ClientKeys.NETWORK_TRANSFER_ENABLED.name(), "false"));
    FileSystemContext context = new FileSystemContext(own);
    try (FileSystem fs = FileSystem.create(context)) {
      assertThat(context.conf().get(ClientKeys.WRITE_TYPE_DEFAULT)).as("cluster default at start")
          .isEqualTo("MUST_CACHE");
      assertThat(context.conf().get(ClientKeys.STREAM_CHUNK_SIZE)).as("the client's own key wins")
          .isEqualTo(4096L);
      assertThat(context.configurationGeneration()).isEqualTo(1);

      byte[] got = new byte[DATA.length];
      try (FileInStream held = fs.openFile("/conf-data")) {
        readSequentially(held, got, 0, 10_000);

        restartMasterWith("CACHE_THROUGH");
        await().atMost(Duration.ofSeconds(30)).until(() -> context.configurationGeneration() == 2);
        assertThat(context.conf().get(ClientKeys.WRITE_TYPE_DEFAULT)).isEqualTo("CACHE_THROUGH");
        assertThat(context.conf().get(ClientKeys.STREAM_CHUNK_SIZE)).isEqualTo(4096L);
        assertThat(context.drainingChannelPools()).as("the held read keeps the old pool").isEqualTo(1);

        readSequentially(held, got, 10_000, DATA.length - 10_000);
      }
      assertThat(got).isEqualTo(DATA);
      await().atMost(Duration.ofSeconds(10)).until(() -> context.drainingChannelPools() == 0);

      try (FileOutStream out = fs.createFile("/conf-new")) {
        out.write(new byte[] {7, 8, 9});
      }
      assertThat(fs.getStatus("/conf-new").isPersisted()).as("written with the new default CACHE_THROUGH")
          .isTrue();
      assertThat(context.syncClusterConfiguration()).as("same hash: nothing to do").isFalse();
    } finally {
      context.close();
    }
  }

  /** The page cache's keys are the client's own: a master's cluster defaults cannot turn it on nor place its dir. */
  @Test
  void clusterDefaults_neverChooseTheClientsPageCache() throws IOException {
    java.nio.file.Path chosen = java.nio.file.Files.createTempDirectory("strata-master-chose").resolve("pages");
    cluster.restartMaster(Map.of(ClientKeys.PAGE_CACHE_ENABLED.name(), "true",
        ClientKeys.PAGE_CACHE_DIR.name(), chosen.toString(), ClientKeys.WRITE_TYPE_DEFAULT.name(), "MUST_CACHE"));
    cluster.waitForWorkers(1, 30_000);
    try (FileSystemContext context = new FileSystemContext(cluster.clientConf());
        FileSystem fs = FileSystem.create(context)) {
      assertThat(context.conf().get(ClientKeys.WRITE_TYPE_DEFAULT)).as("other defaults still apply")
          .isEqualTo("MUST_CACHE");
      assertThat(context.conf().get(ClientKeys.PAGE_CACHE_ENABLED)).isFalse();
      try (FileInStream in = fs.openFile("/conf-data")) {
        assertThat(in.readAllBytes()).isEqualTo(DATA);
      }
      assertThat(chosen).doesNotExist();
    }
  }
}
