package io.strata.client;

import io.strata.client.policy.BlockLocationPolicies;
import io.strata.client.policy.BlockLocationPolicy;
import io.strata.client.policy.BlockLocationRequest;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.net.TieredIdentity;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Chooses workers from a worker list it refreshes from the master every
 * {@link ClientKeys#WORKER_LIST_REFRESH}: the worker that receives a new block (or a file's under file
 * system copy), by the write location policy ({@link ClientKeys#WRITE_LOCATION_POLICY}); the worker that
 * reads a block from the under file system, by the UFS read policy
 * ({@link ClientKeys#UFS_READ_LOCATION_POLICY}); the nearest copy of a cached block; the local worker that
 * passively caches a block read from another host.
 *
 * <p>Distances come from {@link TieredIdentity}: this client's node and rack (keys or a script, resolved
 * once, on first use) against the node and rack each worker reported at registration.
 *
 * <p>Thread-safe.
 */
final class WorkerSelector {
  /** Where the live workers come from (the master's GetWorkers). */
  @FunctionalInterface
  interface WorkerSource {
    List<WorkerInfo> workers() throws IOException;
  }

  private final StrataConf conf;
  private final WorkerSource source;
  private final BlockLocationPolicy writePolicy;
  private final BlockLocationPolicy ufsReadPolicy;
  private final String writePolicyName;
  private final String ufsReadPolicyName;
  private final String localHost;
  private final long refreshMs;
  private volatile List<WorkerInfo> cached = List.of();
  private volatile long fetchedAtNanos;
  /** Why a policy could not be built (thrown by every choice that needs it), or null. */
  private final IOException writePolicyFailure;
  private final IOException ufsReadPolicyFailure;
  private TieredIdentity identity;
  /** Why the identity script failed (thrown by every later call), or null. */
  private IOException identityFailure;

  /**
   * A policy that cannot be built (an unknown class, SPECIFIC_HOST without a host) fails every choice that
   * needs it with an InvalidArgumentException naming the key; reads of cached blocks still work.
   */
  WorkerSelector(StrataConf conf, WorkerSource source) {
    this.conf = conf;
    this.source = source;
    this.writePolicyName = conf.get(ClientKeys.WRITE_LOCATION_POLICY);
    this.ufsReadPolicyName = conf.get(ClientKeys.UFS_READ_LOCATION_POLICY);
    BlockLocationPolicy write = null;
    BlockLocationPolicy read = null;
    IOException writeFailure = null;
    IOException readFailure = null;
    try {
      write = BlockLocationPolicies.create(writePolicyName, conf, ClientKeys.WRITE_LOCATION_POLICY.name());
    } catch (IOException e) {
      writeFailure = e;
    }
    try {
      read = BlockLocationPolicies.create(ufsReadPolicyName, conf, ClientKeys.UFS_READ_LOCATION_POLICY.name());
    } catch (IOException e) {
      readFailure = e;
    }
    this.writePolicy = write;
    this.ufsReadPolicy = read;
    this.writePolicyFailure = writeFailure;
    this.ufsReadPolicyFailure = readFailure;
    this.localHost = conf.get(ClientKeys.HOSTNAME);
    this.refreshMs = conf.get(ClientKeys.WORKER_LIST_REFRESH).toMillis();
  }

  /** This client's host name ({@link ClientKeys#HOSTNAME}). */
  String localHost() {
    return localHost;
  }

  /** This client's node and rack, resolved on first use; a failing script fails this and every later call. */
  synchronized TieredIdentity identity() throws IOException {
    if (identity == null && identityFailure == null) {
      try {
        identity = TieredIdentity.resolve(conf.get(ClientKeys.LOCALITY_NODE), conf.get(ClientKeys.LOCALITY_RACK),
            conf.get(ClientKeys.LOCALITY_SCRIPT), conf.get(ClientKeys.LOCALITY_SCRIPT_TIMEOUT),
            ClientKeys.LOCALITY_SCRIPT.name(), localHost);
      } catch (IOException e) {
        identityFailure = e;
      }
    }
    if (identityFailure != null) {
      throw identityFailure;
    }
    return identity;
  }

  /** True when {@code worker} is on this client's node (false when the identity cannot be resolved). */
  boolean isLocal(WorkerAddress worker) {
    try {
      return identity().sameNode(worker.identity());
    } catch (IOException e) {
      return false;
    }
  }

  private List<WorkerInfo> workers(boolean forceRefresh) throws IOException {
    long now = System.nanoTime();
    if (forceRefresh || cached.isEmpty() || (now - fetchedAtNanos) / 1_000_000 > refreshMs) {
      cached = source.workers();
      fetchedAtNanos = now;
    }
    return cached;
  }

  private List<WorkerInfo> live(Set<WorkerAddress> exclude) throws IOException {
    // After a failure the cached list may name dead workers and miss new ones: ask the master again.
    List<WorkerInfo> out = new ArrayList<>();
    for (WorkerInfo w : workers(!exclude.isEmpty())) {
      if (!exclude.contains(w.address())) {
        out.add(w);
      }
    }
    return out;
  }

  /** A worker for a block of up to {@code blockBytes}, avoiding {@code exclude} (workers that just failed). */
  WorkerAddress select(long blockBytes, Set<WorkerAddress> exclude) throws IOException {
    return select(BlockLocationRequest.UNKNOWN_BLOCK, blockBytes, exclude);
  }

  /** As {@link #select(long, Set)}, for block {@code blockId} (which hash-based policies use). */
  WorkerAddress select(long blockId, long blockBytes, Set<WorkerAddress> exclude) throws IOException {
    if (writePolicyFailure != null) {
      throw writePolicyFailure;
    }
    List<WorkerInfo> candidates = live(exclude);
    if (candidates.isEmpty()) {
      if (cached.isEmpty()) {
        throw new UnavailableException("No worker is registered with the master at "
            + "the moment: start a worker (bin/strata-start.sh worker) and retry");
      }
      throw new ResourceExhaustedException("No worker can take a block of " + blockBytes + " bytes ("
          + cached.size() + " workers, all " + exclude.size() + " excluded after failures)");
    }
    WorkerInfo chosen = writePolicy.choose(new BlockLocationRequest(blockId, blockBytes, candidates, identity()));
    if (chosen == null) {
      throw new ResourceExhaustedException("The write location policy " + describe(writePolicyName, writePolicy)
          + " (" + ClientKeys.WRITE_LOCATION_POLICY.name() + ") accepts none of the " + candidates.size()
          + " live workers " + addresses(candidates) + " for a block of " + blockBytes + " bytes");
    }
    return chosen.address();
  }

  /**
   * The worker that reads block {@code blockId} from the under file system, by the UFS read policy (by
   * default a worker on this node, else one chosen by a hash of the block id, so that concurrent clients
   * send a block to the same worker and it is fetched and cached once).
   */
  WorkerAddress ufsReadWorker(long blockId, Set<WorkerAddress> exclude) throws IOException {
    if (ufsReadPolicyFailure != null) {
      throw ufsReadPolicyFailure;
    }
    List<WorkerInfo> live = live(exclude);
    if (live.isEmpty()) {
      throw new UnavailableException("No live worker can read block " + blockId + " from the under file system"
          + (exclude.isEmpty() ? "" : " (failed: " + exclude + ")"));
    }
    WorkerInfo chosen = ufsReadPolicy.choose(new BlockLocationRequest(blockId, 0, live, identity()));
    if (chosen == null) {
      throw new UnavailableException("The UFS read location policy " + describe(ufsReadPolicyName, ufsReadPolicy)
          + " (" + ClientKeys.UFS_READ_LOCATION_POLICY.name() + ") accepts none of the live workers "
          + addresses(live) + " to read block " + blockId + " from the under file system");
    }
    return chosen.address();
  }

  /** A live worker on this node, chosen for {@code blockId} by a hash of it; null when none. */
  WorkerAddress localWorker(long blockId) throws IOException {
    TieredIdentity me = identity();
    List<WorkerInfo> local = new ArrayList<>();
    for (WorkerInfo w : live(Set.of())) {
      if (me.sameNode(w.address().identity())) {
        local.add(w);
      }
    }
    if (local.isEmpty()) {
      return null;
    }
    return new io.strata.client.policy.DeterministicHashPolicy()
        .choose(new BlockLocationRequest(blockId, 0, local, me)).address();
  }

  /**
   * The nearest of a block's {@code locations} not in {@code exclude}: on this node, else in this rack, else
   * the first listed; null when every location is excluded.
   */
  WorkerAddress nearest(List<BlockLocation> locations, Set<WorkerAddress> exclude) throws IOException {
    TieredIdentity me = identity();
    WorkerAddress best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (BlockLocation loc : locations) {
      if (exclude.contains(loc.address())) {
        continue;
      }
      int d = me.distanceTo(loc.address().identity());
      if (d < bestDistance) {
        best = loc.address();
        bestDistance = d;
      }
    }
    return best;
  }

  private static String describe(String name, BlockLocationPolicy policy) {
    String s = policy.toString();
    return s.contains("@") ? name : s;
  }

  private static List<String> addresses(List<WorkerInfo> workers) {
    List<String> out = new ArrayList<>();
    for (WorkerInfo w : workers) {
      out.add(w.address().toString());
    }
    return out;
  }
}
