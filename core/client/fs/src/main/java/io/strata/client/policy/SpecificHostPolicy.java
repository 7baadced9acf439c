package io.strata.client.policy;

import io.strata.client.ClientKeys;
import io.strata.client.WorkerInfo;
import io.strata.common.conf.StrataConf;
import java.util.List;

/**
 * A worker on the host named by {@link ClientKeys#LOCATION_POLICY_HOST} (its advertised host name or its
 * node); among several there, the one with the most free bytes. None there: null, and the caller fails
 * naming the host. Stateless, thread-safe.
 */
public final class SpecificHostPolicy implements BlockLocationPolicy {
  private final String host;

  public SpecificHostPolicy(StrataConf conf) {
    this.host = conf.get(ClientKeys.LOCATION_POLICY_HOST).trim();
    if (host.isEmpty()) {
      throw new IllegalArgumentException("The SpecificHost location policy needs a host: set "
          + ClientKeys.LOCATION_POLICY_HOST.name());
    }
  }

  /** The host this policy sends blocks to. */
  public String host() {
    return host;
  }

  @Override
  public WorkerInfo choose(BlockLocationRequest r) {
    List<WorkerInfo> there = Workers.filter(r.workers(),
        w -> w.address().host().equals(host) || w.address().identity().node().equals(host));
    return there.isEmpty() ? null : Workers.mostAvailable(there);
  }

  @Override
  public String toString() {
    return "SpecificHost(" + host + ")";
  }
}
