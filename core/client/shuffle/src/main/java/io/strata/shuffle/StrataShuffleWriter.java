package io.strata.shuffle;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Set;
import org.apache.spark.Partitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
import org.apache.spark.memory.MemoryConsumer;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.memory.TaskMemoryManager;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.scheduler.MapStatus$;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.storage.BlockManagerId;
import scala.Option;
import scala.Product2;
import scala.reflect.ClassTag;

/**
 * One map attempt's writer: records (combined first when the dependency combines on the map side) are
 * serialized into one buffer per reduce partition; a buffer past {@code spark.strata.shuffle.writer.batch.size}
 * is compressed with Spark's codec and pushed as one batch (the last of each partition marked so, an empty one when
 * the partition's last went out before the records ended, so readers know they have every batch), and while all buffers together pass
 * {@code spark.strata.shuffle.writer.buffer.max} the largest is pushed. The buffers live within the task's
 * execution memory: the writer is a Spark {@link MemoryConsumer} ({@link Budget}) that asks the task's memory
 * manager for each further {@link #GRANT} its buffers need, pushes its largest buffers when the grant falls
 * short, and pushes buffers to give memory back when another consumer of the task needs it (a spill, in
 * Spark's terms, goes to the workers rather than to local disk). Batches in flight
 * ({@code spark.strata.shuffle.push.inflight.max} requests) are not counted. Pushes are asynchronous
 * ({@link PushClient}); {@link #stop(boolean)} with success waits until every batch is acknowledged and
 * returns the MapStatus, whose sizes are the compressed bytes pushed per partition and whose location is
 * one made-up block manager per shuffle ({@link #location}).
 *
 * <p>Spark's shuffle write metrics: the records written (after the map-side combine), the compressed bytes pushed,
 * and as write time only the time spent in the {@link PushClient} (handing it batches, waiting for room in flight,
 * and for the acknowledgements at the end), as Spark's own writers count only their writes to disk: not the time
 * the records take to make, which the writer pulls from the map, nor serializing and compressing them.
 *
 * <p>Not thread-safe: Spark calls it, and the task memory manager calls {@link Budget#spill}, from the task
 * thread.
 */
final class StrataShuffleWriter<K, V> extends ShuffleWriter<K, V> {
  private static final ClassTag<Object> ANY = scala.reflect.ClassTag$.MODULE$.Any();
  /** Execution memory asked for at a time as the buffers grow. */
  static final long GRANT = 1 << 20;

  private final StrataShuffleManager manager;
  private final StrataShuffleHandle<K, V, ?> handle;
  private final long mapId;
  private final TaskContext context;
  private final ShuffleWriteMetricsReporter metrics;
  private final SerializerInstance serializer;
  private final BatchCodecs codecs;
  private final Partitioner partitioner;
  private final PushClient pusher;
  private final ByteArrayOutputStream[] raw;
  private final SerializationStream[] streams;
  private final long[] compressed;
  private final Budget budget;
  private long buffered;
  private long[] lengths;
  private boolean stopping;
  private boolean flushing;

  StrataShuffleWriter(StrataShuffleManager manager, StrataShuffleHandle<K, V, ?> handle, long mapId,
      TaskContext context, ShuffleWriteMetricsReporter metrics) {
    this.manager = manager;
    this.handle = handle;
    this.mapId = mapId;
    this.context = context;
    this.metrics = metrics;
    ShuffleDependency<K, V, ?> dep = handle.dependency();
    this.serializer = dep.serializer().newInstance();
    this.codecs = manager.batchCodecs();
    this.partitioner = dep.partitioner();
    int n = partitioner.numPartitions();
    this.raw = new ByteArrayOutputStream[n];
    this.streams = new SerializationStream[n];
    this.compressed = new long[n];
    this.budget = new Budget(context.taskMemoryManager());
    StrataShuffleConf c = manager.conf();
    int shuffleId = handle.shuffleId();
    this.pusher = new PushClient(manager.channels(), handle.appId(), shuffleId, handle.locations(),
        (failed, bad) -> manager.ask(new DriverEndpoint.Revive(shuffleId, failed.partitionId(), failed.epoch(),
            Set.copyOf(bad)), PartitionLocation.class),
        new PushClient.Settings(c.maxInFlight(), c.requestBytes(), c.retries(), c.rpcTimeoutMs()), manager.retryPool());
  }

  /** The block manager every map status of a shuffle names: fetch failures then unregister them all. */
  static BlockManagerId location(int shuffleId) {
    return BlockManagerId.apply("strata-shuffle-" + shuffleId, "strata", 1, Option.empty());
  }

