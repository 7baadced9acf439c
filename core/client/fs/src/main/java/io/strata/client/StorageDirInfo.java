package io.strata.client;

/** One storage dir of a worker: tier, path, state, capacity, usage, blocks lost when it failed. Immutable. */
public record StorageDirInfo(String tier, int tierOrdinal, String path, boolean good, long capacityBytes,
    long usedBytes, long lostBlocks) {}
