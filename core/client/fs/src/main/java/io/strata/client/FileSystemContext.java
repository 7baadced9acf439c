package io.strata.client;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.grpc.Metadata;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.strata.common.grpc.BlockDataMarshalling;
import io.strata.common.grpc.ClientEventLoops;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.FileSystemMasterServiceGrpc;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;
import java.io.Closeable;
import java.util.concurrent.TimeUnit;

/**
 * What one client shares among its calls and streams: the configuration, the channel to the master, the
 * bounded pool of worker channels ({@link WorkerChannels}: opened on first use, at most
 * {@code strata.user.worker.channels.max} kept, idle ones closed by this context's maintenance thread,
 * never one with a call in flight; over the worker's data domain socket when it is on this host), the
 * lease renewer and the marshalling of block data calls ({@code strata.user.network.zerocopy.enabled}).
 *
 * <p>The one place that knows the cluster configuration: at start it fetches the master's cluster defaults
 * for client keys ({@code strata.user.*}) and their hash; the configuration used is those defaults under
 * the caller's own explicitly set keys (which win). Every {@code strata.user.conf.sync.interval} the
 * maintenance thread asks for the hash again and, when it changed, re-initialises: a new
 * {@link Generation} (configuration and worker channel pool) replaces the current one in one volatile
 * write, so no call ever waits for it. Calls and streams already running finish on the old pool: its idle
 * channels shut down at once, busy ones when their last call in flight ends, and the pool's event loops
 * are let go once all are down. Read once, from the configuration at start: the lease renewal interval,
 * the short-circuit, block transfer, metadata cache and page cache settings, the idle check and the sync
 * interval themselves.
 *
 * <p>Thread-safe.
 */
