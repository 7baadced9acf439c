package io.strata.worker;

import io.grpc.ManagedChannel;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.net.WorkerAddress;
import io.strata.server.GrpcServer;
import io.strata.worker.rpc.BlockWorkerService;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.LocalDirBlockStore;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running worker: its block store, its data server and its master sync. {@link #start()} once,
 * {@link #close()} once; several may run in one JVM with their own ports and dirs. Thread-safe.
 */
public final class WorkerProcess implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerProcess.class);

  private final StrataConf conf;
  private final Clock clock;
  private GrpcServer server;
  private ManagedChannel masterChannel;
  private ScheduledExecutorService heartbeat;
  private MasterSync sync;
  private BlockStore store;
  private Path dir;
  private boolean closed;

  public WorkerProcess(StrataConf conf, Clock clock) {
    this.conf = conf;
    this.clock = clock;
  }

  public WorkerProcess start() throws IOException {
    int port = conf.get(WorkerKeys.RPC_PORT);
    String bind = conf.get(WorkerKeys.BIND_HOST);
    long maxMessage = conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE);
    int maxChunk = (int) Math.min(conf.get(WorkerKeys.READ_CHUNK_SIZE_MAX), maxMessage - 1024);
    // The data server binds first, so that port 0 resolves before the store dir name needs it.
    DeferredStore deferred = new DeferredStore();
    server = new GrpcServer("worker", bind, port, maxMessage, List.of(new BlockWorkerService(deferred,
        (id, len, tier) -> sync.commitBlock(id, len, tier), id -> sync.blockRemoved(id), maxChunk)));
    server.start();
    int actualPort = server.port();
    List<String> dirs = conf.get(WorkerKeys.TIER0_DIRS);
    if (dirs.size() != 1) {
      server.close();
      throw new IllegalArgumentException("strata.worker.tier.0.dirs must name exactly one directory for now, got "
          + dirs);
    }
    dir = Path.of(dirs.get(0).replace("${strata.worker.rpc.port}", Integer.toString(actualPort)));
    try {
      store = new LocalDirBlockStore(dir, conf.get(WorkerKeys.TIER0_ALIAS), conf.get(WorkerKeys.TIER0_QUOTA));
    } catch (IOException e) {
      server.close();
      throw new IOException("Cannot open the worker's storage dir " + dir + ": " + e.getMessage(), e);
    }
    deferred.set(store);
    WorkerAddress address = new WorkerAddress(conf.get(WorkerKeys.HOSTNAME), actualPort);
    masterChannel = GrpcChannels.forAddress(conf.get(CommonKeys.MASTER_HOSTNAME),
        conf.get(CommonKeys.MASTER_RPC_PORT), maxMessage);
    sync = new MasterSync(masterChannel, store, address, conf.get(CommonKeys.RPC_TIMEOUT).toMillis(), clock);
    long interval = conf.get(WorkerKeys.HEARTBEAT_INTERVAL).toMillis();
    heartbeat = Executors.newSingleThreadScheduledExecutor(GrpcServer.namedDaemon("worker-" + actualPort + "-heartbeat"));
    heartbeat.scheduleWithFixedDelay(sync::tick, 0, interval, TimeUnit.MILLISECONDS);
    LOG.info("Worker serving on {}:{} (advertised as {}), storage {}", bind, actualPort, address, dir);
    return this;
  }

  public int rpcPort() {
    return server.port();
  }

  public Path storageDir() {
    return dir;
  }

  public BlockStore store() {
    return store;
  }

  /** True once the master has accepted this worker's registration. */
  public boolean isRegistered() {
    return sync != null && sync.isRegistered();
  }

  public long workerId() {
    return sync.workerId();
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    int port = server == null ? -1 : server.port();
    if (heartbeat != null) {
      heartbeat.shutdownNow();
    }
    if (server != null) {
      server.close();
    }
    if (masterChannel != null) {
      GrpcChannels.close(masterChannel);
    }
    LOG.info("Worker on port {} stopped", port);
  }
}
