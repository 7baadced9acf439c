package io.strata.shuffle;

import static io.strata.shuffle.SparkFaults.MAPS;
import static io.strata.shuffle.SparkFaults.RECORDS;
import static io.strata.shuffle.SparkFaults.REDUCES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.minicluster.LocalStrataCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.spark.HashPartitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.Success$;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskKilled;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.deploy.master.Master;
import org.apache.spark.deploy.worker.Worker;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.TaskInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;
import scala.Tuple2;

/**
 * Real Spark speculation on loopback: a map attempt that pushed its records and then stalls gets a speculative
 * copy from Spark, the copy pushes every record too and wins, and the reducers read only the copy's batches.
 *
 * <p>Spark 4.0.1 never speculates in {@code local[N]} ({@code TaskSchedulerImpl.start} schedules the speculation
 * check only when {@code !isLocal}) and never in {@code local-cluster} on one machine: {@code
 * TaskSetManager.dequeueTaskFromList} skips, for a speculative copy, every executor whose host already ran an
 * attempt of the task ({@code !(speculative && hasAttemptOnHost(index, host))}, {@code hasAttemptOnHost} comparing
 * the host strings), and {@code LocalSparkCluster} starts all its workers, so all executors, with one host name.
 * So this test starts Spark's standalone master and two workers itself, inside this JVM as local-cluster does, one
 * worker named {@code 127.0.0.1} and one named {@code localhost}: two host names to the scheduler, both the
 * loopback address (everything binds 127.0.0.1). Executors are separate JVMs on this JVM's classpath (Spark's
 * testing mode, as the module's surefire configuration sets up).
 *
 * <p>Map partition 0's first attempt gives other values than any later attempt (as a non-deterministic map may),
 * hands all its records to the shuffle writer (1 KB batches, so nearly all are pushed), then sleeps until Spark
 * kills it. The test checks that Spark ran a speculative copy of that map on the other host name, the copy
 * succeeded and the original was killed, both attempts' batches are in the sealed partition files, and the answer
 * equals the one computed in plain Java (reading the original's batches, alone or with the copy's, would change
 * it). Single-threaded; one cluster, one Spark master and one SparkContext for the class.
 */
