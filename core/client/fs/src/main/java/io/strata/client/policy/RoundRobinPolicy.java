package io.strata.client.policy;

import io.strata.client.WorkerInfo;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every worker with room for the block in turn, by address order (else every worker with any free room,
 * else every worker), whatever its distance. Thread-safe.
 */
public final class RoundRobinPolicy implements BlockLocationPolicy {
  private final AtomicLong turn = new AtomicLong();

  @Override
  public WorkerInfo choose(BlockLocationRequest r) {
    List<WorkerInfo> candidates = Workers.withRoom(r.workers(), r.blockBytes());
    return candidates.get((int) Math.floorMod(turn.getAndIncrement(), (long) candidates.size()));
  }
}
