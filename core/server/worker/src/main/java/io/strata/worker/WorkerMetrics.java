package io.strata.worker;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.strata.server.GrpcServer;
import io.strata.server.metrics.ProcessMetrics;
import io.strata.server.web.WebServer;
import io.strata.worker.rpc.StreamedBytes;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.StoreCounters;
import io.strata.worker.store.TieredBlockStore;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * A worker's Prometheus metrics ({@code /metrics} on its web port): data traffic per path and per tier, cache
 * hits and misses, evictions, capacity, use and blocks per dir, bad dirs, heartbeat age, persists, streams,
 * shuffle, the RPC server's calls and latency, and the JVM's. Every value is read at scrape time from
 * counters the worker keeps (see docs/OPERATIONS.md for the list).
 *
 * <p>Thread-safe: the callbacks run on web server threads and take at most the store's monitor briefly.
 */
final class WorkerMetrics {
  /** The data paths the byte counters are labelled with. */
  static final List<String> READ_PATHS = List.of("grpc", "domain_socket", "transfer", "short_circuit", "ufs");

  private WorkerMetrics() {}

  /** Builds the metrics of {@code w} (started up to its web server) and serves them on {@code web}. */
  static ProcessMetrics serve(WorkerProcess w, GrpcServer server, WebServer web) {
    ProcessMetrics m = new ProcessMetrics();
    PrometheusRegistry r = m.registry();
    server.registerMetrics(r);
    TieredBlockStore store = w.tieredStore();
    StoreCounters c = store.counters();
    StreamedBytes grpc = w.dataService().streamed();
    counter(r, "strata_worker_bytes_read_total", "Block bytes sent to readers, per path (short_circuit: bytes of "
        + "the blocks opened, which clients then read themselves; ufs: bytes read from under file systems)",
        "path", cb -> {
          cb.call(grpc.read(false), "grpc");
          cb.call(grpc.read(true), "domain_socket");
          cb.call(w.transfer() == null ? 0 : w.transfer().bytesSent(), "transfer");
          cb.call(w.shortCircuit() == null ? 0 : w.shortCircuit().bytesOpened(), "short_circuit");
          cb.call(w.ufsBytesRead(), "ufs");
        });
    counter(r, "strata_worker_bytes_written_total", "Bytes received from writers, per path (ufs: bytes clients "
        + "wrote to under file systems through this worker, CACHE_THROUGH and THROUGH)",
        "path", cb -> {
          cb.call(grpc.written(false), "grpc");
          cb.call(grpc.written(true), "domain_socket");
          cb.call(w.shortCircuit() == null ? 0 : w.shortCircuit().bytesCommitted(), "short_circuit");
          cb.call(w.ufs().ufsBytesWritten(), "ufs");
        });
    m.counter("strata_worker_persisted_bytes_total", "Bytes of the files this worker persisted (ASYNC_THROUGH)",
        () -> w.ufs().persistedBytes());
    m.counter("strata_worker_persist_failures_total", "Persists that failed on this worker (the master retries "
        + "them)", () -> w.ufs().persistFailures());
    m.counter("strata_worker_persists_refused_total", "Persist commands refused because the persist queue was full "
        + "(strata.worker.persist.queue.max; reported failed, the master sends them again)",
        () -> w.ufs().persistsRefused());
    perTier(r, store, "strata_worker_tier_bytes_read_total", "Block bytes served to readers, per tier",
        c::bytesRead);
    perTier(r, store, "strata_worker_tier_bytes_written_total", "Bytes of blocks committed, per tier",
        c::bytesWritten);
    perTier(r, store, "strata_worker_evictions_total", "Blocks evicted out of a tier (moved down, or deleted out "
        + "of the last), per tier", c::evictions);
    perTier(r, store, "strata_worker_evicted_bytes_total", "Bytes of the blocks evicted, per tier",
        c::evictedBytes);
    perTier(r, store, "strata_worker_tier_block_reads_total", "Block reads opened from the store, per tier",
        t -> store.readsByTier()[t]);
    m.counter("strata_worker_cache_hits_total", "Block reads served from the store (any tier)", () -> {
      long s = 0;
      for (long v : store.readsByTier()) {
        s += v;
      }
      return s;
    });
    m.counter("strata_worker_cache_misses_total", "Block reads that went to an under file system (read-through "
        + "loads and uncached reads)", w::ufsBlockReads);
    GaugeWithCallback.builder().name("strata_worker_dir_capacity_bytes").help("Quota of each storage dir")
        .labelNames("tier", "dir").callback(cb -> eachDir(store, (d, blocks) -> cb.call(d.capacityBytes(),
            d.tier(), d.path()))).register(r);
    GaugeWithCallback.builder().name("strata_worker_dir_used_bytes").help("Bytes used in each storage dir "
        + "(0 for a bad dir)").labelNames("tier", "dir").callback(cb -> eachDir(store, (d, blocks) ->
            cb.call(d.usedBytes(), d.tier(), d.path()))).register(r);
    GaugeWithCallback.builder().name("strata_worker_dir_blocks").help("Committed blocks in each storage dir")
        .labelNames("tier", "dir").callback(cb -> eachDir(store, (d, blocks) -> cb.call(blocks, d.tier(),
            d.path()))).register(r);
    GaugeWithCallback.builder().name("strata_worker_dir_good").help("1 for a storage dir in service, 0 for a "
        + "bad one").labelNames("tier", "dir").callback(cb -> eachDir(store, (d, blocks) ->
            cb.call(d.good() ? 1 : 0, d.tier(), d.path()))).register(r);
    GaugeWithCallback.builder().name("strata_worker_dir_lost_blocks").help("Blocks lost with a failed dir")
        .labelNames("tier", "dir").callback(cb -> eachDir(store, (d, blocks) -> cb.call(d.lostBlocks(),
            d.tier(), d.path()))).register(r);
    m.gauge("strata_worker_bad_dirs", "Storage dirs out of service", () ->
        store.dirReports().stream().filter(d -> !d.good()).count());
    m.gauge("strata_worker_heartbeat_age_seconds", "Seconds since the master last answered this worker's "
        + "heartbeat (since the start, before the first)", () -> w.heartbeatAgeMs() / 1000.0);
    m.gauge("strata_worker_registered", "1 once the master accepted this worker's registration",
        () -> w.isRegistered() ? 1 : 0);
    m.gauge("strata_worker_persists_active", "Files queued or being persisted to under file systems now", w::persistsActive);
    m.gauge("strata_worker_async_cache_pending", "Background cache requests queued or running",
        w::asyncCachePending);
    m.gauge("strata_worker_open_streams", "Data streams (block reads and writes, UFS writes) open now",
        w::openStreams);
    m.counter("strata_worker_short_circuit_opens_total", "Blocks opened for short-circuit reads",
        () -> w.shortCircuit() == null ? 0 : w.shortCircuit().opens());
    m.counter("strata_worker_transfer_requests_total", "Block transfer requests served",
        () -> w.transfer() == null ? 0 : w.transfer().requests());
    shuffle(m, w.shuffle());
    return m.serveOn(web);
  }

