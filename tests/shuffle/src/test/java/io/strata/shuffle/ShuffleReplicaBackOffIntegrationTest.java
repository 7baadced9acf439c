package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.FileBlockInfo;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.MountOptions;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.WorkerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Replicas that answer BACK_OFF (one apply thread, a queue of one, many pushers at once): the primary sends
 * the forward again after the delay instead of failing the push, so no pusher revives a partition, the
 * replica's copy keeps every batch in its primary's place, and at the seal both copies are listed with the
 * UFS copy's bytes. Real two-worker cluster, node-local UFS, real push clients (no Spark).
 */
class ShuffleReplicaBackOffIntegrationTest {
  private static final int MAPS = 6;
  private static final int PARTS = 4;
  private static final int PER_MAP = 30;
  private static PushRig rig;
  private static LocalStrataCluster cluster;
  private static FileSystem fs;
  private static ShuffleLifecycle lifecycle;

  @BeforeAll
  static void start() throws Exception {
    rig = new PushRig(LocalStrataCluster.builder().workers(2).set("strata.worker.shuffle.apply.threads", "1")
        .set("strata.worker.shuffle.apply.queue.max", "1").set("strata.worker.shuffle.backoff", "2ms").build()
        .start(), 2);
    cluster = rig.cluster;
    fs = rig.fs;
    lifecycle = rig.lifecycle;
    Path dir = cluster.baseDir().resolve("backoff");
    Files.createDirectories(dir);
    fs.createDirectory("/.shuffle");
    fs.mount("/.shuffle/app-backoff", dir.toUri().toString(), MountOptions.defaults()); // node-local
  }

  @AfterAll
  static void stop() {
    rig.close();
  }

  private static byte[] batch(int map, int partition, int i) {
    return ("map " + map + " partition " + partition + " batch " + i + " ").repeat(1 + i % 20)
        .getBytes(StandardCharsets.UTF_8);
  }

  private static long forwardResends() {
    long n = 0;
    for (WorkerProcess w : cluster.workers()) {
      n += w.shuffle().forwardResends();
    }
    return n;
  }

  @Test
  void forwardsToldToBackOff_areSentAgain_noPartitionIsRevived_andBothCopiesHoldThePrimarysBytes() throws Exception {
    // Rounds until a forward was told to back off at least once (bounded): every round must keep the property.
    for (int shuffle = 0; shuffle < 10 && (shuffle == 0 || forwardResends() == 0); shuffle++) {
      List<PartitionLocation> locs = lifecycle.register("app-backoff", shuffle, PARTS);
      int s = shuffle;
      List<PushClient> pushers = ConcurrentMaps.push(MAPS, PARTS, PER_MAP,
          map -> rig.pusher("app-backoff", s, locs, 4 << 10), ShuffleReplicaBackOffIntegrationTest::batch);
      assertThat(pushers).allSatisfy(p -> assertThat(p.revives()).as("revives").isZero());
      SealedShuffle sealed = lifecycle.seal(shuffle);
      assertThat(sealed.lost()).isEmpty();
      for (int part = 0; part < PARTS; part++) {
        PartitionLocation l = locs.get(part);
        URIStatus given = sealed.statuses().get(l.path());
        byte[] ufsCopy = Files.readAllBytes(cluster.baseDir().resolve("backoff/" + shuffle + "/" + part + "-0"));
        assertThat(given.length()).isEqualTo(ufsCopy.length);
        for (FileBlockInfo b : given.blocks()) {
          assertThat(b.locations()).extracting(x -> x.address().rpcPort()).as("partition %d", part)
              .containsExactlyInAnyOrder(l.primaryPort(), l.replicaPort());
        }
        List<String> got = new ArrayList<>();
        try (PartitionReader r = new PartitionReader(fs, sealed.files().get(part), sealed.statuses(),
            ConcurrentMaps.firstAttempts(MAPS))) {
          r.forEachRemaining(b -> got.add(new String(b, StandardCharsets.UTF_8)));
        }
        assertThat(got).as("partition " + part).containsExactlyInAnyOrderElementsOf(
            ConcurrentMaps.expected(MAPS, part, PER_MAP, ShuffleReplicaBackOffIntegrationTest::batch));
      }
      lifecycle.unregister(shuffle);
    }
    assertThat(forwardResends()).as("forwards sent again after BACK_OFF").isPositive();
  }
}
