package io.strata.client.policy;

import io.strata.client.WorkerInfo;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The nearest worker with room: among the workers with free room for the block (else those with any free
 * room, else all of them, which make room by evicting), the ones nearest to the client (same node, then
 * same rack, then any), taken in turn. The default write policy ({@code LOCAL_FIRST}). Thread-safe.
 */
public final class LocalFirstPolicy implements BlockLocationPolicy {
  private final AtomicLong turn = new AtomicLong();

  @Override
  public WorkerInfo choose(BlockLocationRequest r) {
    List<WorkerInfo> nearest = Workers.nearest(r, Workers.withRoom(r.workers(), r.blockBytes()));
    return nearest.get((int) Math.floorMod(turn.getAndIncrement(), (long) nearest.size()));
  }
}
