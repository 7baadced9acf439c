package io.strata.shuffle;

import static io.strata.shuffle.SparkFaults.MAPS;
import static io.strata.shuffle.SparkFaults.RECORDS;
import static io.strata.shuffle.SparkFaults.REDUCES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.strata.minicluster.LocalStrataCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.HashPartitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import scala.Tuple2;

/**
 * Workers lost while a Spark job (local[2,4]) runs on StrataShuffleManager, on a real cluster of four
 * workers (each partition file on a primary and a replica): one killed while the maps push (pushes to it
 * are revived onto other workers), one killed between the map stage and the reduce stage (the seal uses
 * the other copy; no map runs again), and both workers of a partition killed before the reduce stage (the
 * partition is lost: a fetch failure makes Spark run the map stage again). The map stage is run on its own
 * first with SparkContext.submitMapStage (Spark's API for a map stage alone), so a worker is stopped
 * exactly between the two stages. Also on two workers, a replica killed while maps push (its healthy
 * primary takes the new epochs), and on one worker, the only worker killed (the job fails at once, saying
 * so). Each test has its own cluster and SparkContext, since it kills workers. The tests that stop workers
 * between the stages seal at the first read; one more, sealing at the map stage's end (the default), kills both
 * workers of a partition once that seal is done: the persisted file is read, and no map runs again.
 */
class StrataShuffleWorkerLossIntegrationTest {
  private static final int WORKERS = 4;
  /** The tag of a test whose cluster has two workers only (every partition on both). */
  private static final String TWO_WORKERS = "two-workers";
  /** The tag of a test whose cluster has one worker only. */
  private static final String ONE_WORKER = "one-worker";
  /**
   * The tag of a test that stops workers between the map stage and the seal: its shuffles are sealed when the first
   * reader asks ({@code spark.strata.shuffle.seal.atStageEnd=false}), not as the map stage ends.
   */
  private static final String SEAL_AT_READ = "seal-at-read";
  /** The cluster of the running test (static: map tasks run in this JVM and stop its workers). */
  private static volatile LocalStrataCluster cluster;
  private static final AtomicBoolean stoppedInTask = new AtomicBoolean();
  private JavaSparkContext sc;
  private SparkFaults.TaskEnds tasks;

  @BeforeEach
  void start(TestInfo test) throws Exception {
    stoppedInTask.set(false);
    int workers = test.getTags().contains(ONE_WORKER) ? 1 : test.getTags().contains(TWO_WORKERS) ? 2 : WORKERS;
    cluster = LocalStrataCluster.builder().workers(workers).build().start();
    sc = new JavaSparkContext(SparkFaults.conf("localhost:" + cluster.masterPort())
        .set(StrataShuffleConf.SEAL_AT_STAGE_END.name(), Boolean.toString(!test.getTags().contains(SEAL_AT_READ))));
    tasks = new SparkFaults.TaskEnds();
    sc.sc().addSparkListener(tasks);
  }

