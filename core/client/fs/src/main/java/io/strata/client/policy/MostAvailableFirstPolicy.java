package io.strata.client.policy;

import io.strata.client.WorkerInfo;

/** The worker with the most free bytes (ties: the first by address). Stateless, thread-safe. */
public final class MostAvailableFirstPolicy implements BlockLocationPolicy {
  @Override
  public WorkerInfo choose(BlockLocationRequest r) {
    return Workers.mostAvailable(r.workers());
  }
}
