package io.strata.master;

import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.StorageDirState;
import io.strata.master.block.WorkerState;
import io.strata.master.file.FileSystemMaster;
import io.strata.master.journal.Journal;
import io.strata.server.GrpcServer;
import io.strata.server.metrics.ProcessMetrics;
import io.strata.server.web.WebServer;
import java.time.Clock;
import java.util.Map;
import java.util.TreeMap;

/**
 * A master's Prometheus metrics ({@code /metrics} on its web port): leadership, live and lost workers, the
 * cluster's capacity and use per tier, each worker's heartbeat age, blocks, the persist backlog and its
 * failures, the journal's write-plus-fsync time and how long changes wait to be durable, the RPC server's
 * calls and latency, and the JVM's. Values are read at scrape time from the current namespace state; the
 * journal times are pushed by the journal ({@link #watch}).
 *
 * <p>Thread-safe: callbacks run on web server threads and take the block master's monitor briefly.
 */
final class MasterMetrics {
  /** Bucket bounds in seconds for journal times: 50 us to 5 s. */
  private static final double[] JOURNAL_BUCKETS = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
      0.025, 0.05, 0.1, 0.25, 0.5, 1, 5};

  private final Histogram journalSync;
  private final Histogram journalFlushWait;

  private MasterMetrics(PrometheusRegistry r) {
    journalSync = Histogram.builder().name("strata_master_journal_sync_seconds")
        .help("Time of each journal batch write plus fsync (one batch holds every change queued meanwhile)")
        .classicOnly().classicUpperBounds(JOURNAL_BUCKETS).register(r);
    journalFlushWait = Histogram.builder().name("strata_master_journal_flush_wait_seconds")
        .help("Time a change waited until the journal had it on disk (its append latency as callers see it)")
        .classicOnly().classicUpperBounds(JOURNAL_BUCKETS).register(r);
  }

  /** Sends the times of {@code journal}'s writes and waits to this master's histograms. */
  void watch(Journal journal) {
    journal.observe(n -> journalSync.observe(n / 1e9), n -> journalFlushWait.observe(n / 1e9));
  }

  /** Builds the metrics of {@code m} (started up to its web server) and serves them on {@code web}. */
  static MasterMetrics serve(MasterProcess m, GrpcServer server, WebServer web, Clock clock) {
    ProcessMetrics pm = new ProcessMetrics();
    PrometheusRegistry r = pm.registry();
    server.registerMetrics(r);
    MasterMetrics out = new MasterMetrics(r);
    pm.gauge("strata_master_leader", "1 while this master leads, 0 for a standby", () -> m.isLeading() ? 1 : 0);
    GaugeWithCallback.builder().name("strata_master_workers").help("Workers the master knows, by state (live, lost)")
        .labelNames("state").callback(cb -> {
          BlockMaster b = blocks(m);
          cb.call(b == null ? 0 : b.liveWorkers().size(), "live");
          cb.call(b == null ? 0 : b.lostWorkers().size(), "lost");
        }).register(r);
    GaugeWithCallback.builder().name("strata_master_capacity_bytes").help("Capacity of the live workers' good "
        + "storage dirs, per tier").labelNames("tier").callback(cb -> perTier(m, false).forEach((t, v) ->
            cb.call(v, t))).register(r);
    GaugeWithCallback.builder().name("strata_master_used_bytes").help("Bytes used in the live workers' good "
        + "storage dirs, per tier").labelNames("tier").callback(cb -> perTier(m, true).forEach((t, v) ->
            cb.call(v, t))).register(r);
    GaugeWithCallback.builder().name("strata_master_bad_dirs").help("Storage dirs of live workers out of service")
        .callback(cb -> {
          long n = 0;
          BlockMaster b = blocks(m);
          for (WorkerState w : b == null ? java.util.List.<WorkerState>of() : b.liveWorkers()) {
            n += w.dirs().stream().filter(d -> !d.good()).count();
          }
          cb.call(n);
        }).register(r);
    GaugeWithCallback.builder().name("strata_master_worker_heartbeat_age_seconds").help("Seconds since each live "
        + "worker's last heartbeat").labelNames("worker").callback(cb -> {
          BlockMaster b = blocks(m);
          long now = clock.millis();
          for (WorkerState w : b == null ? java.util.List.<WorkerState>of() : b.liveWorkers()) {
            cb.call(Math.max(0, now - w.lastHeartbeatMs()) / 1000.0, w.address().toString());
          }
        }).register(r);
    pm.gauge("strata_master_blocks", "Blocks the master knows", () -> {
      BlockMaster b = blocks(m);
      return b == null ? 0 : b.blockCount();
    });
    pm.gauge("strata_master_persist_backlog", "Files waiting to be persisted or being persisted", () -> {
      FileSystemMaster f = m.fileSystemMaster();
      return f == null ? 0 : f.persistBacklog();
    });
    pm.counter("strata_master_persist_failures_total", "Persist attempts that failed (each is retried)", () -> {
      FileSystemMaster f = m.fileSystemMaster();
      return f == null ? 0 : f.persistFailures();
    });
    pm.gauge("strata_master_journal_sequence", "Sequence of the newest journal entry", () -> {
      Journal j = m.journal();
      return j == null ? 0 : j.appendedSequence();
    });
    pm.serveOn(web);
    return out;
  }

  private static BlockMaster blocks(MasterProcess m) {
    FileSystemMaster f = m.fileSystemMaster();
    return f == null ? null : f.blockMaster();
  }

  private static Map<String, Long> perTier(MasterProcess m, boolean used) {
    Map<String, Long> out = new TreeMap<>();
    BlockMaster b = blocks(m);
    for (WorkerState w : b == null ? java.util.List.<WorkerState>of() : b.liveWorkers()) {
      for (StorageDirState d : w.dirs()) {
        if (d.good()) {
          out.merge(d.tier(), used ? d.usedBytes() : d.capacityBytes(), Long::sum);
        }
      }
    }
    return out;
  }
}
