package io.strata.client;

/** What a {@code free} call removed from the workers: files whose blocks were freed, and those blocks. Immutable. */
public record FreeResult(long filesFreed, long blocksFreed) {}
