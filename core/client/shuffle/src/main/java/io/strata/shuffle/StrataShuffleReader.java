package io.strata.shuffle;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.io.CompressionCodec;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.ShuffleBlockId;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.Product2;

/**
 * One reduce task's reader of partitions [start, end): asks the driver for those partitions' sealed files
 * and their statuses with blocks (the first ask seals the shuffle; an executor keeps a whole shuffle's answer
 * for its later readers, {@link StrataShuffleManager#sealed}), takes the successful attempt of each map from Spark's map output tracker,
 * reads every sealed file of each partition with a {@link PartitionReader} (skipping other attempts'
 * batches and duplicates), decompresses and deserializes each batch, then aggregates and sorts as the
 * dependency asks (Spark's own Aggregator and ExternalSorter). A partition whose sealed copy is lost, or
 * a file that cannot be read from any copy, raises FetchFailedException naming the shuffle's made-up
 * block manager, so Spark runs the whole map stage again.
 *
 * <p>Spark's shuffle read metrics: every record read (before the aggregation), each batch with data as a remote
 * block of its compressed bytes, and as fetch wait the time waiting for the driver's answer and the map output
 * tracker; folded into the task's metrics when the task ends.
 *
 * <p>Not thread-safe: Spark calls it from the task thread.
 */
final class StrataShuffleReader<K, C> implements ShuffleReader<K, C> {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(StrataShuffleReader.class);
  private final StrataShuffleManager manager;
  private final StrataShuffleHandle<K, ?, C> handle;
  private final int startMap;
  private final int endMap;
  private final int start;
  private final int end;
  private final TaskContext context;
  private final ShuffleReadMetricsReporter metrics;

  StrataShuffleReader(StrataShuffleManager manager, StrataShuffleHandle<K, ?, C> handle, int startMap, int endMap,
      int start, int end, TaskContext context, ShuffleReadMetricsReporter metrics) {
    this.manager = manager;
    this.handle = handle;
    this.startMap = startMap;
    this.endMap = endMap;
    this.start = start;
    this.end = end;
    this.context = context;
    this.metrics = metrics;
  }

  private FetchFailedException fetchFailed(int partition, String why, Throwable cause) {
    return new FetchFailedException(StrataShuffleWriter.location(handle.shuffleId()), handle.shuffleId(), -1L, -1,
        partition, "Strata shuffle " + handle.shuffleId() + " partition " + partition + ": " + why, cause);
  }