public final class FileSystemContext implements Closeable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FileSystemContext.class);

  /** What a configuration change replaces: the merged configuration and the worker channel pool it sets. */
  private static final class Generation {
    final int number;
    final StrataConf conf;
    final WorkerChannels channels;
    final boolean zeroCopy;
    /** {@link ClientKeys#metadataSyncIntervalMs}, parsed once: every getStatus and listing sends it. */
    final long metadataSyncIntervalMs;
    /** {@link ClientKeys#SHORT_CIRCUIT_READ_INLINE_MAX}, parsed once: every short-circuit block open asks it. */
    final int shortCircuitInlineMax;

    Generation(int number, StrataConf conf, long maxMessageBytes, long flowWindowBytes, ClientEventLoops loops) {
      this.number = number;
      this.conf = conf;
      this.channels = new WorkerChannels(conf.get(ClientKeys.HOSTNAME),
          conf.get(ClientKeys.DATA_DOMAIN_SOCKET_ENABLED), conf.get(ClientKeys.DATA_DOMAIN_SOCKET_PATH),
          maxMessageBytes, flowWindowBytes, conf.get(ClientKeys.WORKER_CHANNELS_MAX),
          conf.get(ClientKeys.WORKER_CHANNEL_IDLE_TIMEOUT), System::nanoTime, loops);
      this.zeroCopy = conf.get(ClientKeys.NETWORK_ZEROCOPY_ENABLED);
      this.metadataSyncIntervalMs = ClientKeys.metadataSyncIntervalMs(conf);
      this.shortCircuitInlineMax = (int) (long) conf.get(ClientKeys.SHORT_CIRCUIT_READ_INLINE_MAX);
    }
  }

  /** The caller's own configuration: its explicitly set keys win over the cluster defaults. */
  private final StrataConf ownConf;
  private volatile Generation current;
  /** Retired pools whose channels still carry calls; freed by the maintenance thread once drained. */
  private final java.util.List<WorkerChannels> draining = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** The hash of the cluster defaults in use ("" before the first fetch); guarded by this. */
  private String clusterHash = "";
  private final MetadataCache metadataCache;
  /** The local page cache shared by this context's streams, or null when off. */
  private final LocalPageCache pageCache;
  private final java.util.Map<WorkerAddress, WorkerChannels.Handle> handles =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final long maxMessageBytes;
  private final long flowWindowBytes;
  private final io.strata.common.master.MasterConnection master;
  /**
   * The event loops of the master channel and the TCP worker channels: this context's own, ended by close, so a
   * closed client leaves no thread in epoll_wait (see {@link ClientEventLoops} for what that costs an exit).
   */
  private final ClientEventLoops loops = new ClientEventLoops("strata-client-net");
  /** Runs this context's periodic checks (idle worker channels); one daemon thread, stopped by close. */
  private final java.util.concurrent.ScheduledExecutorService maintenance;
  /** Deadlines of unary master calls ({@link #callMaster}). */
  private final CallDeadlines deadlines = new CallDeadlines();
  /**
   * Background work of streams (short-circuit opens ahead, {@link ShortCircuitAhead}): two daemon threads at
   * most, started on demand and gone after 30 s idle; past 256 queued tasks it refuses (the stream then does
   * the work itself when it gets there).
   */
  private final java.util.concurrent.ThreadPoolExecutor background;
  private final long rpcTimeoutMs;
  private final LeaseRenewer leases;
  /** Keeps this context's under file system write streams alive while their files' leases are held. */
  private final UfsKeepAlives ufsKeepAlives;
  private final java.util.concurrent.atomic.AtomicLong callIds = new java.util.concurrent.atomic.AtomicLong();
  private volatile boolean closed;
  private io.strata.client.shortcircuit.ShortCircuitClient shortCircuit;
  private io.strata.client.transfer.TransferClient transfer;
  private final BlockDataMarshalling marshalling = new BlockDataMarshalling();
  private static final Metadata PLAIN_HEADERS = new Metadata();

  static {
    PLAIN_HEADERS.put(BlockDataMarshalling.PLAIN_HEADER, BlockDataMarshalling.PLAIN);
  }

  /**
   * Makes the client: checks every client key the caller set (a bad value fails at once, an
   * IllegalArgumentException naming key, value and what is expected, before anything is opened), connects to the
   * master and takes its cluster defaults (one that does not parse is dropped, with a warning: see {@link #merge}),
   * then opens the page cache and the rest. A failure on the way closes whatever was made (the master channel, the
   * event loops, the page cache directory this JVM claimed), so a failed client leaks nothing and keeps no later
   * one from its page cache.
   */
  public FileSystemContext(StrataConf conf) {
    this.ownConf = conf;
    io.strata.common.conf.ConfigCheck.validate(conf, CLIENT_KEYS.values());
    this.maxMessageBytes = conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE);
    this.flowWindowBytes = conf.get(CommonKeys.NETWORK_FLOW_CONTROL_WINDOW);
    this.rpcTimeoutMs = conf.get(CommonKeys.RPC_TIMEOUT).toMillis();
    // What was made so far, for the cleanup of a constructor that fails half way (final fields cannot be read there).
    io.strata.common.master.MasterConnection connection = null;
    LocalPageCache opened = null;
    Generation first = null;
    java.util.concurrent.ScheduledExecutorService timer = null;
    java.util.concurrent.ThreadPoolExecutor workers = null;
    try {
      this.master = connection = new io.strata.common.master.MasterConnection(conf, loops);
      io.strata.proto.GetClusterConfigurationResponse defaults = fetchClusterDefaults(false);
      StrataConf merged = conf;
      if (defaults != null) {
        clusterHash = defaults.getHash();
        merged = merge(defaults);
      }
      this.pageCache = opened = LocalPageCache.open(merged);
      this.current = first = new Generation(1, merged, maxMessageBytes, flowWindowBytes, loops);
      this.leases = new LeaseRenewer(this, merged.get(ClientKeys.LEASE_RENEW_INTERVAL).toMillis());
      this.ufsKeepAlives = new UfsKeepAlives(merged.get(ClientKeys.UFS_WRITE_KEEPALIVE_INTERVAL).toMillis(),
          leases::holds);
      this.metadataCache = MetadataCache.from(merged, com.github.benmanes.caffeine.cache.Ticker.systemTicker());
      this.maintenance = timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "strata-client-maintenance");
        t.setDaemon(true);
        return t;
      });
      this.background = workers = new java.util.concurrent.ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS,
          new java.util.concurrent.LinkedBlockingQueue<>(256), r -> {
            Thread t = new Thread(r, "strata-client-background");
            t.setDaemon(true);
            return t;
          });
      background.allowCoreThreadTimeOut(true);
      long checkMs = Math.max(10, merged.get(ClientKeys.WORKER_CHANNEL_IDLE_TIMEOUT).toMillis() / 2);
      maintenance.scheduleWithFixedDelay(this::checkChannels, checkMs, checkMs, TimeUnit.MILLISECONDS);
      long syncMs = merged.get(ClientKeys.CONF_SYNC_INTERVAL).toMillis();
      maintenance.scheduleWithFixedDelay(this::syncQuietly, syncMs, syncMs, TimeUnit.MILLISECONDS);
    } catch (RuntimeException | Error e) {
      if (timer != null) {
        timer.shutdownNow();
      }
      if (workers != null) {
        workers.shutdownNow();
      }
      if (opened != null) {
        opened.close(); // lets the directory go (this JVM's claim and the OS lock) for the next client
      }
      deadlines.close();
      if (connection != null) {
        connection.close();
      }
      if (first != null) {
        first.channels.close();
      }
      loops.close();
      throw e;
    }
  }

  /** The keys a client reads, by name: the caller's values of these are checked at start, the master's at merge. */
  private static final java.util.Map<String, io.strata.common.conf.PropertyKey<?>> CLIENT_KEYS = clientKeys();

  private static java.util.Map<String, io.strata.common.conf.PropertyKey<?>> clientKeys() {
    java.util.Map<String, io.strata.common.conf.PropertyKey<?>> keys = new java.util.HashMap<>();
    for (io.strata.common.conf.PropertyKey<?> k : io.strata.common.conf.ConfigCheck.keysOf(ClientKeys.class,
        CommonKeys.class)) {
      keys.put(k.name(), k);
    }
    return java.util.Map.copyOf(keys);
  }

  /**
   * The cluster defaults under the caller's own keys. A default of a client key that does not parse is dropped with a
   * warning, and the client's own value (or the key's default) is used: the master copies its {@code strata.user.*}
   * values through unchecked, and one bad value there must not break every client of the cluster.
   */
  private StrataConf merge(io.strata.proto.GetClusterConfigurationResponse defaults) {
    java.util.Map<String, String> taken = new java.util.HashMap<>(defaults.getClientDefaultsMap());
    taken.keySet().removeIf(k -> k.startsWith(LOCAL_ONLY_PREFIX));
    taken.entrySet().removeIf(e -> {
      io.strata.common.conf.PropertyKey<?> key = CLIENT_KEYS.get(e.getKey());
      if (key == null) {
        return false; // not a key of this client (a newer one's, another module's): whoever reads it checks it
      }
      try {
        StrataConf.of(java.util.Map.of(e.getKey(), e.getValue())).get(key);
        return false;
      } catch (IllegalArgumentException bad) {
        LOG.warn("Ignoring the cluster default {}={} of the master at {}: {}; using this client's own value",
            e.getKey(), e.getValue(), master.describe(), bad.getMessage());
        return true;
      }
    });
    return StrataConf.of(taken).withAll(ownConf.explicitValues());
  }

  /**
   * Keys a client takes only from its own configuration, never from the master's cluster defaults: the page cache's
   * local directory, quota and use, which a master must not choose for the client's machine.
   */
  static final String LOCAL_ONLY_PREFIX = "strata.user.client.cache.";

  /**
   * The master's cluster defaults, or null when it cannot be asked now (logged; the periodic check tries
   * again). At start one attempt only ({@code retry} false), so a client made while the master is down starts
   * at once with its own configuration.
   */
  private io.strata.proto.GetClusterConfigurationResponse fetchClusterDefaults(boolean retry) {
    io.strata.proto.GetClusterConfigurationRequest req =
        io.strata.proto.GetClusterConfigurationRequest.getDefaultInstance();
    try {
      if (retry) {
        return callMaster(m -> m.getClusterConfiguration(req));
      }
      return FileSystemMasterServiceGrpc.newBlockingStub(master.channel())
          .withDeadlineAfter(rpcTimeoutMs, TimeUnit.MILLISECONDS).getClusterConfiguration(req);
    } catch (io.strata.common.exception.StrataException | io.grpc.StatusRuntimeException e) {
      // At start, INFO: the client's first call names the unreachable master itself (and a one-shot command
      // would print both); a periodic check that fails is worth a WARN.
      String msg = "Cannot fetch the cluster configuration from the master at {} ({}); using this client's own "
          + "until the next check";
      if (retry) {
        LOG.warn(msg, master.describe(), e.getMessage());
      } else {
        LOG.info(msg, master.describe(), e.getMessage());
      }
      return null;
    }
  }

  private void syncQuietly() {
    try {
      freeDrainedPools();
      syncClusterConfiguration();
    } catch (RuntimeException e) {
      LOG.warn("Checking the cluster configuration failed (tried again at the next interval)", e);
    }
  }

  /**
   * Asks the master for its cluster defaults; when their hash changed, re-initialises (a new generation;
   * the old pool drains). True when it did. Called by the maintenance thread; tests may call it directly.
   */
  public boolean syncClusterConfiguration() {
    io.strata.proto.GetClusterConfigurationResponse defaults = fetchClusterDefaults(true);
    if (defaults == null || closed) {
      return false;
    }
    Generation old;
    synchronized (this) {
      if (closed || defaults.getHash().equals(clusterHash)) {
        return false;
      }
      clusterHash = defaults.getHash();
      old = current;
      current = new Generation(old.number + 1, merge(defaults), maxMessageBytes, flowWindowBytes, loops);
      draining.add(old.channels);
    }
    LOG.info("The cluster configuration changed (hash {}): client configuration generation {}",
        defaults.getHash(), old.number + 1);
    old.channels.retire();
    freeDrainedPools();
    return true;
  }

  /** Closes idle channels of the current pool and frees retired pools that have drained. */
  private void checkChannels() {
    current.channels.evictIdle();
    io.strata.client.transfer.TransferClient t;
    synchronized (this) {
      t = transfer;
    }
    if (t != null) {
      t.closeIdle();
    }
    freeDrainedPools();
  }

  /** Frees the retired pools whose last call in flight ended (checked every sync interval and idle check). */
  private void freeDrainedPools() {
    for (WorkerChannels old : draining) {
      if (old.closeIfDrained()) {
        draining.remove(old);
      }
    }
  }

  /** Which configuration generation is in use: 1 at start, one more with each re-initialisation. */
  public int configurationGeneration() {
    return current.number;
  }

  /** Retired worker channel pools still carrying calls in flight (0 once every old stream closed). */
  public int drainingChannelPools() {
    return draining.size();
  }

  /** The metadata answers this context's file systems share (disabled unless the key is on). */
  MetadataCache metadataCache() {
    return metadataCache;
  }

  /**
   * A new request id for one logical non-idempotent master call (create, complete, rename, delete): this
   * context's client id and the next call number. Put it in the request once, outside the
   * {@link #callMaster} lambda, so every retry carries the same id and the master answers a retry it
   * already applied as it answered the first attempt.
   */
  io.strata.proto.RequestIdProto nextRequestId() {
    return io.strata.proto.RequestIdProto.newBuilder().setClientId(leases.clientId())
        .setCallId(callIds.incrementAndGet()).build();
  }

  /** Renews the write leases of this context's open files. */
  UfsKeepAlives ufsKeepAlives() {
    return ufsKeepAlives;
  }

  /** Keep-alives this context sent on its under file system write streams so far (for tests and operators). */
  public long ufsKeepAlivesSent() {
    return ufsKeepAlives.sent();
  }

  LeaseRenewer leases() {
    return leases;
  }

  /** The configuration in use now: the cluster defaults under this client's own keys. */
  public StrataConf conf() {
    return current.conf;
  }

  /** The configuration's metadata sync interval ({@link ClientKeys#metadataSyncIntervalMs}), parsed once. */
  long metadataSyncIntervalMs() {
    return current.metadataSyncIntervalMs;
  }

  /** The configuration's {@link ClientKeys#SHORT_CIRCUIT_READ_INLINE_MAX}, parsed once. */
  int shortCircuitInlineMax() {
    return current.shortCircuitInlineMax;
  }

  public String masterAddress() {
    return master.describe();
  }

  /** A unary call to the leading master (deadline applied), following failovers within the retry window. */
  <T> T callMaster(java.util.function.Function<FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub, T> call)
      throws io.strata.common.exception.StrataException {
    // The deadline without a timer per call (CallDeadlines): a gRPC call deadline wakes an event loop per call.
    return master.call(ch -> deadlines.call(rpcTimeoutMs,
        () -> call.apply(FileSystemMasterServiceGrpc.newBlockingStub(ch))));
  }

  /** A streaming call to the leading master (no overall deadline); same failover rules. */
  <T> T streamMaster(java.util.function.Function<FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub, T> call)
      throws io.strata.common.exception.StrataException {
    return master.call(ch -> call.apply(FileSystemMasterServiceGrpc.newBlockingStub(ch)));
  }

  /** The worker's channel for stubs: each call takes the worker's channel in the current pool. */
  private WorkerChannels.Handle handle(WorkerAddress address) {
    return handles.computeIfAbsent(address, a -> new WorkerChannels.Handle(a, () -> current.channels));
  }

  BlockWorkerServiceGrpc.BlockWorkerServiceStub worker(WorkerAddress address) {
    if (closed) {
      throw new IllegalStateException("FileSystemContext is closed");
    }
    return BlockWorkerServiceGrpc.newStub(handle(address));
  }

  /**
   * Starts a block read on the worker's channel: with the zero-copy marshaller, or (key off) protobuf's
   * own, asking the worker for its plain path too. Pass each response to {@link #release} once its chunk
   * has been copied out.
   */
  void readBlock(WorkerAddress address, ReadBlockRequest req, StreamObserver<ReadBlockResponse> o) {
    BlockWorkerServiceGrpc.BlockWorkerServiceStub stub = worker(address);
    if (current.zeroCopy) {
      ClientCalls.asyncServerStreamingCall(stub.getChannel().newCall(marshalling.readBlock(), stub.getCallOptions()),
          req, o);
    } else {
      stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(PLAIN_HEADERS)).readBlock(req, o);
    }
  }

  /** Frees the transport buffer a read response's chunk references (no-op for a copied one). */
  void release(ReadBlockResponse response) {
    marshalling.readResponses().release(response);
  }

  /** Starts a block write on the worker's channel, marshalled as {@link #readBlock} is. */
  StreamObserver<WriteBlockRequest> writeBlock(WorkerAddress address, StreamObserver<WriteBlockResponse> o) {
    BlockWorkerServiceGrpc.BlockWorkerServiceStub stub = worker(address);
    if (current.zeroCopy) {
      return ClientCalls.asyncClientStreamingCall(stub.getChannel().newCall(marshalling.writeBlock(),
          stub.getCallOptions()), o);
    }
    return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(PLAIN_HEADERS)).writeBlock(o);
  }

  /**
   * Block read responses parsed by the zero-copy marshaller so far: sliced from the transport's buffers,
   * or (when grpc-netty cannot expose them) from one copy.
   */
  public long aliasedBlockResponses() {
    return marshalling.readResponses().aliasedParses() + marshalling.readResponses().oneCopyParses();
  }

  /** Transport buffers held by block read responses not yet released (0 unless one leaked; for tests). */
  public int outstandingBlockBuffers() {
    return marshalling.outstanding();
  }

  /** A blocking stub for a worker's unary calls, on the same channel as {@link #worker}. */
  BlockWorkerServiceGrpc.BlockWorkerServiceBlockingStub workerBlocking(WorkerAddress address) {
    if (closed) {
      throw new IllegalStateException("FileSystemContext is closed");
    }
    return BlockWorkerServiceGrpc.newBlockingStub(handle(address));
  }

  /**
   * Whether a worker runs on this host (its host name is {@code strata.user.hostname}), so its domain
   * sockets (short-circuit, data streaming) are reachable.
   */
  boolean onThisHost(WorkerAddress worker) {
    return current.channels.onThisHost(worker);
  }

  /** Whether this client's calls to the worker go over its data domain socket (once a call was made). */
  public boolean streamsOverDomainSocket(WorkerAddress worker) {
    return current.channels.overDomainSocket(worker);
  }

  /** Worker channels open now (at most strata.user.worker.channels.max unless more have calls in flight). */
  public int openWorkerChannels() {
    return current.channels.open();
  }

  /** The most worker channels this context had open at once. */
  public int peakWorkerChannels() {
    return current.channels.peak();
  }

  /** Worker channels opened so far, reopenings after eviction included. */
  public long workerChannelsOpened() {
    return current.channels.openedTotal();
  }

  /** Why workers on this host are reached over TCP rather than their data domain sockets, oldest first. */
  public java.util.List<String> domainSocketFallbackReasons() {
    return current.channels.fallbackReasons();
  }

  /** Short-circuit reads from workers on this host (created on first use, closed with this context). */
  public synchronized io.strata.client.shortcircuit.ShortCircuitClient shortCircuit() {
    if (closed) {
      // One made now would never be closed (nor its event-loop thread stopped).
      throw new IllegalStateException("FileSystemContext is closed");
    }
    if (shortCircuit == null) {
      shortCircuit = new io.strata.client.shortcircuit.ShortCircuitClient(
          io.strata.client.shortcircuit.ShortCircuitClient.Mode.valueOf(
              current.conf.get(ClientKeys.SHORT_CIRCUIT_MODE).toUpperCase(java.util.Locale.ROOT)),
          current.conf.get(ClientKeys.SHORT_CIRCUIT_SOCKET_PATH), rpcTimeoutMs,
          io.strata.client.shortcircuit.MappedReads.Mode.parse(current.conf.get(ClientKeys.SHORT_CIRCUIT_READ_MMAP)));
    }
    return shortCircuit;
  }

  /** Idle block transfer connections are kept this long at most: well under the worker's idle timeout. */
  private static final long TRANSFER_IDLE_MS = 30_000;

  /**
   * Block transfers ({@code strata.user.network.transfer.enabled}; created on first use, closed with this
   * context), or null when they are off.
   */
  synchronized io.strata.client.transfer.TransferClient transfer() {
    if (transfer == null && !closed && current.conf.get(ClientKeys.NETWORK_TRANSFER_ENABLED)) {
      transfer = new io.strata.client.transfer.TransferClient(current.conf.get(ClientKeys.DATA_DOMAIN_SOCKET_ENABLED),
          current.conf.get(ClientKeys.TRANSFER_DOMAIN_SOCKET_PATH), this::onThisHost, rpcTimeoutMs,
          current.conf.get(ClientKeys.TRANSFER_CONNECTIONS_IDLE_MAX), TRANSFER_IDLE_MS, System::nanoTime);
    }
    return transfer;
  }

  /** Block transfer connections kept open between reads now (0 before the first transfer; for tests). */
  public synchronized int idleTransferConnections() {
    return transfer == null ? 0 : transfer.idleConnections();
  }

  /** Block transfer connections opened so far (for tests). */
  public synchronized long transferConnectionsOpened() {
    return transfer == null ? 0 : transfer.connectionsOpened();
  }

  /** Why workers on this host get block transfers over TCP rather than their transfer domain sockets. */
  public synchronized java.util.Collection<String> transferDomainSocketFallbackReasons() {
    return transfer == null ? java.util.List.of() : transfer.domainSocketFallbackReasons();
  }

  /** The local page cache ({@code strata.user.client.cache.*}), or null when it is off or its dir is in use. */
  LocalPageCache pageCache() {
    return pageCache;
  }

  long rpcTimeoutMs() {
    return rpcTimeoutMs;
  }

  /** Whether {@link #close} was called: work queued on {@link #background} may then never run. */
  boolean isClosed() {
    return closed;
  }

  /** The executor of streams' background work (see {@link #background}'s field). */
  java.util.concurrent.Executor background() {
    return background;
  }

  /** Frees everything this context holds; its metadata cache forgets every answer. Closing again is a no-op. */
  @Override
  public void close() {
    Generation last;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      last = current;
    }
    synchronized (this) {
      if (shortCircuit != null) {
        shortCircuit.close();
      }
      if (transfer != null) {
        transfer.close();
      }
    }
    leases.close();
    ufsKeepAlives.close();
    metadataCache.clear();
    if (pageCache != null) {
      pageCache.close();
    }
    maintenance.shutdownNow();
    deadlines.close();
    background.shutdownNow();
    master.close();
    last.channels.close();
    for (WorkerChannels old : draining) {
      old.close();
    }
    draining.clear();
    loops.close();
  }
}
