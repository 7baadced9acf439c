package io.strata.client;

import io.grpc.stub.StreamObserver;
import io.strata.client.options.ReadType;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.CacheBlockRequest;
import io.strata.proto.CacheBlockResponse;
import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Passive caching for one {@link FileInStream} ({@link ClientKeys#PASSIVE_CACHE_ENABLED}, unless the read type is
 * NO_CACHE): once a block has been read whole from a worker on another host, a worker on this host, if any, is
 * asked to cache it (CacheBlock, fire and forget), once per block per stream.
 *
 * <p>Not thread-safe: its stream's one reader; the answers arrive on gRPC threads and are only logged.
 */
final class PassiveCaching {
  private static final Logger LOG = LoggerFactory.getLogger(PassiveCaching.class);

  private final FileSystemContext context;
  private final WorkerSelector selector;
  private final boolean enabled;
  private final Set<Long> cacheRequested = new HashSet<>();

  PassiveCaching(FileSystemContext context, WorkerSelector selector, ReadType readType) {
    this.context = context;
    this.selector = selector;
    this.enabled = readType != ReadType.NO_CACHE && context.conf().get(ClientKeys.PASSIVE_CACHE_ENABLED);
  }

  /** {@code block} was read to its end from {@code from}: when that is another host, this host's worker caches it. */
  void blockRead(FileBlockInfo block, WorkerAddress from) {
    if (!enabled || selector.isLocal(from) || !cacheRequested.add(block.blockId())) {
      return;
    }
    WorkerAddress local;
    try {
      local = selector.localWorker(block.blockId());
    } catch (IOException e) {
      LOG.debug("Passive caching of block {} skipped: no worker list", block.blockId(), e);
      return;
    }
    if (local == null) {
      return;
    }
    try {
      context.worker(local).cacheBlock(CacheBlockRequest.newBuilder().setBlockId(block.blockId()).build(),
          new StreamObserver<CacheBlockResponse>() {
            @Override
            public void onNext(CacheBlockResponse value) {
              if (!value.getAccepted()) {
                LOG.debug("Worker {} declined to cache block {} (its queue is full)", local, block.blockId());
              }
            }

            @Override
            public void onError(Throwable t) {
              LOG.debug("Passive caching of block {} on worker {} failed", block.blockId(), local, t);
            }

            @Override
            public void onCompleted() {}
          });
    } catch (RuntimeException e) {
      LOG.debug("Passive caching of block {} on worker {} failed", block.blockId(), local, e);
    }
  }
}
