package io.strata.master;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.StrataException;
import io.strata.master.file.FileSystemMaster;
import io.strata.master.journal.CorruptJournalException;
import io.strata.master.journal.Journal;
import io.strata.master.rpc.BlockMasterWorkerService;
import io.strata.master.rpc.FileSystemMasterService;
import io.strata.server.GrpcServer;
import io.strata.server.ServerKeys;
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
 * A running master: recovers the namespace from its journal (checkpoint + replay), then serves the
 * namespace and block master behind one gRPC server, with the lost-worker detector and the checkpointer
 * in the background. {@link #start()} once, {@link #close()} once. Several may run in one JVM (tests)
 * since all state is per instance. Thread-safe.
 */
public final class MasterProcess implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MasterProcess.class);

  private final StrataConf conf;
  private final Clock clock;
  private FileSystemMaster fs;
  private Journal journal;
  private GrpcServer server;
  private ScheduledExecutorService background;
  private boolean closed;

  public MasterProcess(StrataConf conf, Clock clock) {
    this.conf = conf;
    this.clock = clock;
  }

  /** The journal dir the configuration names. */
  public static Path journalDir(StrataConf conf) {
    Path home = Path.of(conf.get(CommonKeys.HOME));
    if (conf.isSet(MasterKeys.JOURNAL_DIR)) {
      return home.resolve(conf.get(MasterKeys.JOURNAL_DIR));
    }
    return home.resolve(conf.get(ServerKeys.DATA_DIR)).resolve("journal");
  }

  public MasterProcess start() throws IOException {
    journal = new Journal(journalDir(conf), conf.get(MasterKeys.JOURNAL_SEGMENT_SIZE));
    fs = new FileSystemMaster(clock, conf.get(MasterKeys.WORKER_TIMEOUT), conf.get(MasterKeys.BLOCK_SIZE_MAX),
        journal);
    long t0 = System.nanoTime();
    long[] count = new long[1];
    try {
      journal.replay(entry -> {
        try {
          fs.replay(entry);
          count[0]++;
        } catch (StrataException e) {
          throw new IllegalStateException("Journal entry " + entry + " does not apply: " + e.getMessage(), e);
        }
      });
    } catch (IllegalStateException e) {
      throw new CorruptJournalException("The journal at " + journal.dir() + " does not replay: " + e.getMessage());
    }
    journal.startWriting();
    LOG.info("Recovered {} journal entries from {} in {} ms", count[0], journal.dir(),
        (System.nanoTime() - t0) / 1_000_000);

    String host = conf.get(CommonKeys.MASTER_HOSTNAME);
    int port = conf.get(CommonKeys.MASTER_RPC_PORT);
    String bind = conf.get(MasterKeys.BIND_HOST);
    long startMs = clock.millis();
    server = new GrpcServer("master", bind, port, conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE), List.of(
        new FileSystemMasterService(io.strata.master.rpc.MasterState.of(fs), host + ":" + port, startMs,
            conf.get(MasterKeys.LIST_BATCH_SIZE_MAX)),
        new BlockMasterWorkerService(io.strata.master.rpc.MasterState.of(fs))));
    try {
      server.start();
    } catch (IOException e) {
      journal.close();
      throw e;
    }
    long check = conf.get(MasterKeys.LOST_WORKER_CHECK_INTERVAL).toMillis();
    background = Executors.newScheduledThreadPool(2, GrpcServer.namedDaemon("master-background"));
    background.scheduleWithFixedDelay(() -> {
      try {
        fs.blockMaster().detectLostWorkers();
      } catch (RuntimeException e) {
        LOG.error("Lost worker detection failed", e);
      }
    }, check, check, TimeUnit.MILLISECONDS);
    long period = conf.get(MasterKeys.JOURNAL_CHECKPOINT_ENTRIES);
    long[] lastCheckpoint = {journal.appendedSequence()};
    background.scheduleWithFixedDelay(() -> {
      try {
        if (journal.appendedSequence() - lastCheckpoint[0] >= period) {
          lastCheckpoint[0] = journal.appendedSequence();
          fs.checkpoint();
        }
      } catch (IOException | RuntimeException e) {
        LOG.error("Writing a checkpoint failed (the journal still has every entry)", e);
      }
    }, 1, 1, TimeUnit.SECONDS);
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

  public Journal journal() {
    return journal;
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
    if (journal != null) {
      journal.close();
    }
    LOG.info("Master stopped");
  }
}
