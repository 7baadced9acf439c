package io.strata.master.file;

import io.strata.common.exception.InvalidArgumentException;

/** What happens to a path whose time to live ran out. */
public enum TtlAction {
  /** Remove its cached blocks (it must be persisted); the TTL is then cleared. */
  FREE,
  /** Delete it from Strata and from the under file system. */
  DELETE;

  public static TtlAction parse(String s) throws InvalidArgumentException {
    if (s == null || s.isEmpty()) {
      return DELETE;
    }
    try {
      return valueOf(s);
    } catch (IllegalArgumentException e) {
      throw new InvalidArgumentException("Unknown TTL action '" + s + "': expected FREE or DELETE");
    }
  }
}