  private static void shuffle(ProcessMetrics m, io.strata.worker.shuffle.ShuffleWorker s) {
    m.counter("strata_worker_shuffle_pushed_batches_total", "Shuffle batches appended (forwarded ones on a "
        + "replica included)", () -> s.pipeline().appliedBatches());
    m.counter("strata_worker_shuffle_pushed_bytes_total", "Bytes of the shuffle batches appended",
        () -> s.pipeline().appliedBytes());
    m.counter("strata_worker_shuffle_backoffs_total", "Shuffle pushes answered BACK_OFF (buffer or queue full)",
        () -> s.pipeline().backOffs());
    m.gauge("strata_worker_shuffle_buffered_bytes", "Bytes of shuffle pushes received and not yet answered",
        () -> s.pipeline().bufferedBytes());
    m.gauge("strata_worker_shuffle_open_partitions", "Shuffle partitions open on this worker",
        () -> s.store().openPartitions());
    m.counter("strata_worker_shuffle_sealed_total", "Shuffle partitions sealed", () -> s.store().sealed());
    m.counter("strata_worker_shuffle_sealed_bytes_total", "Bytes of the shuffle partitions sealed",
        () -> s.store().sealedBytes());
    m.counter("strata_worker_shuffle_seal_failures_total", "Shuffle partition seals that failed",
        () -> s.store().sealFailures());
  }

  private static void eachDir(TieredBlockStore store, BiConsumer<BlockStore.DirReport, Long> each) {
    List<BlockStore.DirReport> dirs = store.dirReports();
    long[] blocks = store.dirBlockCounts();
    for (int i = 0; i < dirs.size(); i++) {
      each.accept(dirs.get(i), i < blocks.length ? blocks[i] : 0);
    }
  }

  private static void counter(PrometheusRegistry r, String name, String help, String label,
      java.util.function.Consumer<CounterWithCallback.Callback> values) {
    CounterWithCallback.builder().name(name).help(help).labelNames(label).callback(values).register(r);
  }

  private static void perTier(PrometheusRegistry r, TieredBlockStore store, String name, String help,
      java.util.function.IntToLongFunction value) {
    CounterWithCallback.builder().name(name).help(help).labelNames("tier").callback(cb -> {
      for (int t = 0; t < store.tierCount(); t++) {
        cb.call(value.applyAsLong(t), store.tierAlias(t));
      }
    }).register(r);
  }
}
