package io.strata.common.net;

import java.util.Objects;

/**
 * Where a worker serves: host and RPC port, plus where it sits ({@link TieredIdentity}: node and rack, as
 * the worker reported at registration), its block transfer port (0 when it serves none) and its web port
 * (0 when unknown). Equality and hash are host and port only: the identity and the other ports describe the
 * worker, they do not name it. Immutable value.
 */
public final class WorkerAddress implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  private final String host;
  private final int rpcPort;
  private final TieredIdentity identity;
  private final int transferPort;
  private final int webPort;

  /** An address whose identity is its host as the node, rack unknown. */
  public WorkerAddress(String host, int rpcPort) {
    this(host, rpcPort, null);
  }

  /** {@code identity} null or with an empty node: the host is the node. */
  public WorkerAddress(String host, int rpcPort, TieredIdentity identity) {
    this(host, rpcPort, identity, 0);
  }

  /** As above, with the worker's block transfer port ({@code 0}: none). */
  public WorkerAddress(String host, int rpcPort, TieredIdentity identity, int transferPort) {
    this(host, rpcPort, identity, transferPort, 0);
  }

  /** As above, with the worker's web port ({@code 0}: unknown). */
  public WorkerAddress(String host, int rpcPort, TieredIdentity identity, int transferPort, int webPort) {
    if (webPort < 0 || webPort > 65535) {
      throw new IllegalArgumentException("Web port " + webPort + " of worker " + host + ":" + rpcPort
          + " is not a port number (0 to 65535)");
    }
    this.webPort = webPort;
    if (transferPort < 0 || transferPort > 65535) {
      throw new IllegalArgumentException("Transfer port " + transferPort + " of worker " + host + ":" + rpcPort
          + " is not a port number (0 to 65535)");
    }
    this.transferPort = transferPort;
    this.host = Objects.requireNonNull(host);
    this.rpcPort = rpcPort;
    if (identity == null) {
      identity = new TieredIdentity(host, "");
    } else if (identity.node().isEmpty()) {
      identity = new TieredIdentity(host, identity.rack());
    }
    this.identity = identity;
  }

  public String host() {
    return host;
  }

  public int rpcPort() {
    return rpcPort;
  }

  /** The worker's block transfer port (raw block reads over TCP), or 0 when it serves none. */
  public int transferPort() {
    return transferPort;
  }

  /** The worker's web port (its pages and /metrics), or 0 when unknown. */
  public int webPort() {
    return webPort;
  }

  /** The worker's node and rack. */
  public TieredIdentity identity() {
    return identity;
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
