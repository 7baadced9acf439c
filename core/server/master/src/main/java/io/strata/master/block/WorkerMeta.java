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
  /**
   * Blocks the worker must remove, sent with the next heartbeat reply; carried over to its next registration
   * (same address), whose report of them is refused.
   */
  final Set<Long> toRemove = new HashSet<>();
  /**
   * Blocks of this worker whose files are persisted, not yet told to the worker (it protects every block
   * from eviction out of its last tier until told); sent in bounded batches with heartbeat replies.
   */
  final Set<Long> toRelease = new java.util.LinkedHashSet<>();
  /** The batch of {@link #toRelease} last sent, resent until the worker acknowledges {@link #releaseSeq}. */
  List<Long> releaseInFlight = List.of();
  long releaseSeq;
  /** Bytes the worker's writers wait for room for, as of its last heartbeat. */
  long awaitedBytes;
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