  @AfterEach
  void stop() {
    if (sc != null) {
      sc.stop();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private static ShuffleDependency<?, ?, ?> dependency(JavaPairRDD<?, ?> shuffled) {
    return (ShuffleDependency<?, ?, ?>) shuffled.rdd().dependencies().head();
  }

  /**
   * Runs only the map stage of {@code shuffled}: its outputs are registered; nothing is sealed yet in a
   * {@link #SEAL_AT_READ} test.
   */
  private void runMapStage(JavaPairRDD<?, ?> shuffled) throws Exception {
    sc.sc().submitMapStage(dependency(shuffled)).get();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(tasks.mapSucceeded).hasValue(MAPS));
  }

  /** {@code results} result tasks succeeded, none failed to fetch, and the map stage ran once. */
  private void assertReadWithoutRunningAMapAgain(int results) {
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      assertThat(tasks.resultSucceeded).as(tasks.toString()).hasValue(results);
      assertThat(tasks.fetchFailed).as(tasks.toString()).hasValue(0);
      assertThat(tasks.mapSucceeded).as("the map stage ran once: " + tasks).hasValue(MAPS);
    });
  }

  private int workerIndex(int rpcPort) {
    for (int i = 0; i < WORKERS; i++) {
      if (cluster.worker(i).rpcPort() == rpcPort) {
        return i;
      }
    }
    throw new AssertionError("No worker of the cluster has port " + rpcPort);
  }

  /** Map partition 0's first attempt stops worker {@code i} once it has handed half its records to the writer. */
  private static Iterator<Long> stopWorkerHalfway(Iterator<Long> in, int i) {
    return SparkFaults.atHalfOfFirstAttempt(in, t -> {
      cluster.stopWorker(i);
      stoppedInTask.set(true);
    });
  }

  @Test
  void workerKilledWhileMapsPush_itsPartitionsAreRevivedElsewhere_andTheAnswerIsRight() throws Exception {
    killWorkerWhileMapsPush();
  }

  /**
   * With two workers, the one killed is the replica of half the partitions: their primary, alive, must
   * stay usable (the new epochs go on it alone).
   */
  @Test
  @Tag(TWO_WORKERS)
  void replicaKilledWhileMapsPush_onTwoWorkers_thePrimaryTakesTheNewEpochs_andTheAnswerIsRight() throws Exception {
    killWorkerWhileMapsPush();
  }

  /**
   * The only worker killed while maps push: no revive can place the partitions, and each map attempt fails
   * at once with that reason (not after PushClient.finish's deadline, 100 s an attempt here), so the job
   * fails within seconds naming it.
   */
  @Test
  @Tag(ONE_WORKER)
  void onlyWorkerKilledWhileMapsPush_theJobFailsAtOnce_sayingNoWorkerIsLeft() {
    JavaPairRDD<Long, Long> shuffled = shuffledStoppingWorkerHalfway(0);
    long start = System.nanoTime();

    Throwable t = catchThrowable(() -> SparkFaults.checksum(shuffled));

    long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
    assertThat(t).as("the job's failure").isNotNull();
    assertThat(SparkFaults.messages(t)).contains("reviving their partitions failed")
        .contains("No live Strata worker");
    assertThat(seconds).as("seconds until the job failed (4 attempts)").isLessThan(60);
  }

  private JavaPairRDD<Long, Long> shuffledStoppingWorkerHalfway(int worker) {
    return sc.parallelize(SparkFaults.range(RECORDS), MAPS).mapPartitions(it -> stopWorkerHalfway(it, worker), true)
        .mapToPair(i -> new Tuple2<>(SparkFaults.key(i), i)).partitionBy(new HashPartitioner(REDUCES));
  }

  private void killWorkerWhileMapsPush() throws Exception {
    int killedPort = cluster.worker(1).rpcPort();
    JavaPairRDD<Long, Long> shuffled = shuffledStoppingWorkerHalfway(1);

    assertThat(SparkFaults.checksum(shuffled)).isEqualTo(SparkFaults.expectedPairsChecksum());

    assertThat(stoppedInTask).as("worker 1 was stopped by a map task").isTrue();
    // A push whose primary is alive but whose replica (worker 1) died names the replica: only the dead
    // worker is blamed, never a healthy primary of one of its partitions.
    java.util.Set<String> blamed = ((StrataShuffleManager) org.apache.spark.SparkEnv.get().shuffleManager())
        .lifecycle().blamedWorkers(dependency(shuffled).shuffleId());
    assertThat(blamed).as("workers the revives were told to avoid (worker 1 is port " + killedPort + ")")
        .isNotEmpty().allMatch(w -> w.endsWith(":" + killedPort));
    List<String> revived = new ArrayList<>();
    for (String f : SparkFaults.partitionFiles(cluster.client(), SparkFaults.appKey(sc),
        dependency(shuffled).shuffleId())) {
      if (!f.endsWith("-0")) {
        revived.add(f);
      }
    }
    assertThat(revived).as("partition files of epochs after 0 (revived)").isNotEmpty();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      assertThat(tasks.resultSucceeded).as(tasks.toString()).hasValue(REDUCES);
      assertThat(tasks.mapFailed).as("pushes were revived, no map attempt failed: " + tasks).hasValue(0);
      assertThat(tasks.fetchFailed).as("the dead worker's epochs were sealed from their replicas: " + tasks)
          .hasValue(0);
      assertThat(tasks.mapSucceeded).as("the map stage ran once: " + tasks).hasValue(MAPS);
    });
  }

  @Test
  @Tag(SEAL_AT_READ)
  void workerKilledAfterTheMapStage_theReduceStageReadsTheOtherCopy_andNoMapRunsAgain() throws Exception {
    JavaPairRDD<Long, Long> sums = SparkFaults.pairs(sc).reduceByKey(Long::sum, REDUCES);
    runMapStage(sums);
    int port = cluster.worker(0).rpcPort();
    assertThat(((StrataShuffleHandle<?, ?, ?>) dependency(sums).shuffleHandle()).locations())
        .as("worker 0 is the primary of some partitions").anyMatch(l -> l.primaryPort() == port);

    cluster.stopWorker(0);
    assertThat(SparkFaults.checksum(sums)).isEqualTo(SparkFaults.expectedSumsChecksum());

    assertReadWithoutRunningAMapAgain(REDUCES);
  }

  @Test
  void bothWorkersOfAPartitionKilledAfterTheSeal_aSecondJobReadsThePersistedFile_andNoMapRunsAgain()
      throws Exception {
    JavaPairRDD<Long, Long> sums = SparkFaults.pairs(sc).reduceByKey(Long::sum, REDUCES);
    assertThat(SparkFaults.checksum(sums)).isEqualTo(SparkFaults.expectedSumsChecksum()); // seals the files
    PartitionLocation p0 = ((StrataShuffleHandle<?, ?, ?>) dependency(sums).shuffleHandle()).locations()[0];

    cluster.stopWorker(workerIndex(p0.primaryPort()));
    cluster.stopWorker(workerIndex(p0.replicaPort()));
    // The map stage is skipped: the reducers read the sealed files, partition 0's from the under file system.
    assertThat(SparkFaults.checksum(sums)).isEqualTo(SparkFaults.expectedSumsChecksum());

    assertReadWithoutRunningAMapAgain(2 * REDUCES);
  }

  @Test
  void bothWorkersOfAPartitionKilledOnceTheMapStageEnded_theStageEndSealKeptIt_andNoMapRunsAgain()
      throws Exception {
    JavaPairRDD<Long, Long> sums = SparkFaults.pairs(sc).reduceByKey(Long::sum, REDUCES);
    runMapStage(sums);
    PartitionLocation p0 = ((StrataShuffleHandle<?, ?, ?>) dependency(sums).shuffleHandle()).locations()[0];
    // No reader asked: the seal started when the map stage ended, and wrote partition 0 through to the UFS.
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(cluster.client().getStatus(p0.path()))
        .satisfies(st -> {
          assertThat(st.complete()).isTrue();
          assertThat(st.persistenceState()).isEqualTo(io.strata.client.URIStatus.PERSISTED);
        }));

    cluster.stopWorker(workerIndex(p0.primaryPort()));
    cluster.stopWorker(workerIndex(p0.replicaPort()));
    // Both copies in the workers are gone; the persisted file still holds partition 0's bytes.
    assertThat(SparkFaults.checksum(sums)).isEqualTo(SparkFaults.expectedSumsChecksum());

    assertReadWithoutRunningAMapAgain(REDUCES);
  }

  @Test
  @Tag(SEAL_AT_READ)
  void bothWorkersOfAPartitionKilledBeforeTheSeal_fetchFailureRerunsTheMapStage_andTheAnswerIsRight() throws Exception {
    JavaPairRDD<Long, Long> sums = SparkFaults.pairs(sc).reduceByKey(Long::sum, REDUCES);
    runMapStage(sums);
    PartitionLocation p0 = ((StrataShuffleHandle<?, ?, ?>) dependency(sums).shuffleHandle()).locations()[0];
    assertThat(p0.hasReplica()).as(p0.toString()).isTrue();

    cluster.stopWorker(workerIndex(p0.primaryPort()));
    cluster.stopWorker(workerIndex(p0.replicaPort()));
    assertThat(SparkFaults.checksum(sums)).isEqualTo(SparkFaults.expectedSumsChecksum());

    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      assertThat(tasks.fetchFailed).as("partition 0 was lost: " + tasks).hasValueGreaterThan(0);
      assertThat(tasks.mapSucceeded).as("the map stage ran again: " + tasks).hasValueGreaterThan(MAPS);
      assertThat(tasks.resultSucceeded).as(tasks.toString()).hasValueGreaterThanOrEqualTo(REDUCES);
    });
  }
}
