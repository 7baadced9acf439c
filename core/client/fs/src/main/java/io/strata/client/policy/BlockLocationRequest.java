package io.strata.client.policy;

import io.strata.client.WorkerInfo;
import io.strata.common.net.TieredIdentity;
import java.util.Comparator;
import java.util.List;

/**
 * What a {@link BlockLocationPolicy} chooses from: the block (its id, or {@link #UNKNOWN_BLOCK}), the bytes
 * it needs (0 when unknown, as for a read from the under file system), the live workers sorted by address
 * (so that every client sees them in one order) and the client's own {@link TieredIdentity}. Immutable.
 */
public record BlockLocationRequest(long blockId, long blockBytes, List<WorkerInfo> workers, TieredIdentity client) {
  /** The block id of a request made without one. */
  public static final long UNKNOWN_BLOCK = -1;

  private static final Comparator<WorkerInfo> BY_ADDRESS = Comparator.comparing((WorkerInfo w) -> w.address().host())
      .thenComparingInt(w -> w.address().rpcPort());

  public BlockLocationRequest {
    if (workers.isEmpty()) {
      throw new IllegalArgumentException("A block location request needs at least one worker");
    }
    workers = workers.stream().sorted(BY_ADDRESS).toList();
  }

  /** How far {@code w} is from the client: 0 same node, 1 same rack, 2 elsewhere. */
  public int distance(WorkerInfo w) {
    return client.distanceTo(w.address().identity());
  }
}
