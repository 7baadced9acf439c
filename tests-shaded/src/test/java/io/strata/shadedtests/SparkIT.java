package io.strata.shadedtests;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.spark.Partition;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark 4 in local mode reads and writes {@code strata://} through the shaded jar (found by Hadoop's service
 * loader: no {@code fs.strata.impl}), against a cluster started by bin/strata-start.sh: text files through
 * saveAsTextFile and textFile, a Parquet table written and read back, and the block locations Spark schedules
 * by (the worker's host; it advertises 127.0.0.1, since Spark leaves "localhost" out of preferred locations).
 * Spark binds and advertises loopback only.
 */
class SparkIT {
  @TempDir
  static Path tmp;
  private static ScriptCluster cluster;
  private static SparkSession spark;

  @BeforeAll
  static void start() throws Exception {
    // The worker advertises 127.0.0.1 (still loopback): Spark drops "localhost" from preferred locations.
    cluster = ScriptCluster.start(tmp, java.util.Map.of("STRATA_WORKER_HOSTNAME", "127.0.0.1"));
    spark = SparkSession.builder().master("local[2]").appName("strata-spark-it")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.local.dir", tmp.resolve("spark-local").toString())
        .config("spark.sql.warehouse.dir", tmp.resolve("warehouse").toString())
        // Small blocks, so a file has several and its splits have locations of their own.
        .config("spark.hadoop.strata.user.block.size.default", "1MB")
        .getOrCreate();
  }

  @AfterAll
  static void stop() throws Exception {
    if (spark != null) {
      spark.stop();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void saveAsTextFile_thenTextFile_readsEveryLineBack_withTheWorkerAsPreferredLocation() {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    List<String> lines = new ArrayList<>();
    IntStream.range(0, 20_000).forEach(i -> lines.add("line-" + i + "-" + "x".repeat(i % 97)));
    String dir = cluster.uri() + "/spark/text";
    sc.parallelize(lines, 3).saveAsTextFile(dir);

    JavaRDD<String> back = sc.textFile(dir);
    assertThat(back.count()).isEqualTo(lines.size());
    List<String> sorted = new ArrayList<>(back.collect());
    sorted.sort(null);
    List<String> expected = new ArrayList<>(lines);
    expected.sort(null);
    assertThat(sorted).isEqualTo(expected);

    // The files' blocks name the worker that holds them (through Hadoop's API, as Spark asks).
    try {
      org.apache.hadoop.fs.FileSystem hfs = new org.apache.hadoop.fs.Path(dir).getFileSystem(sc.hadoopConfiguration());
      for (org.apache.hadoop.fs.FileStatus st : hfs.listStatus(new org.apache.hadoop.fs.Path(dir))) {
        if (st.getLen() == 0) {
          continue;
        }
        for (org.apache.hadoop.fs.BlockLocation b : hfs.getFileBlockLocations(st, 0, st.getLen())) {
          assertThat(b.getHosts()).as("hosts of %s at %d", st.getPath(), b.getOffset()).containsExactly("127.0.0.1");
        }
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    // Spark schedules each split near the workers that hold its block: the input RDD under textFile's map
    // prefers the worker's host ("hdfs_cache_<host>" when the block is in memory, as for HDFS's cache).
    org.apache.spark.rdd.RDD<?> input = sc.hadoopFile(dir, org.apache.hadoop.mapred.TextInputFormat.class,
        org.apache.hadoop.io.LongWritable.class, org.apache.hadoop.io.Text.class).rdd();
    assertThat(input.partitions()).isNotEmpty();
    for (Partition p : input.partitions()) {
      List<String> hosts = scala.jdk.javaapi.CollectionConverters.asJava(input.preferredLocations(p));
      assertThat(hosts).as("preferred locations of split %d", p.index())
          .extracting(h -> h.replaceFirst("^hdfs_cache_", "")).containsExactly("127.0.0.1");
    }
  }

  @Test
  void parquet_writtenAndReadBack_withTheSameRows() {
    String dir = cluster.uri() + "/spark/table.parquet";
    spark.range(0, 50_000).selectExpr("id", "id * 2 AS twice", "concat('name-', id) AS name")
        .write().parquet(dir);
    Dataset<Row> back = spark.read().parquet(dir);
    assertThat(back.count()).isEqualTo(50_000L);
    Row sums = back.selectExpr("sum(id)", "sum(twice)", "count(DISTINCT name)").first();
    long n = 50_000L;
    assertThat(sums.getLong(0)).isEqualTo(n * (n - 1) / 2);
    assertThat(sums.getLong(1)).isEqualTo(n * (n - 1));
    assertThat(sums.getLong(2)).isEqualTo(n);
    assertThat(back.filter("id = 31337").select("name").first().getString(0)).isEqualTo("name-31337");
  }
}
