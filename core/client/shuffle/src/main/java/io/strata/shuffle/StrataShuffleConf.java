package io.strata.shuffle;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.conf.ValueParser;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.SparkConf;

/**
 * The Spark configuration keys of the Strata shuffle manager, each declared once here with its default
 * and meaning, and read into one immutable object per manager. Sizes take units ({@code 256KB}), durations
 * too ({@code 30s}). Keys {@code spark.strata.conf.<strata key>} pass any Strata client key through
 * (for example {@code spark.strata.conf.strata.user.master.retry.window=5s}).
 */
public record StrataShuffleConf(String master, boolean fallback, boolean replicate, long partitionBlockSize,
    long batchBytes, long bufferBytes, long requestBytes, int maxInFlight, int retries, long rpcTimeoutMs,
    boolean sealAtStageEnd, PartitionPrefetch.Settings readAhead, Map<String, String> strata) {

  /** One key: name, default, doc (the docs list them; see docs/SHUFFLE.md). */
  public record Key<T>(String name, String defaultValue, String doc, Function<String, T> parser) {
    T get(SparkConf conf) {
      String v = conf.get(name, defaultValue);
      try {
        return parser.apply(v);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("Bad value '" + v + "' for " + name + ": " + e.getMessage() + " (" + doc
            + ")", e);
      }
    }
  }

  public static final Key<String> MASTER = new Key<>("spark.strata.master", "",
      "host:port of the Strata master (or a comma-separated list, or zk@host:port)", s -> s);
  public static final Key<Boolean> FALLBACK = new Key<>("spark.strata.shuffle.fallback.enabled", "true",
      "use Spark's sort shuffle for a shuffle registered while Strata is unreachable", Boolean::parseBoolean);
  public static final Key<Boolean> REPLICATE = new Key<>("spark.strata.shuffle.replicate", "true",
      "give every partition file a replica on a second worker (when there are two)", Boolean::parseBoolean);
  public static final Key<Long> PARTITION_BLOCK_SIZE = new Key<>("spark.strata.shuffle.partition.block.size",
      "64MB", "block size of partition files", ValueParser::parseBytes);
  public static final Key<Long> BATCH_SIZE = new Key<>("spark.strata.shuffle.writer.batch.size", "256KB",
      "serialized bytes a partition's buffer holds before it is compressed and pushed as one batch",
      ValueParser::parseBytes);
  public static final Key<Long> BUFFER_MAX = new Key<>("spark.strata.shuffle.writer.buffer.max", "64MB",
      "serialized bytes all of a map task's partition buffers hold at most; past it the largest is pushed",
      ValueParser::parseBytes);
  public static final Key<Long> REQUEST_SIZE = new Key<>("spark.strata.shuffle.push.request.size", "1MB",
      "batch bytes gathered for one worker before they go in one push request", ValueParser::parseBytes);
  public static final Key<Integer> INFLIGHT_MAX = new Key<>("spark.strata.shuffle.push.inflight.max", "16",
      "push requests a map task has outstanding at most", Integer::parseInt);
  public static final Key<Integer> RETRIES = new Key<>("spark.strata.shuffle.push.retries", "3",
      "retries of a failed push to the same location before its partitions are revived elsewhere",
      Integer::parseInt);
  public static final Key<Long> RPC_TIMEOUT = new Key<>("spark.strata.shuffle.rpc.timeout", "30s",
      "deadline of one push, open or drop call to a worker (a seal gets ten times it)",
      s -> ValueParser.parseDuration(s).toMillis());

  public static final Key<Boolean> SEAL_AT_STAGE_END = new Key<>("spark.strata.shuffle.seal.atStageEnd", "true",
      "start sealing a shuffle's partition files when its map stage ends (false: when its first reader asks)",
      Boolean::parseBoolean);

  public static final Key<Integer> READ_AHEAD_PARTITIONS = new Key<>("spark.strata.shuffle.read.ahead.partitions",
      "16", "partitions after its own whose small sealed files a reduce task's executor reads ahead, once the "
      + "shuffle is sealed whole (0: none)", Integer::parseInt);
  public static final Key<Long> READ_AHEAD_MAX = new Key<>("spark.strata.shuffle.read.ahead.max", "32MB",
      "bytes of partition files an executor holds read ahead at most", ValueParser::parseBytes);
  public static final Key<Long> READ_AHEAD_FILE_MAX = new Key<>("spark.strata.shuffle.read.ahead.file.max", "1MB",
      "largest partition file read ahead (a larger one its reader opens and streams itself)", ValueParser::parseBytes);

  public static final List<Key<?>> ALL = List.of(MASTER, FALLBACK, REPLICATE, PARTITION_BLOCK_SIZE, BATCH_SIZE,
      BUFFER_MAX, REQUEST_SIZE, INFLIGHT_MAX, RETRIES, RPC_TIMEOUT, SEAL_AT_STAGE_END, READ_AHEAD_PARTITIONS,
      READ_AHEAD_MAX, READ_AHEAD_FILE_MAX);

  private static final String PASS_THROUGH = "spark.strata.conf.";

  /** Spark's switch to its old fetch protocol, which names map outputs by partition index (not by attempt). */
  static final String OLD_FETCH_PROTOCOL = "spark.shuffle.useOldFetchProtocol";

  public static StrataShuffleConf from(SparkConf conf) {
    Map<String, String> strata = new HashMap<>();
    for (scala.Tuple2<String, String> kv : conf.getAllWithPrefix(PASS_THROUGH)) {
      strata.put(kv._1(), kv._2());
    }
    StrataShuffleConf c = new StrataShuffleConf(MASTER.get(conf), FALLBACK.get(conf), REPLICATE.get(conf),
        PARTITION_BLOCK_SIZE.get(conf), BATCH_SIZE.get(conf), BUFFER_MAX.get(conf), REQUEST_SIZE.get(conf),
        INFLIGHT_MAX.get(conf), RETRIES.get(conf), RPC_TIMEOUT.get(conf), SEAL_AT_STAGE_END.get(conf),
        new PartitionPrefetch.Settings(READ_AHEAD_PARTITIONS.get(conf), READ_AHEAD_MAX.get(conf),
            READ_AHEAD_FILE_MAX.get(conf)), Map.copyOf(strata));
    if (c.master.isEmpty()) {
      throw new IllegalArgumentException(MASTER.name() + " is not set: " + MASTER.doc());
    }
    if (conf.getBoolean(OLD_FETCH_PROTOCOL, false)) {
      // With it Spark names a map output by its partition index, so a map's attempts share one id: readers could
      // not keep only the successful attempt's batches, and a retried map with other batches would be mixed in.
      throw new IllegalArgumentException(OLD_FETCH_PROTOCOL + "=true is not supported by StrataShuffleManager: it "
          + "gives every attempt of a map the same id, which Strata's readers need to tell attempts apart. Unset it "
          + "(it is for Spark's external shuffle service, which Strata's shuffle does not use)");
    }
    if (c.maxInFlight < 1 || c.retries < 0 || c.batchBytes < 1 || c.bufferBytes < c.batchBytes) {
      throw new IllegalArgumentException("Bad Strata shuffle settings: " + INFLIGHT_MAX.name() + " >= 1, "
          + RETRIES.name() + " >= 0, " + BATCH_SIZE.name() + " >= 1 and <= " + BUFFER_MAX.name() + " are needed");
    }
    if (c.readAhead.ahead() < 0 || c.readAhead.maxBytes() < 0 || c.readAhead.fileMaxBytes() < 0
        || c.readAhead.fileMaxBytes() > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("Bad Strata shuffle settings: " + READ_AHEAD_PARTITIONS.name() + ", "
          + READ_AHEAD_MAX.name() + " >= 0 and " + READ_AHEAD_FILE_MAX.name() + " between 0 and 2GB are needed");
    }
    return c;
  }

  /** The Strata client configuration: the master address and the passed-through keys. */
  public StrataConf clientConf() {
    Map<String, String> m = new HashMap<>(strata);
    if (master.startsWith("zk@") || master.contains(",")) {
      m.put(master.startsWith("zk@") ? CommonKeys.ZOOKEEPER_ADDRESS.name() : CommonKeys.MASTER_RPC_ADDRESSES.name(),
          master.startsWith("zk@") ? master.substring(3) : master);
    } else {
      int i = master.lastIndexOf(':');
      if (i <= 0) {
        throw new IllegalArgumentException(MASTER.name() + "=" + master + ": expected host:port");
      }
      m.put(CommonKeys.MASTER_HOSTNAME.name(), master.substring(0, i));
      m.put(CommonKeys.MASTER_RPC_PORT.name(), master.substring(i + 1));
    }
    return StrataConf.of(m);
  }
}
