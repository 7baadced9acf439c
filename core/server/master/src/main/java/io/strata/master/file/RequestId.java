package io.strata.master.file;

/**
 * Names one logical non-idempotent call of a client (create, complete, rename, delete), the same on every
 * retry of it. Immutable.
 */
public record RequestId(String clientId, long callId) {
  public RequestId {
    if (clientId == null || clientId.isEmpty()) {
      throw new IllegalArgumentException("A request id needs a client id");
    }
  }

  @Override
  public String toString() {
    return "call " + callId + " of client " + clientId;
  }
}
