package io.strata.master;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.master.file.FileSystemMaster;
import io.strata.master.file.MountTable;
import io.strata.master.file.UfsConfig;
import io.strata.master.journal.CorruptJournalException;
import io.strata.master.journal.Journal;
import io.strata.master.journal.JournalEntry;
import io.strata.master.journal.JournalLock;
import io.strata.master.rpc.BlockMasterWorkerService;
import io.strata.master.rpc.FileSystemMasterService;
import io.strata.master.rpc.MasterState;
import io.strata.server.GrpcServer;
import io.strata.server.ServerKeys;
import io.strata.server.ufs.UfsManager;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running master.
 *
 * <p>Every master first binds its RPC port and takes the journal's {@link JournalLock} (see
 * {@link #start()}), so one started by mistake fails before it touches the journal.
 *
 * <p>Single master (no {@code strata.zookeeper.address}): holds the journal lock exclusively, recovers
 * the namespace from its journal (checkpoint + replay, torn tail cut), then leads.
 *
 * <p>HA: several masters share one journal dir (each holds its lock shared) and elect a leader through
 * ZooKeeper (Curator {@link LeaderLatch}, participant id = this master's {@code host:port}, which is how clients and workers
 * find it). A standby loads the journal read-only, tails it every {@code strata.master.journal.tail.interval}
 * and answers every RPC with UNAVAILABLE. On winning the election it applies the rest of the journal,
 * cuts the old leader's torn tail, claims the next epoch (which fences the old leader: it checks the
 * epoch before each write) and serves. A leader that loses the election (its ZooKeeper session ended)
 * stops writing and shuts down; its supervisor starts it again as a standby.
 *
 * <p>{@link #start()} once, {@link #close()} once; several may run in one JVM (tests). Thread-safe: role
 * changes run on one thread and are guarded by this object's monitor.
 */
public final class MasterProcess implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MasterProcess.class);

  private final StrataConf conf;
  private final Clock clock;
  private volatile FileSystemMaster fs;
  private volatile boolean leading;
  private volatile Runnable fatalHandler;
  private Journal journal;
  /** The journal's cluster id, read when this master starts leading (workers of another cluster are refused). */
  private volatile String clusterId;
  private JournalLock journalLock;
  private final UfsManager ufsManager;
  private UfsConfig ufsConfig;
  private GrpcServer server;
  private volatile io.strata.server.web.WebServer web;
  private MasterMetrics metrics;
  private ScheduledExecutorService background;
  private ExecutorService roles;
  private final io.strata.master.rpc.ListingPool listings;
  private CuratorFramework zk;
  private LeaderLatch latch;
  private String id;
  private boolean closed;

  public MasterProcess(StrataConf conf, Clock clock) {
    this.conf = conf;
    this.clock = clock;
    this.listings = new io.strata.master.rpc.ListingPool(conf.get(MasterKeys.LISTING_THREADS_MAX),
        conf.get(MasterKeys.LISTING_STALL_TIMEOUT), GrpcServer.namedDaemon("master-list"));
    this.ufsManager = UfsManager.fromConf(conf);
    this.fatalHandler = () -> new Thread(this::close, "master-step-down").start();
  }

  /** What to do when this master loses leadership (by default it closes itself; MasterMain exits). */
  public MasterProcess onFatal(Runnable handler) {
    this.fatalHandler = handler;
    return this;
  }

  /** The journal dir the configuration names. */
  public static Path journalDir(StrataConf conf) {
    Path home = Path.of(conf.get(CommonKeys.HOME));
    if (conf.isSet(MasterKeys.JOURNAL_DIR)) {
      return home.resolve(conf.get(MasterKeys.JOURNAL_DIR));
    }
    return home.resolve(conf.get(ServerKeys.DATA_DIR)).resolve("journal");
  }

  private FileSystemMaster newState() {
    FileSystemMaster m = new FileSystemMaster(clock, conf.get(MasterKeys.WORKER_TIMEOUT),
        conf.get(MasterKeys.BLOCK_SIZE_MAX), journal, ufsConfig);
    m.setLeaseTimeout(conf.get(MasterKeys.LEASE_TIMEOUT));
    m.setMinBlockSize(conf.get(MasterKeys.BLOCK_SIZE_MIN));
    m.setRequestIdLimits(conf.get(MasterKeys.REQUEST_IDS_PER_CLIENT_MAX), conf.get(MasterKeys.REQUEST_IDS_MAX),
        conf.get(MasterKeys.REQUEST_IDS_RETENTION));
    m.setMountGuard(mountGuard());
    m.blockMaster().limits(conf.get(MasterKeys.REMOVALS_PER_HEARTBEAT_MAX),
        conf.get(MasterKeys.LOST_WORKER_FORGET_AFTER));
    return m;
  }

  /** Strata's own dirs (journal, data, logs, install dir) that no mount may reach. */
  private io.strata.master.file.MountGuard mountGuard() {
    Path home = Path.of(conf.get(CommonKeys.HOME));
    return new io.strata.master.file.MountGuard(List.of(journalDir(conf), home.resolve(conf.get(ServerKeys.DATA_DIR)),
        home.resolve(conf.get(ServerKeys.LOGS_DIR))), home, conf.get(MasterKeys.MOUNT_OPTIONS_UNSAFE_ALLOWED));
  }

  /** The normalised URIs of strata.master.mount.allowed.uris. */
  private java.util.List<String> allowedMountUris(Path home) throws IOException {
    java.util.List<String> out = new java.util.ArrayList<>();
    for (String u : conf.get(MasterKeys.MOUNT_ALLOWED_URIS)) {
      if (!u.isBlank()) {
        out.add(UfsManager.normalize(u, home));
      }
    }
    return out;
  }

  /** The root mount and the UFS settings from the configuration; a missing local root dir is created. */
  private UfsConfig ufsConfig() throws IOException {
    Path home = Path.of(conf.get(CommonKeys.HOME));
    String root = UfsManager.normalize(conf.get(MasterKeys.ROOT_UFS), home);
    java.util.Map<String, String> options = new java.util.TreeMap<>();
    for (String kv : conf.get(MasterKeys.ROOT_UFS_OPTIONS)) {
      if (kv.isBlank()) {
        continue;
      }
      int eq = kv.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(MasterKeys.ROOT_UFS_OPTIONS.name() + ": '" + kv + "' is not key=value");
      }
      options.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
    }
    mountGuard().checkRoot(root);
    if (root.startsWith("file:")) {
      java.nio.file.Files.createDirectories(Path.of(java.net.URI.create(root)));
    }
    return new UfsConfig(ufsManager, new MountTable.MountInfo("/", root, conf.get(MasterKeys.ROOT_UFS_READONLY),
        conf.get(MasterKeys.ROOT_UFS_SHARED), options), home, conf.get(MasterKeys.UFS_BLOCK_SIZE),
        conf.get(MasterKeys.PERSIST_RETRY_MIN), conf.get(MasterKeys.PERSIST_RETRY_MAX),
        conf.get(MasterKeys.PERSIST_TIMEOUT), conf.get(MasterKeys.MOUNT_CHECK_TIMEOUT), allowedMountUris(home),
        conf.get(MasterKeys.PERSIST_MAX_IN_FLIGHT));
  }

  /** Applies journal entries to the current state; a failure means the journal does not fit it. */
  private Consumer<JournalEntry> applier() {
    return entry -> {
      try {
        fs.replay(entry);
      } catch (StrataException e) {
        throw new IllegalStateException("Journal entry " + entry + " does not apply: " + e.getMessage(), e);
      }
    };
  }

  private boolean ha() {
    return conf.isSet(CommonKeys.ZOOKEEPER_ADDRESS);
  }

  /**
   * Binds the RPC port, takes the journal lock, recovers the namespace and serves. The order matters: a
   * master started by mistake (its port taken, or another master on its journal) fails before it touches
   * the journal, so it can neither reserve an epoch nor fence the master that runs. Requests that arrive
   * during recovery are answered UNAVAILABLE (clients retry). A failed start releases what it took.
   */
  public MasterProcess start() throws IOException {
    try {
      return doStart();
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
  }

  private MasterProcess doStart() throws IOException {
    String host = conf.get(CommonKeys.MASTER_HOSTNAME);
    ufsConfig = ufsConfig();
    int port = conf.get(CommonKeys.MASTER_RPC_PORT);
    String bind = conf.get(MasterKeys.BIND_HOST);
    long startMs = clock.millis();
    MasterState state = () -> {
      if (!leading) {
        throw new UnavailableException("The master at " + id + " is a standby, not the leader");
      }
      return fs;
    };
    server = new GrpcServer("master", bind, port, conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE),
        GrpcServer.Limits.from(conf), List.of(
        // Every client call reports its time on the master in its trailers (bench meta splits its figures by it).
        io.grpc.ServerInterceptors.intercept(new FileSystemMasterService(state, host + ":" + port, startMs,
            conf.get(MasterKeys.LIST_BATCH_SIZE_MAX), listings, (work, refused) -> server.handOff(work, refused),
            new ClusterDefaults(conf), this::webPort), io.strata.common.grpc.ServerTiming.serverInterceptor()),
        new BlockMasterWorkerService(state, conf.get(CommonKeys.WORKER_SECRET), () -> clusterId).bindService()),
        FileSystemMasterService.INLINE_METHODS);
    try {
      server.start();
    } catch (IOException e) {
      server = null;
      throw GrpcServer.cannotListen("master", bind, port, MasterKeys.BIND_HOST.name(),
          io.strata.common.conf.CommonKeys.MASTER_RPC_PORT.name(), e);
    }
    id = host + ":" + server.port();
    web = io.strata.server.web.WebServer.start("master", bind,
        io.strata.server.web.WebServer.PortChoice.of(conf.get(MasterKeys.WEB_PORT), server.port()),
        io.strata.server.web.WebServer.HostCheck.of(conf.get(CommonKeys.WEB_ALLOWED_HOSTS), bind, host));
    metrics = MasterMetrics.serve(this, server, web, clock);
    io.strata.master.web.MasterWebUi.register(web, this, conf, clock, startMs, id);
    // One master per journal dir without ZooKeeper (exclusive); HA masters share it (see JournalLock).
    journalLock = JournalLock.acquire(journalDir(conf), !ha());
    journal = newJournal();
    fs = newState();
    long t0 = System.nanoTime();
    try {
      if (ha()) {
        journal.replayReadOnly(applier());
      } else {
        journal.replay(applier());
        journal.startWriting();
        clusterId = Journal.clusterId(journal.dir());
        leading = true;
      }
    } catch (IllegalStateException e) {
      throw new CorruptJournalException("The journal at " + journal.dir() + " does not replay: " + e.getMessage());
    }
    LOG.info("Recovered {} journal entries from {} in {} ms", journal.appendedSequence(), journal.dir(),
        (System.nanoTime() - t0) / 1_000_000);

    background = Executors.newScheduledThreadPool(4, GrpcServer.namedDaemon("master-background"));
    long persist = conf.get(MasterKeys.PERSIST_CHECK_INTERVAL).toMillis();
    background.scheduleWithFixedDelay(() -> {
      try {
        if (leading) {
          fs.persistTick();
        }
      } catch (RuntimeException e) {
        LOG.error("Persist scheduling failed", e);
      }
    }, persist, persist, TimeUnit.MILLISECONDS);
    long ttl = conf.get(MasterKeys.TTL_CHECK_INTERVAL).toMillis();
    background.scheduleWithFixedDelay(() -> {
      try {
        if (leading) {
          fs.ttlTick();
        }
      } catch (RuntimeException e) {
        LOG.error("TTL check failed", e);
      }
    }, ttl, ttl, TimeUnit.MILLISECONDS);
    long leaseCheck = conf.get(MasterKeys.LEASE_CHECK_INTERVAL).toMillis();
    background.scheduleWithFixedDelay(() -> {
      try {
        if (leading) {
          fs.leaseTick();
        }
      } catch (RuntimeException e) {
        LOG.error("Lease recovery failed", e);
      }
    }, leaseCheck, leaseCheck, TimeUnit.MILLISECONDS);
    long check = conf.get(MasterKeys.LOST_WORKER_CHECK_INTERVAL).toMillis();
    background.scheduleWithFixedDelay(() -> {
      try {
        if (leading) {
          fs.blockMaster().detectLostWorkers();
        }
      } catch (RuntimeException e) {
        LOG.error("Lost worker detection failed", e);
      }
    }, check, check, TimeUnit.MILLISECONDS);
    long period = conf.get(MasterKeys.JOURNAL_CHECKPOINT_ENTRIES);
    long[] lastCheckpoint = {journal.appendedSequence()};
    background.scheduleWithFixedDelay(() -> {
      try {
        if (leading && journal.appendedSequence() - lastCheckpoint[0] >= period) {
          lastCheckpoint[0] = journal.appendedSequence();
          fs.checkpoint();
        }
      } catch (IOException | RuntimeException e) {
        LOG.error("Writing a checkpoint failed (the journal still has every entry)", e);
      }
    }, 1, 1, TimeUnit.SECONDS);
    if (ha()) {
      startElection();
    }
    LOG.info("Master {} serving on {}:{} as {}", id, bind, server.port(), leading ? "leader" : "standby");
    return this;
  }

  private void startElection() throws IOException {
    roles = Executors.newSingleThreadExecutor(GrpcServer.namedDaemon("master-role"));
    long tail = conf.get(MasterKeys.JOURNAL_TAIL_INTERVAL).toMillis();
    background.scheduleWithFixedDelay(this::tailOnce, tail, tail, TimeUnit.MILLISECONDS);
    zk = CuratorFrameworkFactory.builder().connectString(conf.get(CommonKeys.ZOOKEEPER_ADDRESS))
        .sessionTimeoutMs((int) conf.get(CommonKeys.ZOOKEEPER_SESSION_TIMEOUT).toMillis())
        .connectionTimeoutMs(5000).retryPolicy(new ExponentialBackoffRetry(100, 5)).build();
    zk.start();
    latch = new LeaderLatch(zk, conf.get(CommonKeys.ZOOKEEPER_LEADER_PATH), id);
    latch.addListener(new LeaderLatchListener() {
      @Override
      public void isLeader() {
        roles.execute(MasterProcess.this::takeOver);
      }

      @Override
      public void notLeader() {
        roles.execute(MasterProcess.this::stepDown);
      }
    });
    try {
      latch.start();
    } catch (Exception e) {
      throw new IOException("Cannot join the master election at " + conf.get(CommonKeys.ZOOKEEPER_ADDRESS) + ": "
          + e.getMessage(), e);
    }
  }

  /** A standby's periodic catch-up; reloads everything when the journal moved past what it can follow. */
  private synchronized void tailOnce() {
    if (leading || closed) {
      return;
    }
    try {
      journal.tail(applier());
    } catch (CorruptJournalException e) {
      LOG.warn("Standby {} cannot follow the journal incrementally ({}); reloading it", id, e.getMessage());
      try {
        journal.close();
        journal = newJournal();
        fs = newState();
        journal.replayReadOnly(applier());
      } catch (IOException | RuntimeException e2) {
        LOG.error("Standby {} cannot reload the journal", id, e2);
      }
    } catch (IOException | RuntimeException e) {
      // Part-way (some entries applied), the journal refuses the next catch-up (CorruptJournalException above), so
      // the next round reloads rather than apply those entries twice; before any, the next round starts here again.
      LOG.error("Standby {} failed to tail the journal", id, e);
    }
  }

  private void takeOver() {
    // The fatal handler runs with this object's monitor free: MasterMain's exits the JVM, whose shutdown hook closes
    // this master under that monitor (called inside it, the exit waited for the hook, the hook for the monitor: a
    // master hung while still holding the election, with a new epoch reserved, so no one else could lead).
    if (!takeOverLocked()) {
      fatalHandler.run();
    }
  }

  /** True when this master leads now, or has nothing to do; false when it won the election but cannot lead. */
  private synchronized boolean takeOverLocked() {
    if (closed || leading) {
      return true;
    }
    if (latch != null && !latch.hasLeadership()) {
      return true; // a stale notice: leadership was lost again before it was handled, and fencing now would depose
                   // the master elected since
    }
    long t0 = System.nanoTime();
    try {
      try {
        journal.takeOver(applier());
      } catch (CorruptJournalException behind) {
        // A checkpoint removed segments this standby had not read yet (the leader checkpointed and went away within a
        // tail interval): the whole state again, from the newest checkpoint, then the catch-up (the fence stands).
        // Real damage fails the second time as the first.
        LOG.warn("Master {} cannot catch up incrementally ({}); reloading the journal before taking over", id,
            behind.getMessage());
        fs = newState();
        journal.replayReadOnly(applier());
        journal.takeOver(applier());
      }
      journal.startWriting();
      clusterId = Journal.clusterId(journal.dir());
      leading = true;
      LOG.info("Master {} is the leader (epoch {}), after applying the journal up to {} in {} ms", id,
          journal.epoch(), journal.appendedSequence(), (System.nanoTime() - t0) / 1_000_000);
      return true;
    } catch (IOException | RuntimeException e) {
      LOG.error("Master {} won the election but cannot take over the journal; giving up leadership", id, e);
      return false;
    }
  }

  /** A journal over the configured dir, watched by the metrics, whose failure makes this master step down. */
  private Journal newJournal() {
    Journal j = new Journal(journalDir(conf), conf.get(MasterKeys.JOURNAL_SEGMENT_SIZE));
    metrics.watch(j);
    // Off the failing thread, which may be an RPC handler waiting for its own flush.
    j.onFailure(e -> new Thread(() -> journalFailed(j, e), "master-journal-failed").start());
    return j;
  }

  /**
   * The journal failed for good (a disk error, or another master fenced this one): every later change fails, and
   * the changes applied in memory since the last durable entry would be served without ever becoming durable. So
   * the master steps down (exits under MasterMain), as HDFS's NameNode and Alluxio's master do; a standby, or a
   * restart, recovers from what the journal holds on disk.
   */
  private void journalFailed(Journal j, IOException e) {
    synchronized (this) {
      if (closed || j != journal) {
        return;
      }
      leading = false;
      LOG.error("Master {} cannot write its journal at {} any more ({}); it stops serving and shuts down", id,
          j.dir(), e.getMessage());
    }
    fatalHandler.run();
  }

  private void stepDown() {
    synchronized (this) {
      if (!leading || closed) {
        return;
      }
      leading = false;
      LOG.error("Master {} lost its leadership (ZooKeeper session or election lost); it stops writing and "
          + "shuts down", id);
    }
    fatalHandler.run();
  }

  /** True while this master leads (always, for a single master). */
  public boolean isLeading() {
    return leading;
  }

  /** The cluster id of the journal this master leads on (null before it leads). */
  public String clusterId() {
    return clusterId;
  }

  /** The bound RPC port. */
  public int rpcPort() {
    return server.port();
  }

  /** The web server (UI and /metrics); its {@code port()} is the bound web port. Null before start. */
  /** The web server's port; 0 before it started. */
  private int webPort() {
    io.strata.server.web.WebServer w = web;
    return w == null ? 0 : w.port();
  }

  public io.strata.server.web.WebServer web() {
    return web;
  }

  /** The under file system clients of this master (tests check what is open). */
  /** Streamed listings running now (each on a thread of the bounded listing pool). */
  public int listingsRunning() {
    return listings.running();
  }

  public UfsManager ufsManager() {
    return ufsManager;
  }

  public FileSystemMaster fileSystemMaster() {
    return fs;
  }

  public Journal journal() {
    return journal;
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      leading = false;
    }
    if (latch != null) {
      try {
        latch.close(LeaderLatch.CloseMode.SILENT);
      } catch (IOException | RuntimeException e) {
        LOG.debug("Leaving the election: {}", e.toString());
      }
    }
    if (zk != null) {
      zk.close();
    }
    if (roles != null) {
      roles.shutdownNow();
    }
    if (background != null) {
      background.shutdownNow();
    }
    if (web != null) {
      web.close();
    }
    if (server != null) {
      server.close();
    }
    listings.close();
    if (journal != null) {
      journal.close();
    }
    if (journalLock != null) {
      journalLock.close();
    }
    ufsManager.close();
    LOG.info("Master {} stopped", id);
  }
}
