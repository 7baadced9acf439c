package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.minicluster.LocalStrataCluster;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Differential: the same jobs ({@link ShuffleJobs}: reduceByKey, groupByKey, sortByKey, join, repartition
 * to 1000 partitions) on real Spark in local[4], first with Spark's built-in shuffle, then with
 * StrataShuffleManager on a real cluster of two workers, give the same answers (order-independent
 * checksums; sortByKey's order itself). Also: the shuffle's partition files are complete persisted Strata
 * files while the application runs (sealed when a map stage ends, before any reader asks), and they go when it
 * stops.
 */
class StrataShuffleSparkIntegrationTest {
  private static LocalStrataCluster cluster;
  private static Map<String, Object> builtin;
  private static Map<String, Object> strata;
  private static String appId;

  @BeforeAll
  static void runBoth() throws Exception {
    try (JavaSparkContext sc = new JavaSparkContext(ShuffleJobs.conf("local[4]"))) {
      builtin = ShuffleJobs.runAll(sc);
    }
    cluster = LocalStrataCluster.builder().workers(2).build().start();
    SparkConf conf = ShuffleJobs.conf("local[4]")
        .set("spark.shuffle.manager", StrataShuffleManager.class.getName())
        .set("spark.strata.master", "localhost:" + cluster.masterPort());
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      appId = sc.sc().applicationId();
      strata = ShuffleJobs.runAll(sc);
      // While the application runs, its shuffles are complete, persisted Strata files.
      FileSystem fs = cluster.client();
      List<URIStatus> shuffles = fs.listStatus("/.shuffle/" + appId);
      assertThat(shuffles).isNotEmpty();
      URIStatus first = fs.listStatus(shuffles.get(0).path()).get(0);
      assertThat(first.complete()).isTrue();
      assertThat(first.persistenceState()).isEqualTo(URIStatus.PERSISTED);
      mapStageOnly = sealedWithoutAReader(sc, fs);
      blocksKeptAfterAnEarlyStop = blocksKeptAfterAnEarlyStop(sc, fs);
    }
  }

  /**
   * The blocks of a shuffle's partition file still on a worker 30 s after the shuffle was unregistered, when its only
   * reduce task stopped early (take(1)) inside the file: the task's end must close the file, whose open short-circuit
   * read holds the block's read lock at the worker (its removal waits for the last reader).
   */
  private static Set<Long> blocksKeptAfterAnEarlyStop;

  private static Set<Long> blocksKeptAfterAnEarlyStop(JavaSparkContext sc, FileSystem fs) throws Exception {
    List<Integer> keys = java.util.stream.IntStream.range(0, 200_000).boxed().toList();
    org.apache.spark.api.java.JavaPairRDD<Integer, String> pairs = sc.parallelize(keys, 2).mapToPair(i ->
        new scala.Tuple2<>(i, Long.toHexString(new java.util.Random(i).nextLong()).repeat(3))); // ~8 MB, incompressible
    org.apache.spark.api.java.JavaPairRDD<Integer, String> one = pairs.partitionBy(new org.apache.spark.HashPartitioner(1));
    org.apache.spark.ShuffleDependency<?, ?, ?> dep =
        (org.apache.spark.ShuffleDependency<?, ?, ?>) one.rdd().dependencies().head();
    assertThat(one.take(1)).hasSize(1);
    Set<Long> blocks = new java.util.HashSet<>();
    for (URIStatus f : fs.listStatus(ShuffleLifecycle.dir(appId, dep.shuffleId()))) {
      fs.getBlockLocations(f.path()).forEach(b -> blocks.add(b.blockId()));
    }
    assertThat(blocks).as("the partition file spans blocks").isNotEmpty();
    org.apache.spark.SparkEnv.get().shuffleManager().unregisterShuffle(dep.shuffleId());
    java.util.function.Supplier<Set<Long>> kept = () -> {
      Set<Long> left = new java.util.HashSet<>();
      for (int w = 0; w < 2; w++) {
        cluster.worker(w).tieredStore().committedBlocks().forEach(m -> {
          if (blocks.contains(m.blockId())) {
            left.add(m.blockId());
          }
        });
      }
      return left;
    };
    try {
      return org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(kept::get, Set::isEmpty);
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      return kept.get();
    }
  }

  /** The partition files of a shuffle whose map stage ran alone (no reduce task ever asks), once all are complete. */
  private static List<URIStatus> mapStageOnly;

  private static List<URIStatus> sealedWithoutAReader(JavaSparkContext sc, FileSystem fs) throws Exception {
    org.apache.spark.rdd.RDD<?> shuffled = sc.parallelizePairs(List.of(new scala.Tuple2<>("a", 1),
        new scala.Tuple2<>("b", 2), new scala.Tuple2<>("c", 3)), 3)
        .partitionBy(new org.apache.spark.HashPartitioner(4)).rdd();
    org.apache.spark.ShuffleDependency<?, ?, ?> dep =
        (org.apache.spark.ShuffleDependency<?, ?, ?>) shuffled.dependencies().head();
    sc.sc().submitMapStage(dep).get();
    String dir = ShuffleLifecycle.dir(appId, dep.shuffleId());
    try {
      return org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
          .until(() -> fs.listStatus(dir), files -> files.size() == 4 && files.stream().allMatch(URIStatus::complete));
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      return fs.listStatus(dir); // the test names what is not complete
    } finally {
      // Reachable until here: Spark's context cleaner unregisters (and Strata deletes) a collected shuffle.
      java.lang.ref.Reference.reachabilityFence(shuffled);
    }
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void everyJob_givesTheBuiltInShufflesAnswer() {
    ShuffleJobs.assertSameAnswers(strata, builtin);
  }

  @Test
  void aShuffleWhoseMapStageEnded_isSealedWithoutWaitingForAReader() {
    assertThat(mapStageOnly).hasSize(4).allSatisfy(f -> {
      assertThat(f.complete()).as(f.path()).isTrue();
      assertThat(f.persistenceState()).as(f.path()).isEqualTo(URIStatus.PERSISTED);
    });
    assertThat(mapStageOnly.stream().mapToLong(URIStatus::length).sum()).as("the pushed records are in them")
        .isPositive();
  }

  @Test
  void aReduceTaskStoppingEarly_closesItsFile_soItsBlocksGoWithTheShuffle() {
    assertThat(blocksKeptAfterAnEarlyStop).isEmpty();
  }

  @Test
  void stoppingTheApplication_removesItsShuffleFiles() throws Exception {
    assertThat(cluster.client().exists("/.shuffle/" + appId)).isFalse();
  }
}
