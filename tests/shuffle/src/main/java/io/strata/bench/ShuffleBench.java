package io.strata.bench;

import io.strata.minicluster.ClusterProcess;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.shuffle.StrataShuffleManager;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * {@code bin/strata bench shuffle}: the same Spark jobs (reduceByKey, groupByKey, sortByKey, join, repartition; or those
 * {@code --jobs} names) at each shape (maps x
 * reduces) with Spark's built-in sort shuffle and with StrataShuffleManager on a Strata cluster of two workers
 * (loopback, ephemeral ports; in the bench's JVM, or in one of its own with {@code --cluster process}), in one run: each repeat runs every job and shape in one
 * SparkContext per shuffle, the built-in one first in even repeats and Strata's first in odd ones, after
 * {@code --warmup} untimed rounds of both (the first jobs of a JVM pay for compiling Spark's and Strata's code,
 * which would land on whichever shuffle ran first). Prints
 * per job and shape
 * {@code bench shuffle job=<name> maps=<m> reduces=<r> builtin_s=<x> strata_s=<y> ratio=<y/x> equal=<b>}:
 * mean wall seconds of a job over the repeats (context start-up excluded), and whether every answer (a checksum of
 * the job's output: order-independent, but for sortByKey's keys, whose order it covers) was the built-in shuffle's. Single-threaded (Spark's threads aside).
 */
public final class ShuffleBench {
  private static final String USAGE = "Usage: strata bench shuffle [--repeats N (>= 2, default 2)]"
      + " [--shapes MxR,... (default 8x50,32x1000)] [--records N per map task (default 50000)]"
      + " [--spark-master M (default local[2])] [--stages true|false (default false): each job's stage times on stderr]"
      + " [--warmup N untimed rounds of both shuffles first (default 1)]"
      + " [--jobs J,... (default reduceByKey,groupByKey,sortByKey,join,repartition)]"
      + " [--cluster in-process|process (default in-process): the Strata cluster in the bench's JVM, or in one of its"
      + " own]";
  /** Every job, in the order a round runs them. */
  private static final List<String> JOBS = List.of("reduceByKey", "groupByKey", "sortByKey", "join", "repartition");
  /** Distinct keys of the jobs' records. */
  private static final int KEYS = 10_007;

  private ShuffleBench() {
  }

