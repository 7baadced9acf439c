package io.strata.client;

import java.util.List;

/** Cluster-wide figures from the master, for {@code fsadmin report}. Immutable. */
public record ClusterInfo(String masterAddress, long startTimeMs, long liveWorkers, long lostWorkers,
    long capacityBytes, long usedBytes, long fileCount, long directoryCount, long blockCount,
    List<WorkerInfo> lost, int masterWebPort) {
  public ClusterInfo {
    lost = List.copyOf(lost);
  }
}
