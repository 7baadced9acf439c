package io.strata.master;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.master.file.FileSystemMaster;
import io.strata.master.rpc.BlockMasterWorkerService;
import io.strata.master.rpc.FileSystemMasterService;
import io.strata.server.GrpcServer;
import java.io.IOException;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running master: the namespace and block master behind one gRPC server, plus the lost-worker
 * detector. {@link #start()} once, {@link #close()} once. Several may run in one JVM (tests) since all
 * state is per instance. Thread-safe.
 */
public final class MasterProcess implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MasterProcess.class);

  private final StrataConf conf;
  private final Clock clock;
  private final FileSystemMaster fs;
  private GrpcServer server;
  private ScheduledExecutorService background;
  private boolean closed;

  public MasterProcess(StrataConf conf, Clock clock) {
    this.conf = conf;
    this.clock = clock;
    this.fs = new FileSystemMaster(clock, conf.get(MasterKeys.WORKER_TIMEOUT), conf.get(MasterKeys.BLOCK_SIZE_MAX));
  }

  public MasterProcess start() throws IOException {
    String host = conf.get(CommonKeys.MASTER_HOSTNAME);
    int port = conf.get(CommonKeys.MASTER_RPC_PORT);
    String bind = conf.get(MasterKeys.BIND_HOST);
    long startMs = clock.millis();
    server = new GrpcServer("master", bind, port, conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE), List.of(
        new FileSystemMasterService(fs, host + ":" + port, startMs, conf.get(MasterKeys.LIST_BATCH_SIZE_MAX)),
        new BlockMasterWorkerService(fs)));
    server.start();
    long check = conf.get(MasterKeys.LOST_WORKER_CHECK_INTERVAL).toMillis();
    background = Executors.newSingleThreadScheduledExecutor(GrpcServer.namedDaemon("master-lost-worker-detector"));
    background.scheduleWithFixedDelay(() -> {
      try {
        fs.blockMaster().detectLostWorkers();
      } catch (RuntimeException e) {
        LOG.error("Lost worker detection failed", e);
      }
    }, check, check, TimeUnit.MILLISECONDS);
    LOG.info("Master serving on {}:{} (advertised as {}:{})", bind, server.port(), host, server.port());
    return this;
  }

  /** The bound RPC port. */
  public int rpcPort() {
    return server.port();
  }

  public FileSystemMaster fileSystemMaster() {
    return fs;
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
    if (server != null) {
      server.close();
    }
    LOG.info("Master stopped");
  }
}
