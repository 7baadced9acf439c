package io.strata.shuffle;

import static io.strata.shuffle.SparkFaults.MAPS;
import static io.strata.shuffle.SparkFaults.RECORDS;
import static io.strata.shuffle.SparkFaults.REDUCES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.minicluster.LocalStrataCluster;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.HashPartitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * Task failures on real Spark (local[2,4], so a failed task is tried again) with StrataShuffleManager on a
 * real cluster of two workers: a map attempt that fails after pushing half its records leaves its batches
 * in the partition files, and readers skip them (no duplicates); a map attempt that pushed everything and
 * committed, then failed, leaves a whole second set of batches, as a speculative copy would, and readers keep
 * only the attempt Spark registered; a reduce attempt that fails is tried
 * again and reads the same sealed files. Each job's answer is checked against one computed in plain
 * Java, and the fault against what Spark and the files show. One cluster and one SparkContext for the class.
 */
class StrataShuffleFaultIntegrationTest {
  private static LocalStrataCluster cluster;
  private static JavaSparkContext sc;
  /** The task attempt id (Spark's map id) of the map attempt that failed on purpose; -1 before. */
  private static final AtomicLong failedMapAttempt = new AtomicLong(-1);
  private SparkFaults.TaskEnds tasks;

  @BeforeAll
  static void start() throws Exception {
    cluster = LocalStrataCluster.builder().workers(2).build().start();
    sc = new JavaSparkContext(SparkFaults.conf("localhost:" + cluster.masterPort()));
  }

  @AfterAll
  static void stop() {
    if (sc != null) {
      sc.stop();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @BeforeEach
  void listen() {
    tasks = new SparkFaults.TaskEnds();
    sc.sc().addSparkListener(tasks);
  }

  @AfterEach
  void unlisten() {
    sc.sc().removeSparkListener(tasks);
  }

  /** Map partition 0's first attempt throws once it has handed half its records to the writer. */
  private static Iterator<Long> failHalfway(Iterator<Long> in) {
    return SparkFaults.atHalfOfFirstAttempt(in, t -> {
      failedMapAttempt.set(t.taskAttemptId());
      throw new IllegalStateException("injected: map attempt " + t.taskAttemptId() + " fails halfway");
    });
  }

  /**
   * Map partition 0's first attempt gives other values than its retry (as a non-deterministic map may):
   * were any of its batches read, the answer would be wrong, even where its batch ids match the retry's.
   */
  private static long poisonedOnFirstAttempt(long i) {
    TaskContext t = TaskContext.get();
    return t.partitionId() == 0 && t.attemptNumber() == 0 ? i + 1_000_000_000L : i;
  }

  @Test
  void mapAttemptFailingAfterPushingHalf_itsBatchesAreSkipped_andTheAnswerHasNoDuplicates() throws Exception {
    answerIsRight_andTheFailedAttemptsBatchesAreInTheFiles(StrataShuffleFaultIntegrationTest::failHalfway,
        failedMapAttempt, "failed map attempt");
  }

  /**
   * Runs the job with map partition 0's first attempt failing as {@code fault} makes it (and recording its task
   * attempt id in {@code failedId}), then checks the answer against plain Java with no duplicates, that one map
   * task failed, and that the failed attempt really pushed: its batches are in the sealed files, and the
   * readers left them out.
   */
  private void answerIsRight_andTheFailedAttemptsBatchesAreInTheFiles(FlatMapFunction<Iterator<Long>, Long> fault,
      AtomicLong failedId, String what) throws Exception {
    JavaPairRDD<Long, Long> shuffled = sc.parallelize(SparkFaults.range(RECORDS), MAPS)
        .mapPartitions(fault, true)
        .mapToPair(i -> new Tuple2<>(SparkFaults.key(i), poisonedOnFirstAttempt(i)))
        .partitionBy(new HashPartitioner(REDUCES));
    int shuffleId = ((ShuffleDependency<?, ?, ?>) shuffled.rdd().dependencies().head()).shuffleId();

    assertThat(SparkFaults.checksum(shuffled)).isEqualTo(SparkFaults.expectedPairsChecksum());
    assertThat(shuffled.count()).isEqualTo(RECORDS);

    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(tasks.mapFailed).hasValue(1));
    long failed = failedId.get();
    assertThat(failed).as("the " + what + " (failed on purpose)").isNotNegative();
    assertThat(SparkFaults.batchesOf(cluster.client(), SparkFaults.appKey(sc), shuffleId, failed))
        .as("batches of " + what + " " + failed + " in the partition files").isPositive();
  }

  /** The task attempt id of the map attempt that failed after its writer committed; -1 before. */
  private static final AtomicLong committedThenFailed = new AtomicLong(-1);

  /**
   * Map partition 0's first attempt runs to its end (its writer's stop(true) returns: every batch pushed and
   * acknowledged), then fails in a task completion listener, which Spark runs after the shuffle write.
   */
  private static Iterator<Long> failAfterCommit(Iterator<Long> in) {
    TaskContext t = TaskContext.get();
    if (t.partitionId() == 0 && t.attemptNumber() == 0) {
      t.addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) ctx -> {
        committedThenFailed.set(ctx.taskAttemptId());
        throw new IllegalStateException("injected: map attempt " + ctx.taskAttemptId() + " fails after its commit");
      });
    }
    return in;
  }

  /**
   * Two attempts of one map that both pushed every record and committed, the state a speculative copy leaves
   * when both attempts end before Spark kills the loser (a race that real speculation, in
   * {@link StrataShuffleSpeculationIntegrationTest}, rarely gives: there the loser is killed before its commit):
   * the readers keep the attempt Spark's map output tracker registered and skip the other's complete set of
   * batches, its last batches included. The first
   * attempt gives other values (as a non-deterministic map may), so reading any of its batches, or both
   * attempts, would change the answer.
   */
  @Test
  void mapAttemptThatPushedEverythingAndCommitted_thenFailed_isSkippedLikeASpeculativeCopy() throws Exception {
    answerIsRight_andTheFailedAttemptsBatchesAreInTheFiles(StrataShuffleFaultIntegrationTest::failAfterCommit,
        committedThenFailed, "committed-then-failed map attempt");
  }

  @Test
  void reduceAttemptFailingOnce_isTriedAgain_andTheAnswerIsRight() {
    JavaPairRDD<Long, Long> sums = SparkFaults.pairs(sc).reduceByKey(Long::sum, REDUCES)
        .mapPartitionsToPair(it -> {
          TaskContext t = TaskContext.get();
          if (t.partitionId() == 0 && t.attemptNumber() == 0) {
            it.next(); // it has read from the shuffle
            throw new IllegalStateException("injected: reduce attempt " + t.taskAttemptId() + " fails");
          }
          return it;
        }, true);

    assertThat(SparkFaults.checksum(sums)).isEqualTo(SparkFaults.expectedSumsChecksum());

    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      assertThat(tasks.resultFailed).as(tasks.toString()).hasValue(1);
      assertThat(tasks.resultSucceeded).as(tasks.toString()).hasValue(REDUCES);
      assertThat(tasks.mapFailed).as(tasks.toString()).hasValue(0);
      assertThat(tasks.mapSucceeded).as("the map stage ran once: " + tasks).hasValue(MAPS);
    });
  }
}
