package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.bench.ShuffleBench;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * The jobs of the shuffle differential tests (reduceByKey, groupByKey, sortByKey, join, repartition to
 * 1000 partitions), each giving one comparable answer (order-independent checksums; sortByKey's order
 * itself), and the Spark conf they share. Stateless; its lambdas are serialized to executors, which load
 * this class from the test classpath.
 */
final class ShuffleJobs {
  /** Job name to job, in the order they run. */
  static final Map<String, Function<JavaSparkContext, Object>> JOBS;

  static {
    Map<String, Function<JavaSparkContext, Object>> jobs = new LinkedHashMap<>();
    jobs.put("reduceByKey", sc -> pairs(sc, 60_000, 997).reduceByKey(Long::sum, 7)
        .map(t -> t._1() * 1_000_003L + t._2()).reduce(Long::sum));
    jobs.put("groupByKey", sc -> pairs(sc, 30_000, 101).groupByKey(5).map(ShuffleBench::groupChecksum)
        .reduce(Long::sum));
    jobs.put("sortByKey", sc -> {
      List<Long> keys = pairs(sc, 20_000, 5_003).map(t -> new Tuple2<>(t._2() % 7919, t._1()))
          .mapToPair(t -> t).sortByKey(true, 6).keys().collect();
      return new ArrayList<>(keys);
    });
    jobs.put("join", sc -> {
      JavaPairRDD<Long, Long> a = pairs(sc, 20_000, 500);
      JavaPairRDD<Long, Long> b = pairs(sc, 5_000, 700).mapValues(v -> v * 3);
      return a.join(b, 9).map(t -> t._1() * 17 + t._2()._1() * 5 + t._2()._2()).reduce(Long::sum);
    });
    jobs.put("repartition1000", sc -> {
      JavaRDD<Long> r = sc.parallelize(range(40_000), 4).repartition(1000);
      long parts = r.getNumPartitions();
      return List.of(parts, r.count(), r.reduce(Long::sum));
    });
    JOBS = Collections.unmodifiableMap(jobs);
  }

  private ShuffleJobs() {
  }

  /** Runs every job in {@code sc}, returning job name to answer in {@link #JOBS}' order. */
  static Map<String, Object> runAll(JavaSparkContext sc) {
    Map<String, Object> answers = new LinkedHashMap<>();
    for (Map.Entry<String, Function<JavaSparkContext, Object>> j : JOBS.entrySet()) {
      answers.put(j.getKey(), j.getValue().apply(sc));
    }
    return answers;
  }

  /** Asserts {@code actual} holds every job's answer, each equal to {@code expected}'s, and not trivially. */
  static void assertSameAnswers(Map<String, Object> actual, Map<String, Object> expected) {
    assertThat(actual.keySet()).containsExactlyElementsOf(JOBS.keySet());
    for (String job : JOBS.keySet()) {
      assertThat(actual.get(job)).as(job).isEqualTo(expected.get(job));
    }
    assertThat((List<?>) actual.get("repartition1000")).first().isEqualTo(1000L);
    assertThat((List<?>) actual.get("sortByKey")).hasSize(20_000);
  }

  /** A conf for {@code master} with no UI and the driver on loopback. */
  static SparkConf conf(String master) {
    return new SparkConf().setMaster(master).setAppName("strata-shuffle-it")
        .set("spark.ui.enabled", "false").set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1");
  }

  static List<Long> range(int n) {
    List<Long> out = new ArrayList<>(n);
    for (long i = 0; i < n; i++) {
      out.add(i);
    }
    return out;
  }

  private static JavaPairRDD<Long, Long> pairs(JavaSparkContext sc, int n, int keys) {
    return sc.parallelize(range(n), 4).mapToPair(i -> new Tuple2<>((i * 7919) % keys, i));
  }
}
