package io.strata.client.policy;

import io.strata.client.WorkerInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** List helpers the policies share. Stateless. */
final class Workers {
  private Workers() {}

  static List<WorkerInfo> filter(List<WorkerInfo> workers, Predicate<WorkerInfo> keep) {
    List<WorkerInfo> out = new ArrayList<>();
    for (WorkerInfo w : workers) {
      if (keep.test(w)) {
        out.add(w);
      }
    }
    return out;
  }

  /**
   * The workers with free room for {@code bytes} without evicting; else those with any free room; else all
   * (a full worker still takes a write: it makes room by evicting its coldest blocks).
   */
  static List<WorkerInfo> withRoom(List<WorkerInfo> workers, long bytes) {
    List<WorkerInfo> out = filter(workers, w -> w.availableBytes() >= bytes);
    if (out.isEmpty()) {
      out = filter(workers, w -> w.availableBytes() > 0);
    }
    return out.isEmpty() ? workers : out;
  }

  /** The workers of {@code workers} nearest to the client (all at the smallest distance). */
  static List<WorkerInfo> nearest(BlockLocationRequest r, List<WorkerInfo> workers) {
    int best = Integer.MAX_VALUE;
    for (WorkerInfo w : workers) {
      best = Math.min(best, r.distance(w));
    }
    int min = best;
    return filter(workers, w -> r.distance(w) == min);
  }

  /** The worker with the most free bytes; ties go to the first in list order. */
  static WorkerInfo mostAvailable(List<WorkerInfo> workers) {
    WorkerInfo best = null;
    for (WorkerInfo w : workers) {
      if (best == null || w.availableBytes() > best.availableBytes()) {
        best = w;
      }
    }
    return best;
  }
}
