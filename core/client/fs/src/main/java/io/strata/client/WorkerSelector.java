package io.strata.client;

import io.strata.common.conf.StrataConf;
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
 * Chooses workers from a worker list it refreshes from the master every
 * {@link ClientKeys#WORKER_LIST_REFRESH}: the worker that receives a new block (or a file's under file
 * system copy), by the configured location policy; the worker that reads a block from the under file
 * system; the local worker that passively caches a block read from another host. Thread-safe.
 */
final class WorkerSelector {
  /** Where the live workers come from (the master's GetWorkers). */
  @FunctionalInterface
  interface WorkerSource {
    List<WorkerInfo> workers() throws IOException;
  }

  private final WorkerSource source;
  private final String policy;
  private final String localHost;
  private final long refreshMs;
  private final AtomicLong turn = new AtomicLong();
  private volatile List<WorkerInfo> cached = List.of();
  private volatile long fetchedAtNanos;

  WorkerSelector(StrataConf conf, WorkerSource source) {
    this.source = source;
    this.policy = conf.get(ClientKeys.WRITE_LOCATION_POLICY);
    this.localHost = conf.get(ClientKeys.HOSTNAME);
    this.refreshMs = conf.get(ClientKeys.WORKER_LIST_REFRESH).toMillis();
  }

  /** This client's host name ({@link ClientKeys#HOSTNAME}). */
  String localHost() {
    return localHost;
  }

  private List<WorkerInfo> workers(boolean forceRefresh) throws IOException {
    long now = System.nanoTime();
    if (forceRefresh || cached.isEmpty() || (now - fetchedAtNanos) / 1_000_000 > refreshMs) {
      cached = source.workers();
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

  /**
   * The worker that reads block {@code blockId} from the under file system: a worker on this host if there
   * is one, else one chosen by a hash of the block id over the live workers sorted by address, so that
   * concurrent clients send a block to the same worker and it is fetched and cached once.
   */
  WorkerAddress ufsReadWorker(long blockId, Set<WorkerAddress> exclude) throws IOException {
    List<WorkerAddress> live = liveAddresses(exclude);
    if (live.isEmpty()) {
      throw new UnavailableException("No live worker can read block " + blockId + " from the under file system"
          + (exclude.isEmpty() ? "" : " (failed: " + exclude + ")"));
    }
    List<WorkerAddress> local = local(live);
    return pick(blockId, local.isEmpty() ? live : local);
  }

  /** A live worker on this host, chosen for {@code blockId} as {@link #ufsReadWorker} does; null when none. */
  WorkerAddress localWorker(long blockId) throws IOException {
    List<WorkerAddress> local = local(liveAddresses(Set.of()));
    return local.isEmpty() ? null : pick(blockId, local);
  }

  private List<WorkerAddress> liveAddresses(Set<WorkerAddress> exclude) throws IOException {
    List<WorkerAddress> out = new ArrayList<>();
    // After a failure the cached list may name dead workers and miss new ones: ask the master again.
    for (WorkerInfo w : workers(!exclude.isEmpty())) {
      if (!exclude.contains(w.address())) {
        out.add(w.address());
      }
    }
    out.sort(Comparator.comparing(WorkerAddress::toString));
    return out;
  }

  private List<WorkerAddress> local(List<WorkerAddress> workers) {
    List<WorkerAddress> out = new ArrayList<>();
    for (WorkerAddress w : workers) {
      if (w.host().equals(localHost)) {
        out.add(w);
      }
    }
    return out;
  }

  /** {@code sorted.get(hash(blockId) mod size)}: the same on every client that sees the same workers. */
  static WorkerAddress pick(long blockId, List<WorkerAddress> sorted) {
    return sorted.get((int) Math.floorMod(mix(blockId), (long) sorted.size()));
  }

  /** A fixed 64-bit mix (SplitMix64's finaliser): consecutive block ids spread over the workers. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
