package io.strata.master.file;

import io.strata.common.exception.InvalidArgumentException;

/**
 * What a client's setAttribute changes: each null field is left alone. Owner and group are plain names
 * (recorded, not enforced: nothing checks permissions yet); {@code mode} is the permission bits; times are ms
 * since the epoch. {@code recursive} applies the change to everything under a directory too (chmod -R).
 * Immutable.
 */
public record AttributeChange(Boolean pinned, Long ttlMs, TtlAction ttlAction, String owner, String group,
    Integer mode, Long modificationTimeMs, Long accessTimeMs, boolean recursive) {
  /** The largest permission mode (setuid, setgid, sticky and rwx for owner, group and others). */
  public static final int MAX_MODE = 07777;
  /** The time value that leaves a time unchanged, as in Hadoop's {@code setTimes}. */
  public static final long UNCHANGED_TIME = -1;

  /** A change of pin and TTL only. */
  public static AttributeChange cache(Boolean pinned, Long ttlMs, TtlAction ttlAction) {
    return new AttributeChange(pinned, ttlMs, ttlAction, null, null, null, null, null, false);
  }

  /** Refuses values no inode may have, naming the value and the path; times of -1 become "unchanged". */
  AttributeChange checked(String path) throws InvalidArgumentException {
    if (ttlMs != null && ttlMs < -1) {
      throw new InvalidArgumentException("Cannot set a TTL of " + ttlMs + " ms on " + path
          + ": it must be 0 or more (or -1 to remove it)");
    }
    if (mode != null && (mode < 0 || mode > MAX_MODE)) {
      throw new InvalidArgumentException("Cannot set mode " + mode + " (octal " + Integer.toOctalString(mode)
          + ") on " + path + ": a mode is permission bits, 0 to 07777 (4095)");
    }
    checkName("owner", owner, path);
    checkName("group", group, path);
    return new AttributeChange(pinned, ttlMs, ttlAction, owner, group, mode,
        time("modification", modificationTimeMs, path), time("access", accessTimeMs, path), recursive);
  }

  private static void checkName(String what, String name, String path) throws InvalidArgumentException {
    Names.check(what, name, "Cannot set the " + what + " of " + path);
  }

  private static Long time(String what, Long ms, String path) throws InvalidArgumentException {
    if (ms == null || ms == UNCHANGED_TIME) {
      return null;
    }
    if (ms < 0) {
      throw new InvalidArgumentException("Cannot set " + what + " time " + ms + " on " + path
          + ": it must be ms since the epoch, 0 or more (or -1 to leave it unchanged)");
    }
    return ms;
  }
}
