package io.strata.shuffle;

import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.common.shuffle.BatchHeader;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.spark.FetchFailed;
import org.apache.spark.SparkConf;
import org.apache.spark.Success$;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import scala.Tuple2;

/**
 * What the Spark fault tests share: the Spark configuration (local[2,4]: two task threads, a task may
 * fail three times; small writer batches so a map task pushes many batches while it runs), the job's
 * input and its answer computed in plain Java, a listener counting task ends, and a scan of a shuffle's
 * partition files for the batches one map attempt pushed. Static helpers; the listener is thread-safe.
 */
final class SparkFaults {
  /** Input records of the fault jobs; keys {@code (i * 7919) % KEYS}, values i. */
  static final int RECORDS = 40_000;
  static final int KEYS = 997;
  static final int MAPS = 4;
  static final int REDUCES = 8;

  private SparkFaults() {}

  static SparkConf conf(String master) {
    return new SparkConf().setMaster("local[2,4]").setAppName("strata-shuffle-faults")
        .set("spark.ui.enabled", "false").set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1")
        .set("spark.shuffle.manager", StrataShuffleManager.class.getName()).set("spark.strata.master", master)
        .set(StrataShuffleConf.BATCH_SIZE.name(), "1KB").set(StrataShuffleConf.REQUEST_SIZE.name(), "1KB")
        .set(StrataShuffleConf.RPC_TIMEOUT.name(), "5s");
  }

  static List<Long> range(int n) {
    List<Long> out = new ArrayList<>(n);
    for (long i = 0; i < n; i++) {
      out.add(i);
    }
    return out;
  }

  static long key(long i) {
    return (i * 7919) % KEYS;
  }

  /** The job's input: RECORDS (key, value) pairs in MAPS partitions. */
  static JavaPairRDD<Long, Long> pairs(JavaSparkContext sc) {
    return sc.parallelize(range(RECORDS), MAPS).mapToPair(i -> new Tuple2<>(key(i), i));
  }

  /**
   * {@code in}, but on map partition 0's first attempt {@code action} runs once half of the partition's
   * records have been handed out (to the shuffle writer), before the next one is.
   */
  static Iterator<Long> atHalfOfFirstAttempt(Iterator<Long> in, Consumer<TaskContext> action) {
    TaskContext t = TaskContext.get();
    boolean act = t.partitionId() == 0 && t.attemptNumber() == 0;
    int half = RECORDS / MAPS / 2;
    return new Iterator<>() {
      private int produced;

      @Override
      public boolean hasNext() {
        return in.hasNext();
      }

      @Override
      public Long next() {
        if (act && produced++ == half) {
          action.accept(t);
        }
        return in.next();
      }
    };
  }

  /** Order-independent checksum of one (key, value) record; summed over a data set it counts duplicates. */
  static long mix(long k, long v) {
    return (k * 1_000_003L + v) * 31 + 7;
  }

  /** The checksum of the pairs themselves, each once: what a shuffle without an aggregator must give. */
  static long expectedPairsChecksum() {
    long sum = 0;
    for (long i = 0; i < RECORDS; i++) {
      sum += mix(key(i), i);
    }
    return sum;
  }

  /** The checksum of the per-key sums: what reduceByKey(sum) must give. */
  static long expectedSumsChecksum() {
    long[] sums = new long[KEYS];
    for (long i = 0; i < RECORDS; i++) {
      sums[(int) key(i)] += i;
    }
    long out = 0;
    for (int k = 0; k < KEYS; k++) {
      out += mix(k, sums[k]);
    }
    return out;
  }

  /** Checksum of a pair RDD's records, computed by Spark. */
  static long checksum(JavaPairRDD<Long, Long> rdd) {
    return rdd.map(t -> mix(t._1(), t._2())).reduce(Long::sum);
  }

  /**
   * Counts the task ends of the jobs that start once it is added (earlier jobs' late events are left
   * out), by kind. Events arrive on Spark's listener bus thread.
   */
  static final class TaskEnds extends SparkListener {
    private final java.util.Set<Integer> stages = java.util.concurrent.ConcurrentHashMap.newKeySet();
    final AtomicInteger mapSucceeded = new AtomicInteger();
    final AtomicInteger mapFailed = new AtomicInteger();
    final AtomicInteger resultSucceeded = new AtomicInteger();
    final AtomicInteger resultFailed = new AtomicInteger();
    final AtomicInteger fetchFailed = new AtomicInteger();

    @Override
    public void onJobStart(org.apache.spark.scheduler.SparkListenerJobStart start) {
      for (Object id : scala.jdk.javaapi.CollectionConverters.asJava(start.stageIds())) {
        stages.add((Integer) id);
      }
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (!stages.contains(end.stageId())) {
        return;
      }
      boolean map = "ShuffleMapTask".equals(end.taskType());
      boolean ok = end.reason() == Success$.MODULE$;
      if (end.reason() instanceof FetchFailed) {
        fetchFailed.incrementAndGet();
      }
      (map ? ok ? mapSucceeded : mapFailed : ok ? resultSucceeded : resultFailed).incrementAndGet();
    }

    @Override
    public String toString() {
      return "map tasks " + mapSucceeded + " ok / " + mapFailed + " failed, result tasks " + resultSucceeded
          + " ok / " + resultFailed + " failed, fetch failures " + fetchFailed;
    }
  }

  /** The epoch file names of a shuffle's partition files ({@code <partition>-<epoch>}). */
  /** The driver's key of its application in Strata: {@code /.shuffle/<key>} ({@link StrataShuffleManager#appKey}). */
  static String appKey(org.apache.spark.SparkContext sc) {
    return ((StrataShuffleManager) sc.env().shuffleManager()).appKey();
  }

  static String appKey(JavaSparkContext sc) {
    return appKey(sc.sc());
  }

  static List<String> partitionFiles(FileSystem fs, String appId, int shuffleId) throws IOException {
    List<String> out = new ArrayList<>();
    for (URIStatus s : fs.listStatus(ShuffleLifecycle.dir(appId, shuffleId))) {
      out.add(s.path());
    }
    return out;
  }

  /** Batches in a shuffle's (sealed) partition files that map attempt {@code attemptId} pushed. */
  static int batchesOf(FileSystem fs, String appId, int shuffleId, long attemptId) throws IOException {
    int n = 0;
    for (BatchHeader h : batches(fs, appId, shuffleId)) {
      if (h.attemptId() == attemptId) {
        n++;
      }
    }
    return n;
  }

  /** The header of every batch in a shuffle's (sealed) partition files, file after file. */
  static List<BatchHeader> batches(FileSystem fs, String appId, int shuffleId) throws IOException {
    List<BatchHeader> out = new ArrayList<>();
    for (String path : partitionFiles(fs, appId, shuffleId)) {
      try (FileInStream s = fs.openFile(path);
          DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(s))) {
        byte[] head = new byte[BatchHeader.BYTES];
        while (true) {
          try {
            in.readFully(head);
          } catch (EOFException e) {
            break;
          }
          BatchHeader h = BatchHeader.readFrom(ByteBuffer.wrap(head), path);
          in.readFully(new byte[h.length()]);
          out.add(h);
        }
      }
    }
    return out;
  }

  /** Every message of a throwable's cause chain, joined. */
  static String messages(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      b.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage()).append(" | ");
    }
    return b.toString();
  }
}
