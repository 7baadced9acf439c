package io.strata.master.block;

import io.strata.common.net.WorkerAddress;

/** An immutable snapshot of a worker's registration. */
public record WorkerState(long id, WorkerAddress address, long capacityBytes, long usedBytes,
    long lastHeartbeatMs, long blockCount, long startTimeMs, java.util.List<StorageDirState> dirs) {
  public WorkerState {
    dirs = java.util.List.copyOf(dirs);
  }
}
