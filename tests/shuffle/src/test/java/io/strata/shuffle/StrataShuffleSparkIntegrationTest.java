package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.common.shuffle.BatchHeader;
import io.strata.minicluster.LocalStrataCluster;
import java.time.Duration;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.ToLongFunction;
import org.apache.spark.HashPartitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.Success$;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * Differential: the same jobs ({@link ShuffleJobs}: reduceByKey, groupByKey, sortByKey, join, repartition
 * to 1000 partitions) on real Spark in local[4], first with Spark's built-in shuffle, then with
 * StrataShuffleManager on a real cluster of two workers, give the same answers (order-independent
 * checksums; sortByKey's order itself). Also: the shuffle's partition files are complete persisted Strata
 * files while the application runs (sealed when a map stage ends, before any reader asks), and they go when it
 * stops. And Spark's shuffle metrics of two more jobs' tasks ({@link #metricsJobs}): the records and bytes written
 * and read, against the job's own counts, the built-in shuffle's and the batches in the partition files; the write
 * time (the pushing, not the making of the records) and the fetch wait time within their task's run time.
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
      builtinRuns = metricsJobs(sc, null);
    }
    cluster = LocalStrataCluster.builder().workers(2).build().start();
    SparkConf conf = ShuffleJobs.conf("local[4]")
        .set("spark.shuffle.manager", StrataShuffleManager.class.getName())
        .set("spark.strata.master", "localhost:" + cluster.masterPort());
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      strata = ShuffleJobs.runAll(sc);
      appId = SparkFaults.appKey(sc); // known once a shuffle was registered
      // While the application runs, its shuffles are complete, persisted Strata files.
      FileSystem fs = cluster.client();
      strataRuns = metricsJobs(sc, fs);
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

  private static final int MAPS = 4;
  private static final int REDUCES = 8;
  private static final int RECORDS = 40_000;
  private static final int KEYS = 997;

  /** The metrics jobs by name, as Spark's listener saw them on the built-in shuffle and on Strata's. */
  private static Map<String, ShuffleRun> builtinRuns;
  private static Map<String, ShuffleRun> strataRuns;

  /**
   * One shuffle job's successful tasks (their ends, with their metrics), its answer (a count), the time each map task
   * spent making its input records (by task id; only where the job's records are slow to make), and, on Strata's
   * shuffle, the bytes and the batches with data in its partition files (-1 on the built-in shuffle).
   */
  private record ShuffleRun(long count, List<SparkListenerTaskEnd> maps, List<SparkListenerTaskEnd> reduces,
      Map<Long, Long> makingNanos, long fileDataBytes, long fileBatches) {
    long sum(List<SparkListenerTaskEnd> tasks, ToLongFunction<TaskMetrics> metric) {
      return tasks.stream().mapToLong(e -> metric.applyAsLong(e.taskMetrics())).sum();
    }

    long recordsWritten() {
      return sum(maps, m -> m.shuffleWriteMetrics().recordsWritten());
    }

    long bytesWritten() {
      return sum(maps, m -> m.shuffleWriteMetrics().bytesWritten());
    }

    long recordsRead() {
      return sum(reduces, m -> m.shuffleReadMetrics().recordsRead());
    }

    long bytesRead() {
      return sum(reduces, m -> m.shuffleReadMetrics().remoteBytesRead() + m.shuffleReadMetrics().localBytesRead());
    }

    long blocksFetched() {
      return sum(reduces, m -> m.shuffleReadMetrics().remoteBlocksFetched()
          + m.shuffleReadMetrics().localBlocksFetched());
    }
  }

  /**
   * Runs the metrics jobs, each in its own job group, on {@link #MAPS} map tasks and {@link #REDUCES} reduce tasks:
   * "partitionBy" shuffles {@link #RECORDS} records as they are, their values slow to compute ({@link #slowly});
   * "reduceByKey" sums {@link #RECORDS} records (i % KEYS, i) per key, combined on the map side. With {@code fs}
   * (Strata's shuffle), also scans each job's partition files.
   */
  private static Map<String, ShuffleRun> metricsJobs(JavaSparkContext sc, FileSystem fs) throws Exception {
    TaskEndsByGroup ends = new TaskEndsByGroup();
    sc.sc().addSparkListener(ends);
    try {
      Map<String, ShuffleRun> runs = new LinkedHashMap<>();
      JavaPairRDD<Long, Long> slow = sc.parallelize(ShuffleJobs.range(RECORDS), MAPS)
          .mapPartitionsToPair(StrataShuffleSparkIntegrationTest::slowly).partitionBy(new HashPartitioner(REDUCES));
      runs.put("partitionBy", metricsJob(sc, fs, ends, "partitionBy", slow));
      JavaPairRDD<Long, Long> sums = sc.parallelize(ShuffleJobs.range(RECORDS), MAPS)
          .mapToPair(i -> new Tuple2<>(i % KEYS, i)).reduceByKey(Long::sum, REDUCES);
      runs.put("reduceByKey", metricsJob(sc, fs, ends, "reduceByKey", sums));
      return runs;
    } finally {
      sc.sc().removeSparkListener(ends);
    }
  }

  private static ShuffleRun metricsJob(JavaSparkContext sc, FileSystem fs, TaskEndsByGroup ends, String group,
      JavaPairRDD<Long, Long> shuffled) throws Exception {
    makingNanos.clear();
    sc.setJobGroup(group, group, false);
    long count;
    try {
      count = shuffled.count();
    } finally {
      sc.clearJobGroup();
    }
    List<SparkListenerTaskEnd> maps = org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
        .until(() -> ends.of(group, true), l -> l.size() == MAPS);
    List<SparkListenerTaskEnd> reduces = org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
        .until(() -> ends.of(group, false), l -> l.size() == REDUCES);
    long dataBytes = -1;
    long batches = -1;
    if (fs != null) {
      dataBytes = 0;
      batches = 0;
      int shuffleId = ((ShuffleDependency<?, ?, ?>) shuffled.rdd().dependencies().head()).shuffleId();
      for (BatchHeader h : SparkFaults.batches(fs, SparkFaults.appKey(sc), shuffleId)) {
        dataBytes += h.length();
        batches += h.length() > 0 ? 1 : 0; // not the partitions' empty end marks, which readers count and skip
      }
    }
    return new ShuffleRun(count, maps, reduces, Map.copyOf(makingNanos), dataBytes, batches);
  }

  /** Per map task (its task attempt id): nanoseconds its writer spent making its input records ({@link #slowly}). */
  private static final Map<Long, Long> makingNanos = new ConcurrentHashMap<>();

  /**
   * A map partition's records (i % KEYS, a value slow to compute: about 20,000 multiply-adds); the time they took to
   * make, all inside the shuffle writer that pulls them, goes into {@link #makingNanos} once the last is made.
   */
  private static Iterator<Tuple2<Long, Long>> slowly(Iterator<Long> in) {
    long task = TaskContext.get().taskAttemptId();
    return new Iterator<>() {
      private long nanos;

      @Override
      public boolean hasNext() {
        boolean more = in.hasNext();
        if (!more) {
          makingNanos.put(task, nanos);
        }
        return more;
      }

      @Override
      public Tuple2<Long, Long> next() {
        long start = System.nanoTime();
        long i = in.next();
        long v = i;
        for (int k = 0; k < 20_000; k++) {
          v = v * 6364136223846793005L + 1442695040888963407L;
        }
        nanos += System.nanoTime() - start;
        return new Tuple2<>(i % KEYS, v);
      }
    };
  }

  /** The successful task ends of each job group's jobs, map and result tasks apart (on Spark's listener bus thread). */
  private static final class TaskEndsByGroup extends SparkListener {
    private final Map<Integer, String> groupOfStage = new ConcurrentHashMap<>();
    private final Map<String, List<SparkListenerTaskEnd>> ends = new ConcurrentHashMap<>();

    @Override
    public void onJobStart(SparkListenerJobStart start) {
      String group = start.properties() == null ? null : start.properties().getProperty("spark.jobGroup.id");
      if (group != null) {
        for (Object stage : scala.jdk.javaapi.CollectionConverters.asJava(start.stageIds())) {
          groupOfStage.put((Integer) stage, group);
        }
      }
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      String group = groupOfStage.get(end.stageId());
      if (group != null && end.reason() == Success$.MODULE$) {
        ends.computeIfAbsent(group + "/" + "ShuffleMapTask".equals(end.taskType()), k -> new CopyOnWriteArrayList<>())
            .add(end);
      }
    }

    List<SparkListenerTaskEnd> of(String group, boolean maps) {
      return List.copyOf(ends.getOrDefault(group + "/" + maps, List.of()));
    }
  }

  /** The records the map tasks of a metrics job write: all of them, or each map's distinct keys once combined. */
  private static long recordsWritten(String job) {
    if (job.equals("partitionBy")) {
      return RECORDS;
    }
    long out = 0;
    for (int m = 0; m < MAPS; m++) { // parallelize's slices: [m * RECORDS / MAPS, (m + 1) * RECORDS / MAPS)
      Set<Long> keys = new HashSet<>();
      for (long i = (long) m * RECORDS / MAPS; i < (long) (m + 1) * RECORDS / MAPS; i++) {
        keys.add(i % KEYS);
      }
      out += keys.size();
    }
    return out;
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

  /**
   * A driver whose Spark application id an earlier driver had (a YARN attempt after a crashed one; two applications
   * given one spark.app.id) keeps its shuffles apart in Strata: the files the earlier one left under the plain id
   * (here made by hand, as a crashed driver keyed by the id would have left them) neither stop its shuffles (the
   * fallback is off) nor go when it stops. Before, its registration found those files and failed, and its stop
   * deleted them.
   */
  @Test
  void aDriverWithAnEarlierDriversApplicationId_keepsItsShufflesApart() throws Exception {
    FileSystem fs = cluster.client();
    SparkConf conf = ShuffleJobs.conf("local[2]")
        .set("spark.shuffle.manager", StrataShuffleManager.class.getName())
        .set("spark.strata.master", "localhost:" + cluster.masterPort())
        .set("spark.strata.shuffle.fallback.enabled", "false");
    String id;
    String key;
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      id = sc.sc().applicationId();
      fs.createDirectory("/.shuffle/" + id + "/0", CreateDirectoryOptions.defaults().withRecursive(true));
      try (FileOutStream out = fs.createFile("/.shuffle/" + id + "/0/0-0")) {
        out.write(new byte[] {1, 2, 3});
      }
      assertThat(SparkFaults.pairs(sc).reduceByKey(Long::sum).count()).isPositive();
      key = SparkFaults.appKey(sc);
      assertThat(key).startsWith(id + "-").isNotEqualTo(id);
      assertThat(fs.listStatus("/.shuffle/" + key)).as("its shuffles while it runs").isNotEmpty();
      assertThat(fs.exists(io.strata.common.shuffle.AppIds.driverMarker(key))).as("its driver marker").isTrue();
    }
    assertThat(fs.exists("/.shuffle/" + key)).as("removed at its stop").isFalse();
    assertThat(fs.exists(io.strata.common.shuffle.AppIds.driverMarker(key))).isFalse();
    assertThat(fs.getStatus("/.shuffle/" + id + "/0/0-0").length()).as("the earlier driver's file stays").isEqualTo(3);
  }

  @Test
  void shuffleWriteMetrics_countTheRecordsAndBytesPushed_andTheWriteTimeIsThePushingOnly() {
    for (String job : List.of("partitionBy", "reduceByKey")) {
      ShuffleRun run = strataRuns.get(job);
      assertThat(run.maps()).as(job).hasSize(MAPS);
      assertThat(run.recordsWritten()).as(job + ": records written").isEqualTo(recordsWritten(job))
          .isEqualTo(builtinRuns.get(job).recordsWritten());
      assertThat(run.bytesWritten()).as(job + ": bytes written, the data of the batches in the partition files")
          .isPositive().isEqualTo(run.fileDataBytes());
      for (SparkListenerTaskEnd map : run.maps()) {
        long writeNanos = map.taskMetrics().shuffleWriteMetrics().writeTime();
        assertThat(writeNanos).as(job + ": write time (ns) of task " + map.taskInfo().taskId()).isPositive()
            .isLessThanOrEqualTo((map.taskMetrics().executorRunTime() + 1) * 1_000_000);
      }
    }
    // The writer pulls the records it writes: the time they take to make is the map's, not the shuffle write's.
    ShuffleRun slow = strataRuns.get("partitionBy");
    for (SparkListenerTaskEnd map : slow.maps()) {
      Long making = slow.makingNanos().get(map.taskInfo().taskId());
      assertThat(making).as("time task " + map.taskInfo().taskId() + " made its records").isNotNull();
      assertThat(map.taskMetrics().shuffleWriteMetrics().writeTime())
          .as("write time (ns) of task %d, whose records took %d ns to make", map.taskInfo().taskId(), making)
          .isLessThan(making);
    }
  }

  @Test
  void shuffleReadMetrics_countEveryRecordAndByteRead_andTheFetchWaitIsWithinTheTask() {
    for (String job : List.of("partitionBy", "reduceByKey")) {
      ShuffleRun run = strataRuns.get(job);
      assertThat(run.count()).as(job + "'s answer").isEqualTo(job.equals("partitionBy") ? RECORDS : KEYS);
      assertThat(run.reduces()).as(job).hasSize(REDUCES);
      assertThat(run.recordsRead()).as(job + ": records read").isEqualTo(recordsWritten(job))
          .isEqualTo(builtinRuns.get(job).recordsRead());
      assertThat(run.bytesRead()).as(job + ": bytes read (remote and local)").isEqualTo(run.bytesWritten())
          .isEqualTo(run.fileDataBytes());
      assertThat(run.blocksFetched()).as(job + ": blocks fetched, one per batch with data in the files")
          .isPositive().isEqualTo(run.fileBatches());
      for (SparkListenerTaskEnd reduce : run.reduces()) {
        assertThat(reduce.taskMetrics().shuffleReadMetrics().fetchWaitTime())
            .as(job + ": fetch wait (ms) of task " + reduce.taskInfo().taskId()).isNotNegative()
            .isLessThanOrEqualTo(reduce.taskMetrics().executorRunTime());
      }
    }
  }
}
