package io.strata.client.policy;

import io.strata.client.ClientKeys;
import io.strata.client.WorkerInfo;
import io.strata.common.conf.StrataConf;
import java.util.List;

/**
 * A worker on the client's node, unless it lacks room for the block without evicting: a worker has room
 * when the free bytes the master reports, less {@link ClientKeys#AVOID_EVICTION_RESERVED}, cover the block.
 * Without a local worker with room: the worker with room that has the most free bytes; when no worker has
 * room, the one with the most free bytes (it will evict). Unlike {@link LocalFirstPolicy} it never picks a
 * local worker that would have to evict while another has room, and it ignores racks. Thread-safe.
 */
public final class LocalFirstAvoidEvictionPolicy implements BlockLocationPolicy {
  private final long reservedBytes;

  public LocalFirstAvoidEvictionPolicy(StrataConf conf) {
    this.reservedBytes = conf.get(ClientKeys.AVOID_EVICTION_RESERVED);
  }

  @Override
  public WorkerInfo choose(BlockLocationRequest r) {
    List<WorkerInfo> roomy = Workers.filter(r.workers(),
        w -> w.availableBytes() - reservedBytes >= r.blockBytes());
    List<WorkerInfo> local = Workers.filter(roomy, w -> r.distance(w) == 0);
    if (!local.isEmpty()) {
      return Workers.mostAvailable(local);
    }
    return Workers.mostAvailable(roomy.isEmpty() ? r.workers() : roomy);
  }
}
