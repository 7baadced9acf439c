package io.strata.common.net;

import java.util.Objects;

/** Where a worker serves: host and RPC port. Immutable value. */
public final class WorkerAddress {
  private final String host;
  private final int rpcPort;

  public WorkerAddress(String host, int rpcPort) {
    this.host = Objects.requireNonNull(host);
    this.rpcPort = rpcPort;
  }

  public String host() {
    return host;
  }

  public int rpcPort() {
    return rpcPort;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof WorkerAddress)) {
      return false;
    }
    WorkerAddress w = (WorkerAddress) o;
    return w.host.equals(host) && w.rpcPort == rpcPort;
  }

  @Override
  public int hashCode() {
    return host.hashCode() * 31 + rpcPort;
  }

  @Override
  public String toString() {
    return host + ":" + rpcPort;
  }
}
