package io.strata.master.block;

import io.strata.common.net.WorkerAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** What the master knows of one worker. Mutable; guarded by the {@link BlockMaster}'s monitor. */
final class WorkerMeta {
  final long id;
  final WorkerAddress address;
  final long startTimeMs;
  long capacityBytes;
  long usedBytes;
  long lastHeartbeatMs;
  final Set<Long> blocks = new HashSet<>();
  /** Blocks the worker must remove, sent with the next heartbeat reply. */
  final Set<Long> toRemove = new HashSet<>();
  /** Heartbeat replies sent so far: where the next batch of a long removal list starts. */
  long removalRound;
  List<StorageDirState> dirs = List.of();

  WorkerMeta(long id, WorkerAddress address, long startTimeMs) {
    this.id = id;
    this.address = address;
    this.startTimeMs = startTimeMs;
  }

  WorkerState snapshot() {
    return new WorkerState(id, address, capacityBytes, usedBytes, lastHeartbeatMs, blocks.size(), startTimeMs, dirs);
  }
}
