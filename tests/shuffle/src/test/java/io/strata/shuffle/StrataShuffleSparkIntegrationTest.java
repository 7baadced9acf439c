package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.minicluster.LocalStrataCluster;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * Differential: the same jobs (reduceByKey, groupByKey, sortByKey, join, repartition to 1000 partitions)
 * on real Spark in local[4], first with Spark's built-in shuffle, then with StrataShuffleManager on a real
 * cluster of two workers, give the same answers (order-independent checksums; sortByKey's order itself).
 * Also: the shuffle's partition files are complete persisted Strata files while the application runs, and
 * they go when it stops.
 */
class StrataShuffleSparkIntegrationTest {
  private static LocalStrataCluster cluster;
  private static final Map<String, Object> builtin = new LinkedHashMap<>();
  private static final Map<String, Object> strata = new LinkedHashMap<>();
  private static final Map<String, Function<JavaSparkContext, Object>> JOBS = new LinkedHashMap<>();

  static {
    JOBS.put("reduceByKey", sc -> pairs(sc, 60_000, 997).reduceByKey(Long::sum, 7)
        .map(t -> t._1() * 1_000_003L + t._2()).reduce(Long::sum));
    JOBS.put("groupByKey", sc -> pairs(sc, 30_000, 101).groupByKey(5).map(t -> {
      long n = 0;
      long sum = 0;
      for (long v : t._2()) {
        n++;
        sum += v;
      }
      return t._1() * 31 + n * 7 + sum;
    }).reduce(Long::sum));
    JOBS.put("sortByKey", sc -> {
      List<Long> keys = pairs(sc, 20_000, 5_003).map(t -> new Tuple2<>(t._2() % 7919, t._1()))
          .mapToPair(t -> t).sortByKey(true, 6).keys().collect();
      return new ArrayList<>(keys);
    });
    JOBS.put("join", sc -> {
      JavaPairRDD<Long, Long> a = pairs(sc, 20_000, 500);
      JavaPairRDD<Long, Long> b = pairs(sc, 5_000, 700).mapValues(v -> v * 3);
      return a.join(b, 9).map(t -> t._1() * 17 + t._2()._1() * 5 + t._2()._2()).reduce(Long::sum);
    });
    JOBS.put("repartition1000", sc -> {
      JavaRDD<Long> r = sc.parallelize(range(40_000), 4).repartition(1000);
      long parts = r.getNumPartitions();
      return List.of(parts, r.count(), r.reduce(Long::sum));
    });
  }

  private static List<Long> range(int n) {
    List<Long> out = new ArrayList<>(n);
    for (long i = 0; i < n; i++) {
      out.add(i);
    }
    return out;
  }

  private static JavaPairRDD<Long, Long> pairs(JavaSparkContext sc, int n, int keys) {
    return sc.parallelize(range(n), 4).mapToPair(i -> new Tuple2<>((i * 7919) % keys, i));
  }

  private static SparkConf base() {
    return new SparkConf().setMaster("local[4]").setAppName("strata-shuffle-it")
        .set("spark.ui.enabled", "false").set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1");
  }

  private static String appId;

  @BeforeAll
  static void runBoth() throws Exception {
    try (JavaSparkContext sc = new JavaSparkContext(base())) {
      for (Map.Entry<String, Function<JavaSparkContext, Object>> j : JOBS.entrySet()) {
        builtin.put(j.getKey(), j.getValue().apply(sc));
      }
    }
    cluster = LocalStrataCluster.builder().workers(2).build().start();
    SparkConf conf = base().set("spark.shuffle.manager", StrataShuffleManager.class.getName())
        .set("spark.strata.master", "localhost:" + cluster.masterPort());
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      appId = sc.sc().applicationId();
      for (Map.Entry<String, Function<JavaSparkContext, Object>> j : JOBS.entrySet()) {
        strata.put(j.getKey(), j.getValue().apply(sc));
      }
      // While the application runs, its shuffles are complete, persisted Strata files.
      FileSystem fs = cluster.client();
      List<URIStatus> shuffles = fs.listStatus("/.shuffle/" + appId);
      assertThat(shuffles).isNotEmpty();
      URIStatus first = fs.listStatus(shuffles.get(0).path()).get(0);
      assertThat(first.complete()).isTrue();
      assertThat(first.persistenceState()).isEqualTo(URIStatus.PERSISTED);
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
    assertThat(strata.keySet()).containsExactlyElementsOf(JOBS.keySet());
    for (String job : JOBS.keySet()) {
      assertThat(strata.get(job)).as(job).isEqualTo(builtin.get(job));
    }
    assertThat((List<?>) strata.get("repartition1000")).first().isEqualTo(1000L);
    assertThat((List<?>) strata.get("sortByKey")).hasSize(20_000);
  }

  @Test
  void stoppingTheApplication_removesItsShuffleFiles() throws Exception {
    assertThat(cluster.client().exists("/.shuffle/" + appId)).isFalse();
  }
}