  public static void main(String[] args) throws Exception {
    int repeats = 2;
    String shapesArg = "8x50,32x1000";
    int records = 50_000;
    String sparkMaster = "local[2]";
    boolean stages = false;
    int warmup = 1;
    boolean clusterProcess = false;
    List<String> jobs = JOBS;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("-h") || a.equals("--help")) {
        System.out.println(USAGE);
        return;
      }
      if (i + 1 >= args.length) {
        fail("option " + a + " needs a value (or is unknown)");
      }
      String v = args[++i];
      switch (a) {
        case "--repeats" -> repeats = positive(a, v);
        case "--shapes" -> shapesArg = v;
        case "--records" -> records = positive(a, v);
        case "--spark-master" -> sparkMaster = v;
        case "--stages" -> stages = bool(a, v);
        case "--warmup" -> warmup = nonNegative(a, v);
        case "--jobs" -> jobs = parseJobs(v);
        case "--cluster" -> clusterProcess = switch (v) {
          case "process" -> true;
          case "in-process" -> false;
          default -> {
            fail("--cluster must be process or in-process, got '" + v + "'");
            yield false;
          }
        };
        default -> fail("unknown option " + a);
      }
    }
    if (repeats < 2) {
      fail("--repeats must be at least 2 (the two shuffles alternate which goes first), got " + repeats);
    }
    List<int[]> shapes = parseShapes(shapesArg);
    // "job maps reduces" -> [built-in mean seconds, Strata's]; -> every answer either shuffle gave
    Map<String, double[]> seconds = new LinkedHashMap<>();
    Map<String, Set<Long>> answers = new HashMap<>();
    try (Cluster cluster = Cluster.start(clusterProcess)) {
      for (int rep = -warmup; rep < repeats; rep++) {
        boolean timed = rep >= 0;
        boolean strataFirst = rep >= 0 && rep % 2 == 1;
        for (int turn = 0; turn < 2; turn++) {
          boolean strata = strataFirst == (turn == 0);
          SparkConf conf = new SparkConf().setMaster(sparkMaster).setAppName("strata-bench-shuffle")
              .set("spark.ui.enabled", "false").set("spark.driver.host", "127.0.0.1")
              .set("spark.driver.bindAddress", "127.0.0.1");
          if (strata) {
            conf.set("spark.shuffle.manager", StrataShuffleManager.class.getName())
                .set("spark.strata.master", "localhost:" + cluster.masterPort())
                .set("spark.strata.shuffle.fallback.enabled", "false");
          }
          try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            StageTimes times = new StageTimes();
            if (stages) {
              sc.sc().addSparkListener(times);
            }
            for (int[] shape : shapes) {
              for (String job : jobs) {
                String key = job + " " + shape[0] + " " + shape[1];
                long start = System.nanoTime();
                long answer = run(sc, job, shape[0], shape[1], records);
                double s = (System.nanoTime() - start) / 1e9;
                if (stages) {
                  System.err.printf("bench shuffle stages job=%s maps=%d reduces=%d shuffle=%s total_s=%.3f %s%s%n",
                      job, shape[0], shape[1], strata ? "strata" : "builtin", s, times.take(), timed ? "" : " warmup");
                }
                answers.computeIfAbsent(key, k -> new HashSet<>()).add(answer);
                if (!timed) {
                  continue;
                }
                seconds.computeIfAbsent(key, k -> new double[2])[strata ? 1 : 0] += s / repeats;
              }
            }
          }
        }
      }
    }
    for (Map.Entry<String, double[]> e : seconds.entrySet()) {
      String[] k = e.getKey().split(" ");
      double b = e.getValue()[0];
      double s = e.getValue()[1];
      System.out.printf("bench shuffle job=%s maps=%s reduces=%s builtin_s=%.3f strata_s=%.3f ratio=%.3f"
          + " equal=%s%n", k[0], k[1], k[2], b, s, s / b, answers.get(e.getKey()).size() == 1);
    }
  }

  /**
   * The Strata cluster the jobs use: two workers, in the bench's own JVM (the default) or in one of its own
   * ({@link ClusterProcess}: its compiler, heap and collector apart from Spark's, as a deployed cluster's are, and a
   * profile of either JVM shows one side; the job times moved within this machine's noise either way). Its keys may
   * be set for a run as JVM system properties (STRATA_JAVA_OPTS="-Dstrata.worker....=..."), which the child JVM
   * gets too.
   */
  private record Cluster(int masterPort, AutoCloseable running) implements AutoCloseable {
    static Cluster start(boolean ownProcess) throws java.io.IOException {
      if (ownProcess) {
        ClusterProcess p = ClusterProcess.start(2);
        return new Cluster(p.masterPort(), p);
      }
      LocalStrataCluster c = LocalStrataCluster.builder().workers(2).setStrataSystemProperties().build().start();
      return new Cluster(c.masterPort(), c);
    }

    @Override
    public void close() throws Exception {
      running.close();
    }
  }

  /**
   * Each completed stage's wall seconds (submission to completion) since the last {@link #take}, in completion
   * order, and the gaps between one stage's end and the next one's submission. Spark's listener bus thread
   * writes, the bench's thread takes.
   */
  private static final class StageTimes extends org.apache.spark.scheduler.SparkListener {
    private final StringBuilder done = new StringBuilder();
    private long lastEndMs = -1;

    @Override
    public synchronized void onStageCompleted(org.apache.spark.scheduler.SparkListenerStageCompleted event) {
      org.apache.spark.scheduler.StageInfo info = event.stageInfo();
      long submitted = info.submissionTime().isDefined() ? (Long) info.submissionTime().get() : -1;
      long completed = info.completionTime().isDefined() ? (Long) info.completionTime().get() : -1;
      if (lastEndMs >= 0 && submitted >= 0) {
        done.append(String.format("gap_s=%.3f ", (submitted - lastEndMs) / 1e3));
      }
      done.append(String.format("stage%d_tasks=%d stage%d_s=%.3f ", info.stageId(), info.numTasks(), info.stageId(),
          (completed - submitted) / 1e3));
      lastEndMs = completed;
    }

    synchronized String take() {
      String out = done.toString().strip();
      done.setLength(0);
      lastEndMs = -1;
      return out;
    }
  }

  /** One job at one shape: its order-independent checksum. */
  static long run(JavaSparkContext sc, String job, int maps, int reduces, int records) {
    JavaPairRDD<Long, Long> pairs = sc.parallelize(range(maps), maps)
        .flatMapToPair(m -> records(m, records));
    return switch (job) {
      case "reduceByKey" -> pairs.reduceByKey(Long::sum, reduces).map(t -> t._1() * 1_000_003L + t._2())
          .fold(0L, Long::sum);
      case "groupByKey" -> pairs.groupByKey(reduces).map(ShuffleBench::groupChecksum).fold(0L, Long::sum);
      // Equal keys' values may come in any order; the keys' order, partition by partition, is the sort's answer.
      case "sortByKey" -> pairs.sortByKey(true, reduces).mapPartitionsWithIndex((index, it) -> {
        long keys = 0;
        long values = 0;
        while (it.hasNext()) {
          Tuple2<Long, Long> t = it.next();
          keys = keys * 31 + t._1();
          values += t._2();
        }
        return List.of(index * 1_000_000_007L + keys * 7 + values).iterator();
      }, false).fold(0L, Long::sum);
      // Every record meets the one row of its key in a table of all keys (a dimension join).
      case "join" -> pairs.join(sc.parallelize(range(KEYS), maps).mapToPair(k -> new Tuple2<>(k, k * 3 + 1)),
          reduces).map(t -> t._1() * 17 + t._2()._1() * 5 + t._2()._2()).fold(0L, Long::sum);
      case "repartition" -> pairs.values().repartition(reduces).map(v -> v * 31 + 7).fold(0L, Long::sum);
      default -> throw new IllegalArgumentException("no job " + job);
    };
  }

  private static List<String> parseJobs(String v) {
    List<String> out = new ArrayList<>();
    for (String j : v.split(",")) {
      if (!JOBS.contains(j.trim())) {
        fail("--jobs names jobs of " + JOBS + ", got '" + j.trim() + "'");
      }
      out.add(j.trim());
    }
    return out;
  }

  /** A key's group as one number that changes if the key, a value or the group's size does. */
  public static long groupChecksum(Tuple2<Long, Iterable<Long>> group) {
    long n = 0;
    long sum = 0;
    for (long v : group._2()) {
      n++;
      sum += v;
    }
    return group._1() * 31 + n * 7 + sum;
  }

  /** Map task {@code m}'s records: keys spread over 10007 values, so every reduce partition gets some. */
  private static Iterator<Tuple2<Long, Long>> records(long m, int n) {
    return new Iterator<>() {
      private long i;

      @Override
      public boolean hasNext() {
        return i < n;
      }

      @Override
      public Tuple2<Long, Long> next() {
        long v = m * n + i++;
        return new Tuple2<>((v * 7919) % KEYS, v);
      }
    };
  }

  private static List<Long> range(int n) {
    List<Long> out = new ArrayList<>(n);
    for (long i = 0; i < n; i++) {
      out.add(i);
    }
    return out;
  }

  private static List<int[]> parseShapes(String arg) {
    List<int[]> shapes = new ArrayList<>();
    for (String s : arg.split(",")) {
      String[] mr = s.strip().split("x");
      if (mr.length != 2) {
        fail("--shapes wants MAPSxREDUCES[,...] like 8x50,32x1000, got '" + s + "'");
      }
      shapes.add(new int[] {positive("--shapes maps", mr[0]), positive("--shapes reduces", mr[1])});
    }
    return shapes;
  }

  private static int positive(String what, String v) {
    return atLeast(what, v, 1, "a positive integer");
  }

  private static int nonNegative(String what, String v) {
    return atLeast(what, v, 0, "0 or a positive integer");
  }

  private static int atLeast(String what, String v, int min, String expected) {
    try {
      int n = Integer.parseInt(v.strip());
      if (n >= min) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    fail(what + " must be " + expected + ", got '" + v + "'");
    return 0;
  }

  private static boolean bool(String what, String v) {
    if (!v.equals("true") && !v.equals("false")) {
      fail(what + " must be true or false, got '" + v + "'");
    }
    return Boolean.parseBoolean(v);
  }

  private static void fail(String message) {
    System.err.println("strata bench shuffle: " + message);
    System.err.println(USAGE);
    System.exit(2);
  }
}
