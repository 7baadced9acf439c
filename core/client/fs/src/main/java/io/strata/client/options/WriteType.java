package io.strata.client.options;

/**
 * Where a new file's data goes. Under a mount: MUST_CACHE writes blocks to workers only (the file is
 * NOT_PERSISTED); CACHE_THROUGH writes blocks and, through one worker, the under file system copy, and
 * the file is PERSISTED when the write closes; THROUGH writes only the under file system copy (no block
 * is cached); ASYNC_THROUGH writes blocks like MUST_CACHE and the master persists the file in the
 * background (TO_BE_PERSISTED, then PERSISTED). Outside a mount every type writes like MUST_CACHE.
 */
public enum WriteType {
  MUST_CACHE, CACHE_THROUGH, THROUGH, ASYNC_THROUGH;

  /** True when the client writes blocks to workers. */
  public boolean cachesBlocks() {
    return this != THROUGH;
  }

  /** True when the client writes the under file system copy itself, while writing. */
  public boolean writesUfs() {
    return this == CACHE_THROUGH || this == THROUGH;
  }
}
