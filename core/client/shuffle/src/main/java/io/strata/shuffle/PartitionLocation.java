package io.strata.shuffle;

import java.io.Serializable;

/**
 * Where one epoch of one shuffle partition is written: the Strata file (incomplete until sealed) and the
 * primary and replica workers that append its batches. A partition gets a new epoch (a new file, new
 * workers) when pushes to its location fail past the retry count, or when its file was sealed and a
 * map stage runs again; readers read every sealed epoch. Immutable; sent to executors in the shuffle
 * handle and in revive answers.
 */
public record PartitionLocation(int partitionId, int epoch, long fileId, String path, long blockSize,
    String primaryHost, int primaryPort, String replicaHost, int replicaPort) implements Serializable {
  private static final long serialVersionUID = 1L;

  public boolean hasReplica() {
    return !replicaHost.isEmpty();
  }

  public String primary() {
    return primaryHost + ":" + primaryPort;
  }

  public String replica() {
    return hasReplica() ? replicaHost + ":" + replicaPort : "";
  }

  @Override
  public String toString() {
    return "partition " + partitionId + " epoch " + epoch + " (" + path + " on " + primary()
        + (hasReplica() ? ", replica " + replica() : "") + ")";
  }
}
