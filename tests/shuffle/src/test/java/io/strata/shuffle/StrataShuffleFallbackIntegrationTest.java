package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.net.InetAddress;
import java.net.ServerSocket;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Strata master that cannot be reached when a shuffle registers (spark.strata.master names a closed
 * loopback port): with {@code spark.strata.shuffle.fallback.enabled} the shuffle runs on Spark's sort
 * shuffle and the job gives the right answer; without it the job fails with an error naming the master.
 * Each test has its own SparkContext (Spark allows one at a time), stopped at its end.
 */
class StrataShuffleFallbackIntegrationTest {
  private static String closedMaster;

  @BeforeAll
  static void closedPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      closedMaster = "127.0.0.1:" + s.getLocalPort();
    }
  }

  private static SparkConf conf(boolean fallback) {
    return SparkFaults.conf(closedMaster).set(StrataShuffleConf.FALLBACK.name(), Boolean.toString(fallback))
        .set("spark.strata.conf.strata.user.master.retry.window", "1s");
  }

  @Test
  void fallbackEnabled_theJobRunsOnSparksSortShuffle_withTheRightAnswer() {
    try (JavaSparkContext sc = new JavaSparkContext(conf(true))) {
      JavaPairRDD<Long, Long> sums = SparkFaults.pairs(sc).reduceByKey(Long::sum, SparkFaults.REDUCES);

      assertThat(SparkFaults.checksum(sums)).isEqualTo(SparkFaults.expectedSumsChecksum());
      ShuffleDependency<?, ?, ?> dep = (ShuffleDependency<?, ?, ?>) sums.rdd().dependencies().head();
      assertThat(dep.shuffleHandle()).as("the shuffle's handle").isNotInstanceOf(StrataShuffleHandle.class);
    }
  }

  @Test
  void fallbackDisabled_theJobFails_namingTheMaster() {
    try (JavaSparkContext sc = new JavaSparkContext(conf(false))) {
      JavaPairRDD<Long, Long> sums = SparkFaults.pairs(sc).reduceByKey(Long::sum, SparkFaults.REDUCES);

      Throwable t = catchThrowable(() -> SparkFaults.checksum(sums));

      assertThat(t).as("the job's failure").isNotNull();
      assertThat(SparkFaults.messages(t)).contains("Cannot register shuffle").contains("with Strata at " + closedMaster);
    }
  }
}
