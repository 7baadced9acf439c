package io.strata.common.exception;

/**
 * A primary worker applied a shuffle push but could not forward it to its replica: the failed hop is the
 * replica's, so a client that gives up on the location blames {@link #replica()} (host:port), not the
 * primary it pushed to. Retryable like any {@link UnavailableException}. On the wire: UNAVAILABLE plus the
 * replica in a trailer ({@link io.strata.common.grpc.GrpcErrors}).
 */
public final class ReplicaUnavailableException extends UnavailableException {
  private final String replica;

  public ReplicaUnavailableException(String message, String replica, Throwable cause) {
    super(message, cause);
    if (replica == null || replica.isEmpty()) {
      throw new IllegalArgumentException("A replica failure must name the replica (host:port)");
    }
    this.replica = replica;
  }

  /** The replica that did not take the forwarded batches, as host:port. */
  public String replica() {
    return replica;
  }
}
