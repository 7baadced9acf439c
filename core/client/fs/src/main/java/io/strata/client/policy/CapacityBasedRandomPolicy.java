package io.strata.client.policy;

import io.strata.client.WorkerInfo;
import io.strata.common.conf.StrataConf;
import java.util.List;
import java.util.Random;

/**
 * A random worker, each weighted by its free bytes, so that fuller workers get fewer new blocks but none
 * gets all of them. Workers with room for the block are drawn from (else all, uniformly when none has any
 * free byte). The {@link Random} is injectable for tests. Thread-safe ({@link Random} is).
 */
public final class CapacityBasedRandomPolicy implements BlockLocationPolicy {
  private final Random random;

  public CapacityBasedRandomPolicy(StrataConf conf) {
    this(new Random());
  }

  public CapacityBasedRandomPolicy(Random random) {
    this.random = random;
  }

  @Override
  public WorkerInfo choose(BlockLocationRequest r) {
    List<WorkerInfo> candidates = Workers.filter(r.workers(), w -> w.availableBytes() >= r.blockBytes());
    if (candidates.isEmpty()) {
      candidates = r.workers();
    }
    long total = 0;
    for (WorkerInfo w : candidates) {
      total += w.availableBytes();
      if (total < 0) {
        total = Long.MAX_VALUE;
        break;
      }
    }
    if (total == 0) {
      return candidates.get(random.nextInt(candidates.size()));
    }
    long point = Math.floorMod(random.nextLong(), total);
    for (WorkerInfo w : candidates) {
      point -= w.availableBytes();
      if (point < 0) {
        return w;
      }
    }
    return candidates.get(candidates.size() - 1);
  }
}
