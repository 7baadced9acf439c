package io.strata.shuffle;

import io.strata.client.FileSystem;
import io.strata.common.conf.CommonKeys;
import java.io.IOException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleManager;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.apache.spark.util.RpcUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spark's {@code spark.shuffle.manager=io.strata.shuffle.StrataShuffleManager} (Spark 4.0.1, Scala 2.13):
 * map tasks push their records per reduce partition to Strata workers, which append them to one file per
 * partition (see docs/SHUFFLE.md). On the driver it registers each shuffle with a {@link ShuffleLifecycle}
 * and serves executors through a {@link DriverEndpoint}; a shuffle registered while Strata is unreachable
 * runs on Spark's sort shuffle instead ({@code spark.strata.shuffle.fallback.enabled}), as do its writers
 * and readers (chosen by handle type). Its files go when Spark unregisters the shuffle, and the
 * application's directory when the manager stops on the driver.
 *
 * <p>One per Spark process (made by SparkEnv); thread-safe: the Strata client, channels and retry pool are
 * made once, lazily (SparkEnv is not ready when the manager is constructed), with no lock held while they
 * are made (the client calls the master, the driver reference asks the driver).
 */
public final class StrataShuffleManager implements ShuffleManager {
  private static final Logger LOG = LoggerFactory.getLogger(StrataShuffleManager.class);

  private final SparkConf sparkConf;
  private final boolean isDriver;
  private final StrataShuffleConf conf;
  private final SortShuffleManager sort;
  private final Set<Integer> strataShuffles = ConcurrentHashMap.newKeySet();
  /** The Strata client, channels and retry pool: made once, on first use, outside this monitor. */
  private CompletableFuture<Clients> clients;
  private ShuffleLifecycle lifecycle;
  private DriverEndpoint endpoint;
  private CompletableFuture<RpcEndpointRef> driver;
  /** This driver's key of its application in Strata ({@link #appKey}); set at the first registration. */
  private String appId;
  /** Whether a shuffle was registered with Strata: the application's files are removed at stop then. */
  private boolean registered;

  public StrataShuffleManager(SparkConf sparkConf, boolean isDriver) {
    this.sparkConf = sparkConf;
    this.isDriver = isDriver;
    this.conf = StrataShuffleConf.from(sparkConf);
    this.sort = new SortShuffleManager(sparkConf);
  }

  public StrataShuffleManager(SparkConf sparkConf) {
    this(sparkConf, SparkEnv.get() == null || "driver".equals(SparkEnv.get().executorId()));
  }

  private record Clients(FileSystem fs, ShuffleChannels channels, ScheduledExecutorService retryPool,
      PartitionPrefetch readAhead) {}

  /**
   * Makes {@code make}'s value once: the first caller makes it with no lock held (it may call the master or
   * the driver), later ones wait for it without a lock; a failure is thrown to the callers waiting for it, and
   * the next call tries again.
   */
  private <T> T once(java.util.function.Supplier<CompletableFuture<T>> get,
      java.util.function.Consumer<CompletableFuture<T>> set, java.util.concurrent.Callable<T> make) {
    CompletableFuture<T> f;
    boolean mine = false;
    synchronized (this) {
      f = get.get();
      if (f == null) {
        f = new CompletableFuture<>();
        set.accept(f);
        mine = true;
      }
    }
    if (mine) {
      try {
        f.complete(make.call());
      } catch (Exception | Error e) {
        CompletableFuture<T> failed = f;
        synchronized (this) {
          if (get.get() == failed) {
            set.accept(null);
          }
        }
        f.completeExceptionally(e);
      }
    }
    try {
      return f.join();
    } catch (java.util.concurrent.CompletionException e) {
      Throwable c = e.getCause();
      throw c instanceof RuntimeException re ? re : new IllegalStateException(c);
    }
  }

  /** Threads of an executor's push retry pool, at most (made as needed, let go after a minute idle). */
  static final int RETRY_THREADS = 16;

  /**
   * The pool on which an executor's pushers resend after BACK_OFF and revive partitions after failures. A revive
   * waits for the driver (which places new files), a resend for the pusher's room in flight, so each task's
   * retries may hold a thread a while: enough threads that a few tasks' revives, waiting on the driver, leave the
   * other tasks' retries running (with two, two revives stalled every pusher of the executor).
   */
  static java.util.concurrent.ScheduledThreadPoolExecutor newRetryPool() {
    java.util.concurrent.ScheduledThreadPoolExecutor pool = new java.util.concurrent.ScheduledThreadPoolExecutor(
        RETRY_THREADS, r -> {
          Thread t = new Thread(r, "strata-shuffle-push-retry");
          t.setDaemon(true);
          return t;
        });
    pool.setKeepAliveTime(60, java.util.concurrent.TimeUnit.SECONDS);
    pool.allowCoreThreadTimeOut(true);
    pool.setRemoveOnCancelPolicy(true);
    return pool;
  }

