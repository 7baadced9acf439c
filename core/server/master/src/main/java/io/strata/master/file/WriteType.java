package io.strata.master.file;

import io.strata.common.exception.InvalidArgumentException;

/** How a new file is written: to workers, to the under file system, or both. */
public enum WriteType {
  /** Workers only; never persisted unless asked. */
  MUST_CACHE,
  /** Workers and the under file system; the file completes only once the UFS copy is closed. */
  CACHE_THROUGH,
  /** The under file system only; nothing cached. */
  THROUGH,
  /** Workers now; the master's persist scheduler writes the UFS copy soon after completion. */
  ASYNC_THROUGH;

  /** True when the client streams a UFS copy while it writes. */
  public boolean writesUfs() {
    return this == CACHE_THROUGH || this == THROUGH;
  }

  /** True when the data goes to workers as blocks. */
  public boolean caches() {
    return this != THROUGH;
  }

  /** "" means MUST_CACHE; anything else must name a type. */
  public static WriteType parse(String s) throws InvalidArgumentException {
    if (s == null || s.isEmpty()) {
      return MUST_CACHE;
    }
    try {
      return valueOf(s);
    } catch (IllegalArgumentException e) {
      throw new InvalidArgumentException("Unknown write type '" + s
          + "': expected MUST_CACHE, CACHE_THROUGH, THROUGH or ASYNC_THROUGH");
    }
  }
}
