package io.strata.tests.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileOutStream;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.MountOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.UnavailableException;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.server.ufs.UfsManager;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.Test;

/**
 * A worker's HDFS client is not closed under a through write to make room for another client (closing a Hadoop
 * FileSystem closes its open streams: the write would fail "Filesystem closed"), over a real HDFS (MiniDFSCluster).
 */
class HdfsClientLeaseIntegrationTest {
  @Test
  void throughWrite_keepsItsClientOpen_whileAnotherIsWantedOnAFullWorker_andCompletes() throws Exception {
    MiniDFSCluster dfs = HdfsUfsIntegrationTest.startMiniDfs();
    try (LocalStrataCluster cluster = LocalStrataCluster.builder().workers(0).build().start()) {
      // One client at most, idle at once: without leases the HDFS client would be the one closed below.
      int w = cluster.addWorker(Map.of("strata.ufs.clients.max", "1", "strata.ufs.client.idle.timeout", "0s"));
      cluster.waitForWorkers(1, 30_000);
      String hdfsRoot = "hdfs://127.0.0.1:" + dfs.getNameNodePort() + "/strata";
      Map<String, String> options = Map.of("dfs.replication", "1");
      io.strata.client.FileSystem fs = cluster.client();
      fs.mount("/hdfs", hdfsRoot, MountOptions.defaults().withProperties(options));
      UfsManager clients = cluster.worker(w).ufsManager();
      byte[] content = new byte[3 << 20];
      new Random(7).nextBytes(content);
      int half = content.length / 2;

      CreateFileOptions through = CreateFileOptions.defaults().withWriteType(WriteType.THROUGH);
      try (FileOutStream out = fs.createFile("/hdfs/f", through)) {
        out.write(content, 0, half);
        await().atMost(Duration.ofSeconds(30)).until(() -> clients.isOpen(hdfsRoot, options));
        // Another file system wanted on this worker (the root mount's local one): the only client is in use.
        String local = "file:" + cluster.rootUfsDir();
        assertThatThrownBy(() -> clients.get(local, Map.of())).isInstanceOf(UnavailableException.class)
            .hasMessageContaining("strata.ufs.clients.max");
        assertThat(clients.isOpen(hdfsRoot, options)).isTrue();
        out.write(content, half, content.length - half);
      }

      assertThat(fs.getStatus("/hdfs/f").persistenceState()).isEqualTo("PERSISTED");
      try (FileSystem hdfs = FileSystem.newInstance(URI.create(hdfsRoot), new Configuration());
          FSDataInputStream in = hdfs.open(new Path(hdfsRoot + "/f"))) {
        assertThat(in.readAllBytes()).isEqualTo(content);
      }
      // The write over, its client is free: the other file system gets its room.
      clients.get("file:" + cluster.rootUfsDir(), Map.of());
      assertThat(clients.isOpen(hdfsRoot, options)).isFalse();
    } finally {
      dfs.shutdown(true);
    }
  }
}