  private Clients clients() {
    return once(() -> clients, f -> clients = f, () -> {
      FileSystem fs = FileSystem.Factory.get(conf.clientConf());
      ScheduledExecutorService retryPool = newRetryPool();
      // Two threads: files read ahead are small, each read mostly a round trip to a worker. A task is a half
      // window of reads; past 64 queued, what is planned is left to its readers.
      java.util.concurrent.ExecutorService readPool = new java.util.concurrent.ThreadPoolExecutor(2, 2, 0,
          java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.ArrayBlockingQueue<>(64), r -> {
            Thread t = new Thread(r, "strata-shuffle-read-ahead");
            t.setDaemon(true);
            return t;
          });
      return new Clients(fs, new ShuffleChannels(fs.conf().get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE)), retryPool,
          new PartitionPrefetch(fs, conf.readAhead(), readPool));
    });
  }

  FileSystem fs() {
    return clients().fs();
  }

  ShuffleChannels channels() {
    return clients().channels();
  }

  ScheduledExecutorService retryPool() {
    return clients().retryPool();
  }

  private volatile BatchCodecs batchCodecs;

  /** The codecs map tasks compress batches with (made once: Spark's configuration does not change). */
  BatchCodecs batchCodecs() {
    BatchCodecs c = batchCodecs;
    if (c == null) {
      c = new BatchCodecs(SparkEnv.get().conf()); // made twice at worst, by tasks starting together
      batchCodecs = c;
    }
    return c;
  }

  /** This process's read-ahead of small partition files. */
  PartitionPrefetch readAhead() {
    return clients().readAhead();
  }

  StrataShuffleConf conf() {
    return conf;
  }

  ShuffleLifecycle lifecycle() {
    Clients c = clients(); // before the monitor: it may call the master
    synchronized (this) {
      return lifecycleLocked(c);
    }
  }

  private ShuffleLifecycle lifecycleLocked(Clients c) {
    if (lifecycle == null) {
      lifecycle = new ShuffleLifecycle(c.fs(), c.channels(), new ShuffleLifecycle.Settings(conf.partitionBlockSize(),
          conf.replicate(), conf.rpcTimeoutMs(), 16));
      endpoint = new DriverEndpoint(SparkEnv.get().rpcEnv(), lifecycle);
      SparkEnv.get().rpcEnv().setupEndpoint(DriverEndpoint.NAME, endpoint);
    }
    return lifecycle;
  }

  /** The driver's endpoint, from any process (in local mode, the driver's own). */
  RpcEndpointRef driver() {
    // Looking the endpoint up asks the driver: made once, with no lock held.
    return once(() -> driver, f -> driver = f,
        () -> RpcUtils.makeDriverRef(DriverEndpoint.NAME, SparkEnv.get().conf(), SparkEnv.get().rpcEnv()));
  }

  /** A whole shuffle's seal an executor got, and the map output epoch it got it in. */
  private record KnownSeal(long epoch, DriverEndpoint.Sealed sealed) {}

  /** Shuffles' whole seals this process got from the driver, the most recently used last; at most {@link #KNOWN_SEALS}. */
  private final Map<Integer, KnownSeal> knownSeals = new java.util.LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Integer, KnownSeal> eldest) {
      return size() > KNOWN_SEALS;
    }
  };
  static final int KNOWN_SEALS = 16;

  /**
   * The sealed files of partitions [start, end) of a shuffle (the driver's answer, {@link DriverEndpoint}). An answer
   * holding the whole shuffle is kept and given to this process's later readers of the shuffle without asking, for
   * as long as Spark's map output epoch stays the same: a map stage that runs again (a lost partition, a fetch
   * failure) ends in a new epoch, and its readers ask again and get the new files. Readers ask side by side (one
   * waiting for another's answer would wait twice while the seal runs, as answers then hold only the asker's
   * partitions), so an executor may fetch the whole answer once per task it runs at that moment.
   */
  DriverEndpoint.Sealed sealed(int shuffleId, int start, int end) {
    long epoch = mapOutputEpoch();
    synchronized (knownSeals) {
      KnownSeal k = knownSeals.get(shuffleId);
      if (k != null && k.epoch() == epoch) {
        return k.sealed();
      }
    }
    DriverEndpoint.Sealed got = ask(new DriverEndpoint.GetSealed(shuffleId, start, end), DriverEndpoint.Sealed.class);
    if (got.whole()) {
      synchronized (knownSeals) {
        knownSeals.put(shuffleId, new KnownSeal(epoch, got));
      }
    }
    return got;
  }

  /** Forgets a shuffle's kept seal (a reader found it did not hold what Spark's map outputs say). */
  void forgetSeal(int shuffleId) {
    synchronized (knownSeals) {
      knownSeals.remove(shuffleId);
    }
    Clients c = madeClients();
    if (c != null) {
      c.readAhead().forget(shuffleId);
    }
  }

  /** The clients if they were made, without making them. */
  private Clients madeClients() {
    CompletableFuture<Clients> made;
    synchronized (this) {
      made = clients;
    }
    return made == null ? null : made.getNow(null);
  }

  /**
   * Spark's map output epoch in this process: it grows when map outputs are lost and when a map stage ends (so
   * after every map stage that ran again); an executor takes each task's epoch before running it.
   */
  private static long mapOutputEpoch() {
    org.apache.spark.MapOutputTracker t = SparkEnv.get().mapOutputTracker();
    synchronized (t.epochLock()) {
      return t.epoch();
    }
  }

  /** Tries of an ask the driver answers busy ({@link DriverEndpoint.Busy}), and the first pause between them. */
  static final int BUSY_TRIES = 8;
  static final long BUSY_PAUSE_MS = 100;

  /** Asks the driver's endpoint; while it answers busy, asks again after a growing pause (about 13 s in all). */
  <T> T ask(Object message, Class<T> reply) {
    return whileBusy(() -> driver().askSync(message, scala.reflect.ClassTag$.MODULE$.apply(reply)), BUSY_TRIES,
        BUSY_PAUSE_MS);
  }

  /**
   * {@code ask}'s answer; an answer of {@link DriverEndpoint.Busy} (anywhere in the cause chain: Spark wraps what the
   * endpoint sends) is asked again after a pause that starts at {@code firstPauseMs} and doubles up to 4 s (each
   * between half and all of it, so many askers spread out), {@code tries} times in all; then, or on any other
   * failure, the failure is thrown.
   */
  static <T> T whileBusy(java.util.function.Supplier<T> ask, int tries, long firstPauseMs) {
    for (int i = 1; ; i++) {
      try {
        return ask.get();
      } catch (Exception e) { // Spark's RPC throws SparkException, checked in Java, from Scala
        if (i >= tries || !busy(e)) {
          throw StrataShuffleReader.sneaky(e);
        }
        long pause = Math.min(4_000, firstPauseMs << Math.min(i - 1, 20));
        try {
          Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextLong(pause / 2, pause + 1));
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw StrataShuffleReader.sneaky(e);
        }
      }
    }
  }

  private static boolean busy(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof DriverEndpoint.Busy) {
        return true;
      }
    }
    return false;
  }

  /**
   * This driver's key of its application in Strata: the directory {@code /.shuffle/<key>} and the workers' app id.
   * Spark's application id alone is not unique (a YARN attempt after a failed one has the same, and so do two
   * applications given one {@code spark.app.id}): shared, the second would find the first's files, and the first to
   * end would delete the other's. So the key is the id, the attempt id when there is one, and a random part made
   * once per driver. Null before this driver registered a shuffle with Strata.
   */
  public synchronized String appKey() {
    return appId;
  }

  private synchronized String appKeyFor(org.apache.spark.SparkContext sc) {
    if (appId == null) {
      String attempt = sc.applicationAttemptId().isDefined() ? "_" + sc.applicationAttemptId().get() : "";
      String suffix = attempt + "-" + String.format("%08x", new java.security.SecureRandom().nextInt());
      String id = sparkConf.getAppId();
      appId = id.substring(0, Math.min(id.length(), 128 - suffix.length())) + suffix; // AppIds: at most 128
    }
    return appId;
  }

  @Override
  public <K, V, C> ShuffleHandle registerShuffle(int shuffleId, ShuffleDependency<K, V, C> dependency) {
    String app = appKeyFor(dependency.rdd().context());
    int maps = dependency.rdd().partitions().length;
    int partitions = dependency.partitioner().numPartitions();
    try {
      java.util.List<PartitionLocation> locs = lifecycle().register(app, shuffleId, partitions);
      synchronized (this) {
        registered = true;
      }
      strataShuffles.add(shuffleId);
      if (conf.sealAtStageEnd()) {
        listenForStageEnds(dependency.rdd().context());
      }
      return new StrataShuffleHandle<>(shuffleId, dependency, app, maps, locs.toArray(new PartitionLocation[0]));
    } catch (IOException | RuntimeException e) {
      if (!conf.fallback()) {
        throw new IllegalStateException("Cannot register shuffle " + shuffleId + " with Strata at "
            + conf.master() + ": " + e.getMessage(), e);
      }
      LOG.warn("Shuffle {} runs on Spark's sort shuffle: Strata at {} is unreachable ({})", shuffleId,
          conf.master(), e.toString());
      return sort.registerShuffle(shuffleId, dependency);
    }
  }

  /** Whether the driver's {@link StageEnds} listener is added (once per manager). Guarded by this. */
  private boolean listening;

  private void listenForStageEnds(org.apache.spark.SparkContext sc) {
    synchronized (this) {
      if (listening) {
        return;
      }
      listening = true;
    }
    sc.addSparkListener(new StageEnds());
  }

  /**
   * On the driver: starts the seal of a Strata shuffle as soon as its map stage ends with every map output
   * available, so the seal runs while Spark schedules the reduce stage and launches its tasks, instead of from the
   * first reader's ask ({@code spark.strata.shuffle.seal.atStageEnd}). Runs on Spark's listener bus thread and never
   * blocks it: the round goes to the seal pool, or is left to the first reader when no seal thread is free.
   */
  private final class StageEnds extends org.apache.spark.scheduler.SparkListener {
    @Override
    public void onStageCompleted(org.apache.spark.scheduler.SparkListenerStageCompleted event) {
      org.apache.spark.scheduler.StageInfo info = event.stageInfo();
      if (info.failureReason().isDefined() || info.shuffleDepId().isEmpty()) {
        return;
      }
      int shuffleId = (Integer) info.shuffleDepId().get();
      if (!strataShuffles.contains(shuffleId) || !everyMapOutputAvailable(shuffleId)) {
        return; // not ours; or the stage runs again for what is missing, and its maps still push
      }
      ShuffleLifecycle l;
      synchronized (StrataShuffleManager.this) {
        l = lifecycle;
      }
      if (l != null) {
        l.sealAhead(shuffleId);
      }
    }
  }

  private static boolean everyMapOutputAvailable(int shuffleId) {
    if (!(SparkEnv.get().mapOutputTracker() instanceof org.apache.spark.MapOutputTrackerMaster t)) {
      return false;
    }
    scala.Option<scala.collection.immutable.Seq<Object>> missing = t.findMissingPartitions(shuffleId);
    return missing.isDefined() && missing.get().isEmpty();
  }

  @Override
  public <K, V> ShuffleWriter<K, V> getWriter(ShuffleHandle handle, long mapId, TaskContext context,
      ShuffleWriteMetricsReporter metrics) {
    if (handle instanceof StrataShuffleHandle<?, ?, ?> h) {
      @SuppressWarnings("unchecked")
      StrataShuffleHandle<K, V, ?> sh = (StrataShuffleHandle<K, V, ?>) h;
      return new StrataShuffleWriter<>(this, sh, mapId, context, metrics);
    }
    return sort.getWriter(handle, mapId, context, metrics);
  }

  @Override
  public <K, C> ShuffleReader<K, C> getReader(ShuffleHandle handle, int startMapIndex, int endMapIndex,
      int startPartition, int endPartition, TaskContext context, ShuffleReadMetricsReporter metrics) {
    if (handle instanceof StrataShuffleHandle<?, ?, ?> h) {
      @SuppressWarnings("unchecked")
      StrataShuffleHandle<K, ?, C> sh = (StrataShuffleHandle<K, ?, C>) h;
      return new StrataShuffleReader<>(this, sh, startMapIndex, endMapIndex, startPartition, endPartition,
          context, metrics);
    }
    return sort.getReader(handle, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics);
  }

  @Override
  public boolean unregisterShuffle(int shuffleId) {
    forgetSeal(shuffleId);
    if (strataShuffles.remove(shuffleId)) {
      ShuffleLifecycle l;
      DriverEndpoint e;
      synchronized (this) {
        l = lifecycle;
        e = endpoint;
      }
      if (l != null) {
        l.unregister(shuffleId);
        e.forget(shuffleId);
      }
      return true;
    }
    return sort.unregisterShuffle(shuffleId);
  }

  @Override
  public ShuffleBlockResolver shuffleBlockResolver() {
    return sort.shuffleBlockResolver();
  }

  @Override
  public void stop() {
    ShuffleLifecycle l;
    String app;
    synchronized (this) {
      l = lifecycle;
      app = registered ? appId : null;
    }
    if (l != null && app != null) {
      l.removeApp(app);
      l.close();
    }
    Clients c = madeClients(); // one being made still: its process is going anyway
    if (c != null) {
      c.readAhead().close();
      c.retryPool().shutdownNow();
      c.channels().close();
      try {
        c.fs().close();
      } catch (IOException e) {
        LOG.debug("Closing the Strata client", e);
      }
    }
    sort.stop();
  }

  boolean isDriver() {
    return isDriver;
  }
}
