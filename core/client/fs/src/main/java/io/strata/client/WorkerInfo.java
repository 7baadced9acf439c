package io.strata.client;

import io.strata.common.net.WorkerAddress;

/** A live worker as the master sees it. Immutable. */
public record WorkerInfo(long id, WorkerAddress address, long capacityBytes, long usedBytes,
    long lastHeartbeatMs, long blockCount, long startTimeMs, java.util.List<StorageDirInfo> dirs) {
  public WorkerInfo {
    dirs = java.util.List.copyOf(dirs);
  }

  public long availableBytes() {
    return Math.max(0, capacityBytes - usedBytes);
  }
}
