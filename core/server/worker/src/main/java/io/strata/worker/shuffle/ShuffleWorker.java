package io.strata.worker.shuffle;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.server.GrpcServer;
import io.strata.worker.WorkerKeys;
import io.strata.worker.rpc.Committer;
import io.strata.worker.store.BlockStore;
import io.strata.worker.ufs.UfsOperations;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The worker's shuffle part, built from its configuration: the partition files ({@link ShuffleStore}),
 * the push pipeline with its bounded apply pool, the seal pool and the pool its requests seal files on, the replica client and the gRPC service;
 * {@link #close()} stops the pools and the replica channels. Built once per worker, thread-safe.
 */
public final class ShuffleWorker implements AutoCloseable {
  private final ThreadPoolExecutor applyPool;
  private final ThreadPoolExecutor sealPool;
  private final ThreadPoolExecutor sealFilePool;
  private final ReplicaClient replicas;
  private final ShuffleStore store;
  private final PushPipeline pipeline;
  private final ShuffleService service;

  public ShuffleWorker(StrataConf conf, BlockStore blocks, Committer committer, UfsOperations ufs, String name) {
    int apply = conf.get(WorkerKeys.SHUFFLE_APPLY_THREADS);
    applyPool = new ThreadPoolExecutor(apply, apply, 0, TimeUnit.MILLISECONDS,
        new ArrayBlockingQueue<>(conf.get(WorkerKeys.SHUFFLE_APPLY_QUEUE_MAX)),
        GrpcServer.namedDaemon(name + "-shuffle-apply"));
    int seal = conf.get(WorkerKeys.SHUFFLE_SEAL_THREADS);
    // Seal and drop requests waiting for a thread: a driver sends one per round, so a few; each may hold a
    // message of up to the network limit, hence a short queue (a full one answers UNAVAILABLE at once).
    sealPool = new ThreadPoolExecutor(seal, seal, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(64),
        GrpcServer.namedDaemon(name + "-shuffle-seal"));
    // Unbounded queue: a seal request (each file id once) queues at most the partitions open here, and waits
    // for them.
    int sealFiles = conf.get(WorkerKeys.SHUFFLE_SEAL_FILE_THREADS);
    sealFilePool = new ThreadPoolExecutor(sealFiles, sealFiles, 30, TimeUnit.SECONDS,
        new java.util.concurrent.LinkedBlockingQueue<>(), GrpcServer.namedDaemon(name + "-shuffle-seal-file"));
    sealFilePool.allowCoreThreadTimeOut(true);
    long maxMessage = conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE);
    replicas = new ReplicaClient(maxMessage, conf.get(WorkerKeys.SHUFFLE_FORWARD_TIMEOUT).toMillis());
    // A primary holds at most its watermark, or one push of a message's size, in flight; twice that (batch headers
    // included) is a bound no primary's forwards reach: how far ahead a forward may wait, and the forwards held.
    long forwardBound = 2 * Math.max(conf.get(WorkerKeys.SHUFFLE_BUFFER_HIGH_WATERMARK), maxMessage);
    store = new ShuffleStore(blocks, committer, ufs, Math.min(conf.get(WorkerKeys.SHUFFLE_BATCH_SIZE_MAX),
        maxMessage - 4096), sealFilePool, conf.get(WorkerKeys.SHUFFLE_APPEND_BUFFER_MAX), forwardBound,
        conf.get(WorkerKeys.SHUFFLE_REPLICA_PARKED_MAX), conf.get(WorkerKeys.SHUFFLE_PARTITIONS_MAX));
    pipeline = new PushPipeline(store, replicas, applyPool, conf.get(WorkerKeys.SHUFFLE_BUFFER_HIGH_WATERMARK),
        forwardBound, conf.get(WorkerKeys.SHUFFLE_BACKOFF).toMillis());
    service = new ShuffleService(store, pipeline, sealPool);
  }

  public ShuffleService service() {
    return service;
  }

  public ShuffleStore store() {
    return store;
  }

  /** Forwards to replicas sent again after a BACK_OFF answer, so far. */
  public long forwardResends() {
    return replicas.resends();
  }

  public PushPipeline pipeline() {
    return pipeline;
  }

  @Override
  public void close() {
    applyPool.shutdownNow();
    sealPool.shutdownNow();
    sealFilePool.shutdownNow();
    replicas.close();
  }
}
