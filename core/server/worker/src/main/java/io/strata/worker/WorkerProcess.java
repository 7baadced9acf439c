package io.strata.worker;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.PropertyKey;
import io.strata.common.conf.StrataConf;
import io.strata.common.conf.ValueParser;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.net.WorkerAddress;
import io.strata.server.GrpcServer;
import io.strata.server.ufs.UfsManager;
import io.grpc.ServerInterceptors;
import io.strata.worker.rpc.BlockWorkerService;
import io.strata.worker.rpc.IdleWatch;
import io.strata.worker.rpc.StreamLimits;
import io.strata.worker.store.Allocator;
import io.strata.worker.store.BlockAnnotator;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.TierManager;
import io.strata.worker.store.TierSpec;
import io.strata.worker.store.TieredBlockStore;
import io.strata.worker.ufs.MasterClient;
import io.strata.worker.ufs.WorkerUfs;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running worker: its tiered block store with its tier manager, its data server, its master sync, and
 * its under file system layer ({@link WorkerUfs}) with the one {@link UfsManager} and the executors it
 * runs on (UFS reads, background caching with a bounded queue, persisting), all closed by
 * {@link #close()}. {@link #start()} once, {@link #close()} once; several may run in one JVM with their
 * own ports and dirs. When every storage dir has failed the worker runs its fatal handler (by default it closes
 * itself; {@code WorkerMain} exits the process). Thread-safe.
 */
public final class WorkerProcess implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerProcess.class);

  private final StrataConf conf;
  private final Clock clock;
  private volatile Runnable fatalHandler;
  /** How the store makes files durable and unlinks them ({@link #durability}); the real fsync by default. */
  private io.strata.worker.store.Durability durability = io.strata.worker.store.Durability.FSYNC;
  private GrpcServer server;
  private io.strata.common.master.MasterConnection masterConnection;
  private ScheduledExecutorService background;
  private volatile MasterSync sync;
  private UfsManager ufsManager;
  private ExecutorService ufsIo;
  private ThreadPoolExecutor asyncCache;
  private ExecutorService persist;
  private ScheduledExecutorService rpcTimers;
  private StreamLimits streamLimits;
  private WorkerUfs ufs;
  private TieredBlockStore store;
  private TierManager tierManager;
  private io.strata.worker.shortcircuit.ShortCircuitServer shortCircuit;
  private io.strata.worker.transfer.TransferServer transfer;
  private io.strata.server.web.WebServer web;
  private BlockWorkerService dataService;
  private io.strata.worker.shuffle.ShuffleWorker shuffle;
  private int port = -1;
  private boolean closed;

  public WorkerProcess(StrataConf conf, Clock clock) {
    this.conf = conf;
    this.clock = clock;
    this.fatalHandler = () -> new Thread(this::close, "worker-fatal-close").start();
  }

  /** What to do when every storage dir has failed (called once, from a store thread). */
  public WorkerProcess onFatal(Runnable handler) {
    this.fatalHandler = handler;
    return this;
  }

  /**
   * How the block store syncs and unlinks its files (the real fsync and unlink by default); set before {@link #start}.
   * Tests pass one that holds a step (an unlink on a dying disk) to see what else goes on meanwhile.
   */
  public WorkerProcess durability(io.strata.worker.store.Durability d) {
    this.durability = d;
    return this;
  }

  /** The tiers the configuration describes, with the port put into dir names. */
  static List<TierSpec> tierSpecs(StrataConf conf, int port) {
    List<TierSpec> specs = new ArrayList<>();
    for (int n = 0; n < WorkerKeys.MAX_TIERS; n++) {
      if (n > 0 && !conf.isSet(WorkerKeys.TIER_DIRS.get(n))) {
        for (int m = n + 1; m < WorkerKeys.MAX_TIERS; m++) {
          if (conf.isSet(WorkerKeys.TIER_DIRS.get(m))) {
            throw new IllegalArgumentException(WorkerKeys.TIER_DIRS.get(m).name() + " is set but "
                + WorkerKeys.TIER_DIRS.get(n).name() + " is not: tiers are numbered from 0 without gaps");
          }
        }
        break;
      }
      List<String> dirs = conf.get(WorkerKeys.TIER_DIRS.get(n));
      List<String> quotas = conf.get(WorkerKeys.TIER_QUOTA.get(n));
      if (dirs.isEmpty()) {
        throw new IllegalArgumentException(WorkerKeys.TIER_DIRS.get(n).name() + " names no dir");
      }
      if (quotas.size() != 1 && quotas.size() != dirs.size()) {
        throw new IllegalArgumentException(WorkerKeys.TIER_QUOTA.get(n).name() + " has " + quotas.size()
            + " sizes for " + dirs.size() + " dirs: give one size for all, or one per dir");
      }
      List<TierSpec.Dir> out = new ArrayList<>();
      for (int i = 0; i < dirs.size(); i++) {
        long quota = ValueParser.parseBytes(quotas.get(quotas.size() == 1 ? 0 : i));
        if (quota <= 0) {
          throw new IllegalArgumentException(WorkerKeys.TIER_QUOTA.get(n).name() + ": quota of " + dirs.get(i)
              + " must be positive");
        }
        out.add(new TierSpec.Dir(Path.of(dirs.get(i).replace("${strata.worker.rpc.port}", Integer.toString(port))),
            quota));
      }
      String alias = conf.get(WorkerKeys.TIER_ALIAS.get(n));
      PropertyKey<Boolean> fsync = WorkerKeys.TIER_FSYNC.get(n);
      specs.add(new TierSpec(alias, out, conf.isSet(fsync) ? conf.get(fsync) : TierSpec.defaultFsync(alias)));
    }
    return specs;
  }

  public WorkerProcess start() throws IOException {
    // Resolved once, before anything starts, so that a failing locality script leaves nothing to clean up.
    io.strata.common.net.TieredIdentity identity = io.strata.common.net.TieredIdentity.resolve(
        conf.get(WorkerKeys.LOCALITY_NODE), conf.get(WorkerKeys.LOCALITY_RACK), conf.get(WorkerKeys.LOCALITY_SCRIPT),
        conf.get(WorkerKeys.LOCALITY_SCRIPT_TIMEOUT), WorkerKeys.LOCALITY_SCRIPT.name(), conf.get(WorkerKeys.HOSTNAME));
    int wantPort = conf.get(WorkerKeys.RPC_PORT);
    String bind = conf.get(WorkerKeys.BIND_HOST);
    long maxMessage = conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE);
    int maxChunk = (int) Math.min(conf.get(WorkerKeys.READ_CHUNK_SIZE_MAX), maxMessage - 1024);
    // The data server binds first, so that port 0 resolves before the store dir names need it.
    DeferredStore deferred = new DeferredStore();
    ufsManager = UfsManager.fromConf(conf);
    int ufsThreads = conf.get(WorkerKeys.UFS_IO_THREADS);
    ufsIo = new ThreadPoolExecutor(ufsThreads, ufsThreads, 0, TimeUnit.MILLISECONDS,
        new ArrayBlockingQueue<>(conf.get(WorkerKeys.UFS_IO_QUEUE_MAX)), GrpcServer.namedDaemon("worker-ufs-io"));
    int cacheThreads = conf.get(WorkerKeys.ASYNC_CACHE_THREADS);
    asyncCache = new ThreadPoolExecutor(cacheThreads, cacheThreads, 0, TimeUnit.MILLISECONDS,
        new ArrayBlockingQueue<>(conf.get(WorkerKeys.ASYNC_CACHE_QUEUE_MAX)),
        GrpcServer.namedDaemon("worker-async-cache"));
    int persistThreads = conf.get(WorkerKeys.PERSIST_THREADS);
    // Bounded: commands the master sent again after its persist timeout, or past its in-flight cap, are refused
    // (reported failed, sent again later) rather than queued without end.
    persist = new ThreadPoolExecutor(persistThreads, persistThreads, 0, TimeUnit.MILLISECONDS,
        new ArrayBlockingQueue<>(conf.get(WorkerKeys.PERSIST_QUEUE_MAX)), GrpcServer.namedDaemon("worker-persist"));
    ufs = new WorkerUfs(deferred, new SyncMasterClient(), ufsManager, ufsIo, asyncCache, persist,
        new WorkerUfs.Settings(Math.min(maxChunk, 1 << 20), conf.get(WorkerKeys.UFS_READ_STALL_TIMEOUT).toMillis(),
            maxMessage, conf.get(WorkerKeys.PEER_READ_TIMEOUT).toMillis()));
    rpcTimers = Executors.newSingleThreadScheduledExecutor(GrpcServer.namedDaemon("worker-rpc-timers"));
    IdleWatch stallWatch = new IdleWatch(rpcTimers, conf.get(WorkerKeys.READ_STREAM_STALL_TIMEOUT).toMillis(),
        WorkerKeys.READ_STREAM_STALL_TIMEOUT.name());
    IdleWatch ufsWriteWatch = new IdleWatch(rpcTimers, conf.get(WorkerKeys.UFS_WRITE_IDLE_TIMEOUT).toMillis(),
        WorkerKeys.UFS_WRITE_IDLE_TIMEOUT.name());
    streamLimits = new StreamLimits(conf.get(WorkerKeys.STREAMS_MAX), conf.get(WorkerKeys.STREAMS_PER_CLIENT_MAX));
    shuffle = new io.strata.worker.shuffle.ShuffleWorker(conf, deferred, new io.strata.worker.rpc.Committer() {
      @Override
      public void commit(long id, long len, String tier) throws StrataException {
        sync.commitBlock(id, len, tier);
      }

      @Override
      public void commitReplacing(long id, long len, String tier, String replaces) throws StrataException {
        sync.commitReplacing(id, len, tier, replaces); // a replica sealed in place of its failed primary
      }

      @Override
      public java.util.List<Exception> commitAll(java.util.List<Commit> commits) {
        return sync.commitAll(commits); // a shuffle seal's blocks, in one call
      }
    }, ufs, "worker-" + wantPort);
    server = new GrpcServer("worker", bind, wantPort, maxMessage, GrpcServer.Limits.from(conf),
        List.of(shuffle.service().bindService(), ServerInterceptors.intercept(dataService = new BlockWorkerService(deferred,
            (id, len, tier) -> sync.commitBlock(id, len, tier), ufs, maxChunk,
            conf.get(WorkerKeys.WRITE_SPACE_WAIT_TIMEOUT).toMillis(), conf.get(WorkerKeys.WRITE_SPACE_WAITERS_MAX),
            stallWatch, ufsWriteWatch,
            conf.get(WorkerKeys.NETWORK_ZEROCOPY_ENABLED)), streamLimits)));
    try {
      server.start();
    } catch (IOException e) {
      throw GrpcServer.cannotListen("worker", bind, wantPort, WorkerKeys.BIND_HOST.name(), WorkerKeys.RPC_PORT.name(),
          e);
    }
    port = server.port();
    int transferPort = startTransfer(bind, deferred, maxChunk);
    try {
      // Bound before the address is made, so the worker registers its actual web port; pages come later.
      web = io.strata.server.web.WebServer.start("worker-" + port, bind,
          io.strata.server.web.WebServer.PortChoice.of(conf.get(WorkerKeys.WEB_PORT), port),
          io.strata.server.web.WebServer.HostCheck.of(conf.get(CommonKeys.WEB_ALLOWED_HOSTS), bind,
              conf.get(WorkerKeys.HOSTNAME)));
    } catch (IOException e) {
      close();
      throw e;
    }
    WorkerAddress address = new WorkerAddress(conf.get(WorkerKeys.HOSTNAME), port, identity, transferPort,
        web.port());
    masterConnection = new io.strata.common.master.MasterConnection(conf);
    sync = new MasterSync(masterConnection, address, conf.get(CommonKeys.RPC_TIMEOUT).toMillis(), clock,
        () -> fatalHandler.run(), conf.get(CommonKeys.WORKER_SECRET), conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE));
    try {
      store = new TieredBlockStore(tierSpecs(conf, port), Allocator.create(conf.get(WorkerKeys.ALLOCATOR)),
          BlockAnnotator.create(conf.get(WorkerKeys.ANNOTATOR)), sync, clock, durability);
      store.limitWrites(conf.get(WorkerKeys.WRITE_BLOCKS_MAX), WorkerKeys.WRITE_BLOCKS_MAX.name());
      tierManager = new TierManager(store, conf.get(WorkerKeys.RESERVER_HIGH_WATERMARK),
          conf.get(WorkerKeys.RESERVER_LOW_WATERMARK), conf.get(WorkerKeys.TEMP_BLOCK_TIMEOUT).toMillis(),
          conf.get(WorkerKeys.TIER_ALIGN_MOVES));
    } catch (RuntimeException e) {
      close();
      throw new IOException("Cannot start the worker's block store: " + e.getMessage(), e);
    }
    sync.attach(store, ufs);
    sync.onAbandoned(ids -> shuffle.store().abandoned(ids));
    BlockWorkerService data = dataService;
    // On the UFS pool, never the heartbeat thread: ending a write closes and deletes its UFS file (network I/O that
    // may hang). A full pool skips it: the master names the file in its replies for a while yet.
    ExecutorService aborts = ufsIo;
    sync.onRecovered(ids -> {
      try {
        aborts.execute(() -> data.abortUfsWritesOf(ids));
      } catch (java.util.concurrent.RejectedExecutionException busy) {
        LOG.debug("Ending the UFS writes of {} recovered files waits for the next heartbeat reply", ids.size());
      }
    });
    BlockStore heldBy = store;
    sync.heldFiles(() -> {
      // Shuffle partition files, and the files of the clients' held blocks (short-circuit and streamed writes, whose
      // only other end is their file's lease: a file that never existed has none).
      java.util.Set<Long> held = new java.util.HashSet<>(shuffle.store().openFileIds());
      held.addAll(heldBy.heldFileIds());
      return held;
    }, conf.get(WorkerKeys.HELD_FILES_CHECK_INTERVAL));
    deferred.set(store);
    if (conf.get(WorkerKeys.SHORT_CIRCUIT_ENABLED) && !io.netty.channel.epoll.Epoll.isAvailable()) {
      LOG.warn("Short-circuit reads are off: Netty epoll is not available ({}); clients on this host stream "
          + "through the data port", io.netty.channel.epoll.Epoll.unavailabilityCause().toString());
    } else if (conf.get(WorkerKeys.SHORT_CIRCUIT_ENABLED)) {
      try {
        shortCircuit = new io.strata.worker.shortcircuit.ShortCircuitServer(store, Path.of(
            WorkerKeys.socketPath(conf.get(WorkerKeys.DOMAIN_SOCKET_PATH), port)),
            (id, len, tier) -> sync.commitBlock(id, len, tier), conf.get(WorkerKeys.SHORT_CIRCUIT_CONNECTIONS_MAX))
            .start();
      } catch (IOException e) {
        close();
        throw e;
      }
    }
    startDataDomainSocket();
    WorkerMetrics.serve(this, server, web);
    io.strata.worker.web.WorkerWebUi.register(web, this, address, conf, clock);
    background = Executors.newScheduledThreadPool(2, GrpcServer.namedDaemon("worker-" + port + "-background"));
    background.scheduleWithFixedDelay(sync::tick, 0, conf.get(WorkerKeys.HEARTBEAT_INTERVAL).toMillis(),
        TimeUnit.MILLISECONDS);
    // A persist outcome goes to the master in a heartbeat now, not up to an interval later (fs persist waits on it).
    ScheduledExecutorService beats = background;
    ufs.onPersistResult(() -> {
      try {
        beats.execute(sync::tick);
      } catch (java.util.concurrent.RejectedExecutionException stopping) {
        // the worker is stopping
      }
    });
    long tm = conf.get(WorkerKeys.TIER_MANAGER_INTERVAL).toMillis();
    background.scheduleWithFixedDelay(() -> {
      try {
        tierManager.runOnce();
      } catch (RuntimeException e) {
        LOG.error("Tier management round failed", e);
      }
    }, tm, tm, TimeUnit.MILLISECONDS);
    LOG.info("Worker serving on {}:{} (advertised as {}, {}), storage {}", bind, port, address, address.identity(),
        store.dirReports());
    return this;
  }

  /**
   * The block transfer server (when on), on its port and, beside the data domain socket, on its own domain
   * socket; returns the port to advertise (0: none).
   */
  private int startTransfer(String bind, DeferredStore deferred, long mapWindow) throws IOException {
    if (!conf.get(WorkerKeys.TRANSFER_ENABLED)) {
      return 0;
    }
    Path socket = null;
    if (conf.get(WorkerKeys.DATA_DOMAIN_SOCKET_ENABLED) && io.netty.channel.epoll.Epoll.isAvailable()) {
      socket = Path.of(WorkerKeys.socketPath(conf.get(WorkerKeys.TRANSFER_DOMAIN_SOCKET_PATH), port));
    }
    try {
      transfer = new io.strata.worker.transfer.TransferServer(deferred, bind, conf.get(WorkerKeys.TRANSFER_PORT),
          socket, conf.get(WorkerKeys.TRANSFER_CONNECTIONS_MAX),
          conf.get(WorkerKeys.READ_STREAM_STALL_TIMEOUT).toMillis(),
          conf.get(WorkerKeys.TRANSFER_IDLE_TIMEOUT).toMillis(),
          io.strata.worker.transfer.TransferServer.Send.of(conf.get(WorkerKeys.TRANSFER_SEND)), mapWindow).start();
    } catch (IOException e) {
      close();
      throw e;
    }
    return transfer.port();
  }

  /** The block transfer server, or null when off. */
  public io.strata.worker.transfer.TransferServer transfer() {
    return transfer;
  }

  /** The data service on a domain socket too, for clients on this host (when on and epoll is there). */
  private void startDataDomainSocket() throws IOException {
    if (!conf.get(WorkerKeys.DATA_DOMAIN_SOCKET_ENABLED)) {
      return;
    }
    if (!io.netty.channel.epoll.Epoll.isAvailable()) {
      LOG.warn("Domain-socket streaming is off: Netty epoll is not available ({}); clients on this host stream "
          + "through the data port", io.netty.channel.epoll.Epoll.unavailabilityCause().toString());
      return;
    }
    try {
      server.serveOnDomainSocket(Path.of(WorkerKeys.socketPath(conf.get(WorkerKeys.DATA_DOMAIN_SOCKET_PATH), port)));
    } catch (IOException e) {
      close();
      throw e;
    }
    LOG.info("Data service also on domain socket {}", server.domainSocket());
  }

  /** The domain socket the data service is also served on, or null. */
  public Path dataDomainSocket() {
    return server == null ? null : server.domainSocket();
  }

  /**
   * Data service calls of one method (bare name, e.g. {@code ReadBlock}) received so far over the domain
   * socket ({@code overDomainSocket}) or the TCP data port.
   */
  public long dataCalls(String method, boolean overDomainSocket) {
    if (server == null) {
      return 0;
    }
    return overDomainSocket ? server.domainSocketCalls(method) : server.tcpCalls(method);
  }

  public int rpcPort() {
    return port;
  }

  /** Chunks the worker read into pooled direct buffers (its zero-copy read path) so far. */
  public long directChunksRead() {
    return dataService == null ? 0 : dataService.directChunksRead();
  }

  /** Block write messages parsed over the transport's buffers (its zero-copy write path) so far. */
  public long aliasedWriteChunks() {
    return dataService == null ? 0 : dataService.aliasedWriteChunks();
  }

  /** Pooled read buffers lent to gRPC plus received write chunks not yet released (0 at rest). */
  public int outstandingBlockBuffers() {
    return dataService == null ? 0 : dataService.outstandingBuffers();
  }

  /** Data streams (block reads and writes, UFS writes) open now. */
  public int openStreams() {
    return streamLimits == null ? 0 : streamLimits.open();
  }

  /** Block reads from under file systems so far: one per read-through load and per NO_CACHE stream. */
  public long ufsBlockReads() {
    return ufs == null ? 0 : ufs.ufsBlockReads();
  }

  /** This worker's under file system clients; null before start. */
  public UfsManager ufsManager() {
    return ufsManager;
  }

  /** Bytes read from under file systems so far. */
  public long ufsBytesRead() {
    return ufs == null ? 0 : ufs.ufsBytesRead();
  }

  /** The under file system layer (the metrics read its counters); null before start. */
  WorkerUfs ufs() {
    return ufs;
  }

  /** Milliseconds since the master last answered a heartbeat. */
  long heartbeatAgeMs() {
    MasterSync s = sync;
    return s == null ? 0 : s.heartbeatAgeMs();
  }

  /** Background cache requests queued or running. */
  public int asyncCachePending() {
    return ufs == null ? 0 : ufs.asyncCachePending();
  }

  /** Files queued or being persisted now. */
  public int persistsActive() {
    return ufs == null ? 0 : ufs.persistsActive();
  }

  /** Persist commands refused so far for a full persist queue (each reported failed to the master). */
  public long persistsRefused() {
    return ufs == null ? 0 : ufs.persistsRefused();
  }

  /** Persist commands dropped so far because their file was already in hand here. */
  public long persistDuplicates() {
    return ufs == null ? 0 : ufs.persistDuplicates();
  }

  /**
   * The master calls this worker's concurrent commits and UFS write targets went in so far: {commit calls,
   * commits in them, target calls, targets in them} (see {@link CallBatcher}).
   */
  public long[] masterBatchCounts() {
    MasterSync s = sync;
    return s == null ? new long[4] : s.batchCounts();
  }

  /** The master's pin list version this worker holds (0 until the master sends one). */
  public long pinVersion() {
    MasterSync s = sync;
    return s == null ? 0 : s.pins().version();
  }

  /**
   * The master sync as the UFS layer's {@link MasterClient}: it exists only once the data server's port
   * is known, after the layer is built, so calls before then get UNAVAILABLE.
   */
  private final class SyncMasterClient implements MasterClient {
    private MasterSync sync() throws UnavailableException {
      MasterSync s = sync;
      if (s == null) {
        throw new UnavailableException("The worker is still starting");
      }
      return s;
    }

    @Override
    public BlockSource blockSource(long blockId) throws StrataException {
      return sync().blockSource(blockId);
    }

    @Override
    public UfsTarget ufsWriteTarget(long fileId) throws StrataException {
      return sync().ufsWriteTarget(fileId);
    }

    @Override
    public java.util.Map<Long, UfsTarget> ufsWriteTargets(java.util.List<Long> fileIds) throws StrataException {
      return sync().ufsWriteTargets(fileIds);
    }

    @Override
    public void commitBlock(long blockId, long length, String tier) throws StrataException {
      sync().commitBlock(blockId, length, tier);
    }

    @Override
    public void announce(long blockId, long length, String tier) throws StrataException {
      sync().announce(blockId, length, tier);
    }

    @Override
    public boolean reportCorrupt(long blockId, WorkerAddress holder, long offset, String reason)
        throws StrataException {
      return sync().reportCorrupt(blockId, holder, offset, reason);
    }

    @Override
    public long workerId() {
      MasterSync s = sync;
      return s == null ? -1 : s.workerId();
    }
  }

  public BlockStore store() {
    return store;
  }

  /** The tiered store itself (tests and in-process benchmarks read its per-tier counters). */
  public TieredBlockStore tieredStore() {
    return store;
  }

  /** The short-circuit server on the domain socket, or null when it is turned off. */
  /** The gRPC data service (tests read its counters). */
  public BlockWorkerService dataService() {
    return dataService;
  }

  public io.strata.worker.shortcircuit.ShortCircuitServer shortCircuit() {
    return shortCircuit;
  }

  /** The shuffle partition files and push pipeline (tests read their counters). */
  public io.strata.worker.shuffle.ShuffleWorker shuffle() {
    return shuffle;
  }

  /** The web server (pages and /metrics); its {@code port()} is the bound web port. Null before start. */
  public io.strata.server.web.WebServer web() {
    return web;
  }

  /** The background tier work, for tests that drive it themselves. */
  public TierManager tierManager() {
    return tierManager;
  }

  /** True once the master has accepted this worker's registration. */
  public boolean isRegistered() {
    return sync != null && sync.isRegistered();
  }

  public long workerId() {
    return sync.workerId();
  }

  public synchronized boolean isClosed() {
    return closed;
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (background != null) {
      background.shutdownNow();
    }
    if (web != null) {
      web.close();
    }
    if (transfer != null) {
      transfer.close();
    }
    if (shortCircuit != null) {
      shortCircuit.close();
    }
    if (server != null) {
      server.close();
    }
    if (shuffle != null) {
      shuffle.close();
    }
    for (ExecutorService e : new ExecutorService[] {ufsIo, asyncCache, persist, rpcTimers}) {
      if (e != null) {
        e.shutdownNow();
      }
    }
    if (ufs != null) {
      ufs.close();
    }
    if (ufsManager != null) {
      ufsManager.close();
    }
    if (sync != null) {
      sync.close(); // its removal thread
    }
    if (masterConnection != null) {
      masterConnection.close();
    }
    LOG.info("Worker on port {} stopped", port);
  }
}
