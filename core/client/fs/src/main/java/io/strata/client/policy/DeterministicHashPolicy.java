package io.strata.client.policy;

import io.strata.client.WorkerInfo;
import java.util.List;

/**
 * A worker chosen by a hash of the block id over the workers sorted by address, so that every client that
 * sees the same workers sends a block to the same worker: concurrent readers of a block that is not
 * cached yet meet at one worker, which reads it from the under file system once. Workers on the client's
 * node come first (the hash then picks among them): a local read needs no network hop and readers on one
 * node still converge. The default UFS read policy. Stateless, thread-safe.
 */
public final class DeterministicHashPolicy implements BlockLocationPolicy {
  @Override
  public WorkerInfo choose(BlockLocationRequest r) {
    List<WorkerInfo> local = Workers.filter(r.workers(), w -> r.distance(w) == 0);
    List<WorkerInfo> from = local.isEmpty() ? r.workers() : local;
    return from.get(index(r.blockId(), from.size()));
  }

  /** {@code hash(blockId) mod size}: the same on every client. */
  static int index(long blockId, int size) {
    return (int) Math.floorMod(mix(blockId), (long) size);
  }

  /** A fixed 64-bit mix (SplitMix64's finaliser): consecutive block ids spread over the workers. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
