package io.strata.client;

import io.strata.common.net.WorkerAddress;

/** A worker that holds a block, and the tier it holds it in. Immutable. */
public record BlockLocation(long workerId, WorkerAddress address, String tier) implements java.io.Serializable {}