class StrataShuffleSpeculationIntegrationTest {
  private static final String[] HOSTS = {"127.0.0.1", "localhost"};
  @TempDir
  static Path work;
  private static LocalStrataCluster cluster;
  private static RpcEnv sparkMaster;
  private static final List<RpcEnv> sparkWorkers = new CopyOnWriteArrayList<>();
  private static JavaSparkContext sc;
  private static final List<TaskInfo> mapEnds = new CopyOnWriteArrayList<>();
  private static final List<Object> mapEndReasons = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    cluster = LocalStrataCluster.builder().workers(2).build().start();
    SparkConf deploy = new SparkConf().set("spark.ui.enabled", "false");
    sparkMaster = Master.startRpcEnvAndEndpoint("127.0.0.1", 0, 0, deploy)._1();
    String masterUrl = "spark://127.0.0.1:" + sparkMaster.address().port();
    for (int i = 0; i < HOSTS.length; i++) {
      sparkWorkers.add(Worker.startRpcEnvAndEndpoint(HOSTS[i], 0, 0, 1, 1024, new String[] {masterUrl},
          work.resolve("worker-" + i).toString(), Option.apply(i + 1), deploy, Option.empty()));
    }
    SparkConf conf = SparkFaults.conf("localhost:" + cluster.masterPort()).setMaster(masterUrl)
        .setAppName("strata-shuffle-speculation-it")
        .set("spark.executor.memory", "512m").set("spark.cores.max", "2")
        .set("spark.scheduler.minRegisteredResourcesRatio", "1.0")
        .set("spark.scheduler.maxRegisteredResourcesWaitingTime", "60s")
        .set("spark.speculation", "true").set("spark.speculation.interval", "100ms")
        .set("spark.speculation.quantile", "0.5").set("spark.speculation.multiplier", "1.5")
        // The stalled attempt reads nothing while it sleeps; speculate on its run time alone.
        .set("spark.speculation.efficiency.enabled", "false");
    sc = new JavaSparkContext(conf);
    sc.sc().addSparkListener(new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if ("ShuffleMapTask".equals(end.taskType())) {
          mapEndReasons.add(end.reason());
          mapEnds.add(end.taskInfo());
        }
      }
    });
  }

  @AfterAll
  static void stop() {
    if (sc != null) {
      sc.stop();
    }
    for (RpcEnv env : sparkWorkers) {
      env.shutdown();
      env.awaitTermination();
    }
    if (sparkMaster != null) {
      sparkMaster.shutdown();
      sparkMaster.awaitTermination();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Map partition 0's first attempt: other values, and a stall once every record went to the writer. */
  private static Iterator<Long> stallFirstAttempt(Iterator<Long> in) {
    TaskContext t = TaskContext.get();
    boolean stall = t.partitionId() == 0 && t.attemptNumber() == 0;
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        if (!in.hasNext() && stall) {
          try {
            Thread.sleep(60_000); // Spark interrupts it when it kills the attempt
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            t.killTaskIfInterrupted();
          }
        }
        return in.hasNext();
      }

      @Override
      public Long next() {
        long i = in.next();
        return stall ? i + 1_000_000_000L : i;
      }
    };
  }

  @Test
  void speculativeCopyOfAMap_onTheOtherHostName_bothPush_andTheAnswerIsExact() throws Exception {
    JavaPairRDD<Long, Long> shuffled = sc.parallelize(SparkFaults.range(RECORDS), MAPS)
        .mapPartitions(StrataShuffleSpeculationIntegrationTest::stallFirstAttempt, true)
        .mapToPair(i -> new Tuple2<>(SparkFaults.key(i), i))
        .partitionBy(new HashPartitioner(REDUCES));
    int shuffleId = ((ShuffleDependency<?, ?, ?>) shuffled.rdd().dependencies().head()).shuffleId();

    assertThat(SparkFaults.checksum(shuffled)).isEqualTo(SparkFaults.expectedPairsChecksum());
    assertThat(shuffled.count()).isEqualTo(RECORDS);

    await().atMost(Duration.ofSeconds(10)).until(() -> mapEnds.size() >= MAPS + 1);
    TaskInfo original = null;
    TaskInfo copy = null;
    for (int i = 0; i < mapEnds.size(); i++) {
      TaskInfo info = mapEnds.get(i);
      if (info.index() == 0 && info.speculative()) {
        copy = info;
        assertThat(mapEndReasons.get(i)).as("the speculative copy's end").isEqualTo(Success$.MODULE$);
      } else if (info.index() == 0 && info.attemptNumber() == 0) {
        original = info;
        assertThat(mapEndReasons.get(i)).as("the original's end").isInstanceOf(TaskKilled.class);
      }
    }
    assertThat(copy).as("a speculative attempt of map 0 among " + mapEnds).isNotNull();
    assertThat(original).as("map 0's first attempt among " + mapEnds).isNotNull();
    assertThat(List.of(original.host(), copy.host())).as("hosts of the two attempts")
        .containsExactlyInAnyOrder(HOSTS);
    assertThat(mapEnds).as("map tasks that ended: 4 and the copy").hasSize(MAPS + 1);

    String app = SparkFaults.appKey(sc);
    assertThat(SparkFaults.batchesOf(cluster.client(), app, shuffleId, original.taskId()))
        .as("batches of the original (killed) attempt %d in the partition files", original.taskId()).isPositive();
    assertThat(SparkFaults.batchesOf(cluster.client(), app, shuffleId, copy.taskId()))
        .as("batches of the speculative attempt %d in the partition files", copy.taskId()).isPositive();
  }
}
