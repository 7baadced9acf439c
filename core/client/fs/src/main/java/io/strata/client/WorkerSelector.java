package io.strata.client;

import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Chooses the worker that receives a new block, by the configured location policy, from a worker list it
 * refreshes from the master every {@link ClientKeys#WORKER_LIST_REFRESH}. Thread-safe.
 */
final class WorkerSelector {
  private final FileSystem fs;
  private final String policy;
  private final String localHost;
  private final long refreshMs;
  private final AtomicLong turn = new AtomicLong();
  private volatile List<WorkerInfo> cached = List.of();
  private volatile long fetchedAtNanos;

  WorkerSelector(FileSystemContext context, FileSystem fs) {
    this.fs = fs;
    this.policy = context.conf().get(ClientKeys.WRITE_LOCATION_POLICY);
    this.localHost = context.conf().get(ClientKeys.HOSTNAME);
    this.refreshMs = context.conf().get(ClientKeys.WORKER_LIST_REFRESH).toMillis();
  }

  private List<WorkerInfo> workers(boolean forceRefresh) throws IOException {
    long now = System.nanoTime();
    if (forceRefresh || cached.isEmpty() || (now - fetchedAtNanos) / 1_000_000 > refreshMs) {
      cached = fs.getWorkers();
      fetchedAtNanos = now;
    }
    return cached;
  }

  /** A worker for a block of up to {@code blockBytes}, avoiding {@code exclude} (workers that just failed). */
  WorkerAddress select(long blockBytes, Set<WorkerAddress> exclude) throws IOException {
    List<WorkerInfo> all = workers(!exclude.isEmpty());
    if (all.isEmpty()) {
      throw new UnavailableException("No worker is registered with the master at "
          + "the moment: start a worker (bin/strata-start.sh worker) and retry");
    }
    List<WorkerInfo> candidates = new ArrayList<>();
    for (WorkerInfo w : all) {
      if (!exclude.contains(w.address()) && w.availableBytes() >= blockBytes) {
        candidates.add(w);
      }
    }
    if (candidates.isEmpty()) {
      for (WorkerInfo w : all) {
        if (!exclude.contains(w.address()) && w.availableBytes() > 0) {
          candidates.add(w);
        }
      }
    }
    if (candidates.isEmpty()) {
      // Full workers still take writes: they make room by evicting their coldest blocks.
      for (WorkerInfo w : all) {
        if (!exclude.contains(w.address())) {
          candidates.add(w);
        }
      }
    }
    if (candidates.isEmpty()) {
      throw new ResourceExhaustedException("No worker can take a block of " + blockBytes + " bytes ("
          + all.size() + " workers, all " + exclude.size() + " excluded after failures)");
    }
    candidates.sort(Comparator.comparing((WorkerInfo w) -> w.address().toString()));
    switch (policy) {
      case "MOST_AVAILABLE_FIRST":
        return candidates.stream().max(Comparator.comparingLong(WorkerInfo::availableBytes)).get().address();
      case "ROUND_ROBIN":
        return roundRobin(candidates);
      default: {
        List<WorkerInfo> local = new ArrayList<>();
        for (WorkerInfo w : candidates) {
          if (w.address().host().equals(localHost)) {
            local.add(w);
          }
        }
        return roundRobin(local.isEmpty() ? candidates : local);
      }
    }
  }

  private WorkerAddress roundRobin(List<WorkerInfo> list) {
    return list.get((int) Math.floorMod(turn.getAndIncrement(), (long) list.size())).address();
  }
}
