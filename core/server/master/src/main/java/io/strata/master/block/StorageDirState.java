package io.strata.master.block;

/** One storage dir of a worker, as its last heartbeat reported it. */
public record StorageDirState(String tier, int tierOrdinal, String path, boolean good, long capacityBytes,
    long usedBytes, long lostBlocks) {}
