package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * Settings the manager refuses with a clear error rather than running a shuffle it cannot keep right: here Spark's
 * old fetch protocol, under which every attempt of a map has the same id, so a reader could not keep only the
 * successful attempt's batches (records of a failed attempt would be mixed in, or counted twice).
 */
class StrataShuffleConfTest {
  private static SparkConf conf() {
    return new SparkConf(false).set("spark.strata.master", "localhost:19998");
  }

  @Test
  void theOldFetchProtocol_isRefused_namingTheSetting() {
    assertThatThrownBy(() -> StrataShuffleConf.from(conf().set("spark.shuffle.useOldFetchProtocol", "true")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("spark.shuffle.useOldFetchProtocol=true is not supported");
    assertThat(StrataShuffleConf.from(conf().set("spark.shuffle.useOldFetchProtocol", "false")).master())
        .isEqualTo("localhost:19998");
    assertThat(StrataShuffleConf.from(conf()).master()).isEqualTo("localhost:19998");
  }
}
