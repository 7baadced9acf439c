package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.minicluster.LocalStrataCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.spark.HashPartitioner;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.memory.MemoryConsumer;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.util.TaskCompletionListener;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * The shuffle writer's buffers live within the task's execution memory: on real Spark (local[2]) with an
 * execution pool far smaller than what each map task writes, and a batch size and buffer bound the data never
 * reaches, each map task's peak execution memory (Spark's own figure, which counts the writer as a memory
 * consumer) is above zero and within the pool, although the task pushed more than the pool holds, and the
 * reduce side sees every record once.
 */
class StrataShuffleMemoryIntegrationTest {
  private static final long SYSTEM_MEMORY = 16L << 20;
  /** Spark's unified pool with spark.testing.reservedMemory=0 and the default spark.memory.fraction 0.6. */
  private static final long POOL = (long) (SYSTEM_MEMORY * 0.6);
  private static final int MAPS = 2;
  private static final int RECORDS_PER_MAP = 16 * 1024; // 1 KiB of random bytes each: 16 MiB per map
  private static LocalStrataCluster cluster;
  private static JavaSparkContext sc;
  private static final ConcurrentLinkedQueue<TaskMetrics> mapTasks = new ConcurrentLinkedQueue<>();
  /** What the other consumer of {@link #records(long)} was given, per task (local mode: one JVM). */
  private static final ConcurrentLinkedQueue<Long> SQUEEZED = new ConcurrentLinkedQueue<>();

  @BeforeAll
  static void start() throws Exception {
    cluster = LocalStrataCluster.builder().workers(2).build().start();
    SparkConf conf = new SparkConf().setMaster("local[" + MAPS + "]").setAppName("strata-shuffle-memory-it")
        .set("spark.ui.enabled", "false").set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1")
        .set("spark.testing.memory", Long.toString(SYSTEM_MEMORY))
        .set("spark.testing.reservedMemory", "0")
        .set("spark.shuffle.manager", StrataShuffleManager.class.getName())
        .set("spark.strata.master", "localhost:" + cluster.masterPort())
        .set(StrataShuffleConf.BATCH_SIZE.name(), "15MB")
        .set(StrataShuffleConf.BUFFER_MAX.name(), "64MB");
    sc = new JavaSparkContext(conf);
    sc.sc().addSparkListener(new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.taskType().equals("ShuffleMapTask") && end.taskMetrics() != null) {
          mapTasks.add(end.taskMetrics());
        }
      }
    });
  }

  @AfterAll
  static void stop() {
    if (sc != null) {
      sc.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private static JavaPairRDD<Long, byte[]> records() {
    return records(0);
  }

  /**
   * {@code MAPS} map partitions of {@code RECORDS_PER_MAP} records; with {@code squeeze > 0}, half way through
   * each task another consumer of the task's execution memory asks for that much and holds it to the end,
   * recording in {@link #squeezed} what it was given.
   */
  private static JavaPairRDD<Long, byte[]> records(long squeeze) {
    List<Integer> maps = new ArrayList<>();
    for (int m = 0; m < MAPS; m++) {
      maps.add(m);
    }
    return sc.parallelize(maps, MAPS).mapPartitionsToPair(it -> {
      int map = it.next();
      Random random = new Random(map);
      TaskContext task = TaskContext.get();
      MemoryConsumer other = new MemoryConsumer(task.taskMemoryManager(), MemoryMode.ON_HEAP) {
        @Override
        public long spill(long size, MemoryConsumer trigger) {
          return 0; // holds what it has
        }
      };
      task.addTaskCompletionListener((TaskCompletionListener) t -> other.freeMemory(other.getUsed()));
      return new Iterator<Tuple2<Long, byte[]>>() {
        int i;

        @Override
        public boolean hasNext() {
          return i < RECORDS_PER_MAP;
        }

        @Override
        public Tuple2<Long, byte[]> next() {
          if (squeeze > 0 && i == RECORDS_PER_MAP / 2) {
            SQUEEZED.add(other.acquireMemory(squeeze));
          }
          byte[] value = new byte[1024];
          random.nextBytes(value);
          return new Tuple2<>((long) map * RECORDS_PER_MAP + i++, value);
        }
      };
    });
  }

  private static long checksum(JavaPairRDD<Long, byte[]> rdd) {
    return rdd.map(t -> t._1() * 31 + Arrays.hashCode(t._2())).reduce(Long::sum);
  }

  @Test
  void mapTasksBuffer_withinTheTasksExecutionMemory() {
    mapTasks.clear();
    long expected = checksum(records());
    JavaPairRDD<Long, byte[]> shuffled = records().partitionBy(new HashPartitioner(4));

    assertThat(checksum(shuffled)).isEqualTo(expected);
    assertThat(shuffled.count()).isEqualTo((long) MAPS * RECORDS_PER_MAP);

    await().atMost(Duration.ofSeconds(10)).until(() -> mapTasks.size() >= MAPS);
    for (TaskMetrics m : mapTasks) {
      long written = m.shuffleWriteMetrics().bytesWritten();
      // random bytes do not compress: every map task pushed more than the whole pool
      assertThat(written).isGreaterThan(POOL + (2L << 20));
      assertThat(m.peakOnHeapExecutionMemory()).as("peak execution memory of a map task that pushed %d", written)
          .isGreaterThanOrEqualTo(StrataShuffleWriter.GRANT)
          .isLessThanOrEqualTo(POOL);
    }
  }

  @Test
  void anotherConsumerOfTheTask_getsTheMemoryTheWriterHeld_byPushing() {
    long want = 3L << 20;
    long expected = checksum(records());
    SQUEEZED.clear();
    JavaPairRDD<Long, byte[]> shuffled = records(want).partitionBy(new HashPartitioner(4));

    assertThat(checksum(shuffled)).isEqualTo(expected);
    // half way through, the writer held what it had buffered (up to the task's share of the pool, which
    // with two tasks is less than its half of the data); it pushed buffers to give the other consumer all
    // it asked for
    assertThat(SQUEEZED).hasSize(MAPS).containsOnly(want);
  }
}