  @Override
  @SuppressWarnings("unchecked")
  public scala.collection.Iterator<Product2<K, C>> read() {
    int shuffleId = handle.shuffleId();
    long waitStart = System.nanoTime();
    DriverEndpoint.Sealed sealed = manager.sealed(shuffleId, start, end);
    Map<Integer, Long> attempts = new HashMap<>();
    // Per partition, the maps whose successful attempt reported bytes for it: each must have a batch there.
    Map<Integer, Set<Integer>> expected = new HashMap<>();
    var it = SparkEnv.get().mapOutputTracker().getMapSizesByExecutorId(shuffleId, startMap, endMap, start, end);
    while (it.hasNext()) {
      var blocks = it.next()._2().iterator();
      while (blocks.hasNext()) {
        var b = blocks.next();
        BlockId id = b._1();
        if (id instanceof ShuffleBlockId sb) {
          int mapIndex = (Integer) b._3();
          attempts.put(mapIndex, sb.mapId());
          if ((Long) b._2() > 0) {
            expected.computeIfAbsent(sb.reduceId(), k -> new java.util.HashSet<>()).add(mapIndex);
          }
        }
      }
    }
    metrics.incFetchWaitTime((System.nanoTime() - waitStart) / 1_000_000);
    PartitionPrefetch ahead = manager.readAhead();
    ahead.started(shuffleId, sealed, start, end);
    List<Integer> partitions = new ArrayList<>();
    for (int p = start; p < end; p++) {
      Set<Long> suspect = sealed.suspects().get(p);
      if (suspect != null) {
        for (long mapId : attempts.values()) {
          if (suspect.contains(mapId)) {
            throw sneaky(fetchFailed(p, "an epoch of its file has no sealed copy (its workers were lost before "
                + "the seal) and holds data of map attempt " + mapId, null));
          }
        }
      }
      partitions.add(p);
    }
    ShuffleDependency<K, ?, C> dep = handle.dependency();
    SerializerInstance ser = dep.serializer().newInstance();
    CompressionCodec codec = CompressionCodec.createCodec(SparkEnv.get().conf());
    Iterator<Integer> parts = partitions.iterator();
    var records = new scala.collection.AbstractIterator<Product2<K, Object>>() {
      private PartitionReader reader;

      /** Closes the partition file being read, if any (the task ends before reading it all, or failed). */
      void closeOpen() {
        PartitionReader r = reader;
        reader = null;
        if (r != null) {
          try {
            r.close();
          } catch (IOException e) {
            LOG.debug("Closing a partition file of shuffle {} at the task's end: {}", shuffleId, e.toString());
          }
        }
      }
      private int partition = -1;
      private scala.collection.Iterator<scala.Tuple2<Object, Object>> batch = scala.collection.Iterator$.MODULE$.empty();

      @Override
      public boolean hasNext() {
        try {
          while (!batch.hasNext()) {
            if (reader != null && reader.hasNext()) {
              byte[] b = reader.next();
              metrics.incRemoteBlocksFetched(1);
              metrics.incRemoteBytesRead(b.length);
              batch = ser.deserializeStream(codec.compressedInputStream(new ByteArrayInputStream(b)))
                  .asKeyValueIterator();
              continue;
            }
            if (reader != null) {
              reader.close();
              checkWhole(partition, reader);
              reader = null;
            }
            if (!parts.hasNext()) {
              return false;
            }
            partition = parts.next();
            List<String> files = sealed.files().getOrDefault(partition, List.of());
            reader = new PartitionReader(manager.fs(), files, sealed.statuses(), attempts,
                (path, status) -> ahead.take(shuffleId, path, status));
          }
          return true;
        } catch (IOException | UncheckedIOException e) {
          throw fetchFailedUnchecked(partition, e);
        }
      }

      /**
       * Every map whose successful attempt reported bytes for the partition must have had all its batches there
       * kept from its files ({@link PartitionReader#missing}): else they miss data (a seal kept from before a map
       * ran again, or data lost unnoticed), and Spark must run the map stage again rather than take a partial
       * partition.
       */
      private void checkWhole(int p, PartitionReader r) {
        String missing = r.missing(expected.getOrDefault(p, Set.of()));
        if (missing != null) {
          manager.forgetSeal(shuffleId);
          throw sneaky(fetchFailed(p, missing + " (sealed files " + sealed.files().getOrDefault(p, List.of()) + ")",
              null));
        }
      }

      @Override
      public Product2<K, Object> next() {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException();
        }
        metrics.incRecordsRead(1);
        return (Product2<K, Object>) (Product2<?, ?>) batch.next();
      }
    };
    if (context != null) {
      // A task that stops early (a limit, take(n)), is killed or fails mid-file closes the file it was reading:
      // an open short-circuit read holds the block's read lock and its connection at the worker.
      // Spark hands a reader the task's temporary read metrics and leaves it to the reader to fold them into the
      // task's (its own reader does when its records end): else the task ends reporting nothing read. Folding sets
      // the task's values to the sum of its temporary ones, so a task with two readers may fold twice.
      context.addTaskCompletionListener(new org.apache.spark.util.TaskCompletionListener() {
        @Override
        public void onTaskCompletion(TaskContext done) {
          records.closeOpen();
          done.taskMetrics().mergeShuffleReadMetrics();
        }
      });
    }
    scala.collection.Iterator<? extends Product2<K, ?>> out = records;
    if (dep.aggregator().isDefined()) {
      var agg = (org.apache.spark.Aggregator<K, Object, C>) dep.aggregator().get();
      out = dep.mapSideCombine()
          ? agg.combineCombinersByKey((scala.collection.Iterator<Product2<K, C>>) (Object) records, context)
          : agg.combineValuesByKey(records, context);
    }
    if (dep.keyOrdering().isDefined()) {
      ExternalSorter<K, Object, Object> sorter = new ExternalSorter<>(context, Option.empty(), Option.empty(),
          (Option<scala.math.Ordering<K>>) (Object) dep.keyOrdering(), dep.serializer());
      out = sorter.insertAllAndUpdateMetrics((scala.collection.Iterator<Product2<K, Object>>) (Object) out);
    }
    return new InterruptibleIterator<>(context, (scala.collection.Iterator<Product2<K, C>>) (Object) out);
  }

  private RuntimeException fetchFailedUnchecked(int partition, Exception e) {
    FetchFailedException f = fetchFailed(partition, "reading its sealed files failed: " + e.getMessage(), e);
    return sneaky(f);
  }

  /**
   * Throws {@code t} unchecked (the caller writes {@code throw sneaky(t)}): FetchFailedException and Spark's
   * SparkException are checked in Java, but Spark throws the one from its RPC calls and looks for the other thrown
   * from iterators.
   */
  @SuppressWarnings("unchecked")
  static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
    throw (T) t;
  }
}
