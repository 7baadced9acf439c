package io.strata.master.block;

/** A block a worker says it holds. */
public record BlockReport(long blockId, long length, String tier) {}