  @Override
  @SuppressWarnings("unchecked")
  public void write(scala.collection.Iterator<Product2<K, V>> records) throws IOException {
    ShuffleDependency<K, V, Object> dep = (ShuffleDependency<K, V, Object>) handle.dependency();
    scala.collection.Iterator<? extends Product2<K, ?>> it = records;
    if (dep.mapSideCombine()) {
      it = dep.aggregator().get().combineValuesByKey(records, context);
    }
    long count = 0;
    while (it.hasNext()) {
      Product2<K, ?> r = it.next();
      int p = partitioner.getPartition(r._1());
      SerializationStream s = streams[p];
      if (s == null) {
        raw[p] = new ByteArrayOutputStream(4096);
        s = streams[p] = serializer.serializeStream(raw[p]);
      }
      long before = raw[p].size();
      s.writeKey(r._1(), ANY);
      s.writeValue(r._2(), ANY);
      buffered += raw[p].size() - before;
      count++;
      if (raw[p].size() >= manager.conf().batchBytes()) {
        flush(p);
      }
      if (buffered > budget.getUsed()) {
        budget.acquireMemory(Math.max(GRANT, buffered - budget.getUsed())); // may spill us or others
      }
      while (buffered > 0 && (buffered > manager.conf().bufferBytes() || buffered > budget.getUsed())) {
        flush(largest());
      }
    }
    metrics.incRecordsWritten(count);
    for (int p = 0; p < streams.length; p++) {
      if (streams[p] != null) {
        flush(p, true);
      }
    }
    long start = System.nanoTime();
    pusher.endPartitions(context.partitionId(), mapId); // those whose last batch went before the records ended
    budget.release();
    pusher.finish();
    metrics.incWriteTime(System.nanoTime() - start);
    lengths = compressed.clone();
  }

  /**
   * The writer's share of the task's execution memory, which bounds its buffers. Spilling pushes the
   * largest buffers until the memory asked for is free; the writer's own shortfall it handles itself.
   */
  private final class Budget extends MemoryConsumer {
    Budget(TaskMemoryManager tasks) {
      super(tasks, MemoryMode.ON_HEAP);
    }

    @Override
    public long spill(long size, MemoryConsumer trigger) throws IOException {
      if (trigger == this || flushing || stopping) {
        return 0;
      }
      while (buffered > 0 && getUsed() - buffered < size) {
        flush(largest());
      }
      long spare = getUsed() - buffered;
      freeMemory(spare);
      return spare;
    }

    void release() {
      freeMemory(getUsed());
    }
  }

  private int largest() {
    int best = 0;
    for (int p = 1; p < raw.length; p++) {
      if (raw[p] != null && (raw[best] == null || raw[p].size() > raw[best].size())) {
        best = p;
      }
    }
    return best;
  }

  /** Compresses partition {@code p}'s buffer and pushes it as one batch. */
  private void flush(int p) throws IOException {
    flush(p, false);
  }

  /** Compresses partition {@code p}'s buffer and pushes it as one batch, marked the map's last for it if {@code last}. */
  private void flush(int p, boolean last) throws IOException {
    flushing = true;
    try {
      push(p, last);
    } finally {
      flushing = false;
    }
  }

  private void push(int p, boolean last) throws IOException {
    streams[p].close(); // ends the serialization stream: a batch is read back on its own
    byte[] bytes = raw[p].toByteArray();
    buffered -= bytes.length;
    streams[p] = null;
    raw[p] = null;
    ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length / 2 + 64);
    try (OutputStream c = codecs.forBatch(bytes.length).compressedOutputStream(out)) {
      c.write(bytes);
    }
    byte[] batch = out.toByteArray();
    long start = System.nanoTime();
    pusher.push(p, context.partitionId(), mapId, batch, 0, batch.length, last);
    metrics.incWriteTime(System.nanoTime() - start);
    compressed[p] += batch.length;
    metrics.incBytesWritten(batch.length);
  }

  @Override
  public Option<MapStatus> stop(boolean success) {
    if (stopping) {
      return Option.empty();
    }
    stopping = true;
    budget.release(); // after a failed write()
    if (!success || lengths == null) {
      // Its pushed batches stay in the partition files; readers skip them (not the successful attempt).
      return Option.empty();
    }
    return Option.apply(MapStatus$.MODULE$.apply(location(handle.shuffleId()), lengths, mapId));
  }

  @Override
  public long[] getPartitionLengths() {
    return lengths == null ? new long[partitioner.numPartitions()] : lengths.clone();
  }
}
