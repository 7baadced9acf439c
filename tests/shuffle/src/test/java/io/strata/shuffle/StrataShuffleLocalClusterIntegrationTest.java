package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.minicluster.LocalStrataCluster;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The differential of {@link StrataShuffleSparkIntegrationTest} in Spark's {@code local-cluster[2,1,1024]}:
 * a standalone master and two workers inside this JVM, whose executors are separate JVMs, so map output is
 * pushed and read from processes that share nothing with the driver but the Strata cluster. The jobs give
 * the built-in shuffle's answers (also run in local-cluster); the executors are two processes other than
 * this one, each with StrataShuffleManager as its shuffle manager; and the shuffles' partition files hold
 * bytes in Strata while the application runs (fallback to the sort shuffle is off, so nothing hides a
 * failed push).
 *
 * <p>local-cluster needs what the module's surefire configuration sets: {@code SPARK_TESTING=1} and
 * {@code SPARK_SCALA_VERSION} in the environment (the executor launcher then needs no Spark
 * distribution), {@code spark.testing} (executors then get this JVM's {@code java.class.path}, which holds
 * the adapter and these test classes), {@code spark.test.home} (the workers' Spark home, which must be
 * set but need not hold anything) and {@code SPARK_LOCAL_IP} (loopback). Single-threaded.
 */
class StrataShuffleLocalClusterIntegrationTest {
  private static final String MASTER = "local-cluster[2,1,1024]";
  private static LocalStrataCluster cluster;
  private static Map<String, Object> builtin;
  private static Map<String, Object> strata;
  private static Set<String> executors;
  private static long shuffleBytes;
  private static String appId;

  /**
   * 2 executors of 512 MB (under the workers' 1024), both registered before the first job. The standalone
   * backend counts registered cores against spark.cores.max (0 when unset), so without it the ratio waits for
   * nothing: the first job could start with one executor and run every task there (seen in CI).
   */
  private static SparkConf conf() {
    return ShuffleJobs.conf(MASTER).set("spark.executor.memory", "512m")
        .set("spark.cores.max", "2")
        .set("spark.scheduler.minRegisteredResourcesRatio", "1.0")
        .set("spark.scheduler.maxRegisteredResourcesWaitingTime", "60s");
  }

  @BeforeAll
  static void runBoth() throws Exception {
    try (JavaSparkContext sc = new JavaSparkContext(conf())) {
      builtin = ShuffleJobs.runAll(sc);
    }
    cluster = LocalStrataCluster.builder().workers(2).build().start();
    SparkConf conf = conf().set("spark.shuffle.manager", StrataShuffleManager.class.getName())
        .set("spark.strata.master", "localhost:" + cluster.masterPort())
        .set("spark.strata.shuffle.fallback.enabled", "false");
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      appId = sc.sc().applicationId();
      // One task per core and more: the first offer round gives each executor one.
      executors = new TreeSet<>(sc.parallelize(ShuffleJobs.range(8), 8)
          .map(i -> ProcessHandle.current().pid() + " "
              + SparkEnv.get().shuffleManager().getClass().getName())
          .collect());
      strata = ShuffleJobs.runAll(sc);
      FileSystem fs = cluster.client();
      for (URIStatus shuffle : fs.listStatus("/.shuffle/" + appId)) {
        for (URIStatus partition : fs.listStatus(shuffle.path())) {
          shuffleBytes += partition.length();
        }
      }
    }
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void tasksRunInTwoOtherJvms_withTheStrataShuffleManager() {
    long driver = ProcessHandle.current().pid();
    assertThat(executors).hasSize(2).allSatisfy(e -> {
      String[] pidAndManager = e.split(" ");
      assertThat(Long.parseLong(pidAndManager[0])).isNotEqualTo(driver);
      assertThat(pidAndManager[1]).isEqualTo(StrataShuffleManager.class.getName());
    });
  }

  @Test
  void everyJob_givesTheBuiltInShufflesAnswer() {
    ShuffleJobs.assertSameAnswers(strata, builtin);
  }

  @Test
  void theShufflesBytesWentThroughStrata_andGoWithTheApplication() throws Exception {
    assertThat(shuffleBytes).isPositive();
    assertThat(cluster.client().exists("/.shuffle/" + appId)).isFalse();
  }
}
