package io.strata.client.options;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * Options of {@code setAttribute}: each attribute left unset is left alone. Owner, group, mode and times are
 * Strata's metadata (the under file system's copy keeps its own) and are not enforced: nothing checks
 * permissions yet. The master refuses a mode outside 0 to 07777, an empty owner or group, and a time below -1,
 * with {@code InvalidArgumentException}. Immutable.
 */
public final class SetAttributeOptions {
  /** The TTL value that removes a file's TTL. */
  public static final long NO_TTL = -1;
  /** The time value that leaves a time as it is (as in Hadoop's {@code setTimes}). */
  public static final long UNCHANGED_TIME = -1;

  private static final SetAttributeOptions DEFAULTS =
      new SetAttributeOptions(null, null, null, null, null, null, null, null, false);

  private final Boolean pinned;
  private final Long ttlMs;
  private final TtlAction ttlAction;
  private final String owner;
  private final String group;
  private final Integer mode;
  private final Long modificationTimeMs;
  private final Long accessTimeMs;
  private final boolean recursive;

  private SetAttributeOptions(Boolean pinned, Long ttlMs, TtlAction ttlAction, String owner, String group,
      Integer mode, Long modificationTimeMs, Long accessTimeMs, boolean recursive) {
    this.pinned = pinned;
    this.ttlMs = ttlMs;
    this.ttlAction = ttlAction;
    this.owner = owner;
    this.group = group;
    this.mode = mode;
    this.modificationTimeMs = modificationTimeMs;
    this.accessTimeMs = accessTimeMs;
    this.recursive = recursive;
  }

  /** Changes nothing. */
  public static SetAttributeOptions defaults() {
    return DEFAULTS;
  }

  public Optional<Boolean> pinned() {
    return Optional.ofNullable(pinned);
  }

  public OptionalLong ttlMs() {
    return ttlMs == null ? OptionalLong.empty() : OptionalLong.of(ttlMs);
  }

  public Optional<TtlAction> ttlAction() {
    return Optional.ofNullable(ttlAction);
  }

  public Optional<String> owner() {
    return Optional.ofNullable(owner);
  }

  public Optional<String> group() {
    return Optional.ofNullable(group);
  }

  public OptionalInt mode() {
    return mode == null ? OptionalInt.empty() : OptionalInt.of(mode);
  }

  public OptionalLong modificationTimeMs() {
    return modificationTimeMs == null ? OptionalLong.empty() : OptionalLong.of(modificationTimeMs);
  }

  public OptionalLong accessTimeMs() {
    return accessTimeMs == null ? OptionalLong.empty() : OptionalLong.of(accessTimeMs);
  }

  /** Whether the change applies to everything under a directory too. */
  public boolean recursive() {
    return recursive;
  }

  /** Pinned files' blocks are never evicted (nor freed, unless forced). */
  public SetAttributeOptions withPinned(boolean pinned) {
    return new SetAttributeOptions(pinned, ttlMs, ttlAction, owner, group, mode, modificationTimeMs, accessTimeMs,
        recursive);
  }

  /** Time to live in ms from the file's creation; {@link #NO_TTL} removes it. */
  public SetAttributeOptions withTtlMs(long ttlMs) {
    if (ttlMs < 0 && ttlMs != NO_TTL) {
      throw new IllegalArgumentException("A TTL is a non-negative number of ms, or -1 for none; not " + ttlMs);
    }
    return new SetAttributeOptions(pinned, ttlMs, ttlAction, owner, group, mode, modificationTimeMs, accessTimeMs,
        recursive);
  }

  public SetAttributeOptions withTtlAction(TtlAction ttlAction) {
    return new SetAttributeOptions(pinned, ttlMs, Objects.requireNonNull(ttlAction), owner, group, mode,
        modificationTimeMs, accessTimeMs, recursive);
  }

  /** The owner's name (chown). */
  public SetAttributeOptions withOwner(String owner) {
    return new SetAttributeOptions(pinned, ttlMs, ttlAction, Objects.requireNonNull(owner), group, mode,
        modificationTimeMs, accessTimeMs, recursive);
  }

  /** The group's name (chgrp). */
  public SetAttributeOptions withGroup(String group) {
    return new SetAttributeOptions(pinned, ttlMs, ttlAction, owner, Objects.requireNonNull(group), mode,
        modificationTimeMs, accessTimeMs, recursive);
  }

  /** The permission bits, 0 to 07777 (chmod). */
  public SetAttributeOptions withMode(int mode) {
    return new SetAttributeOptions(pinned, ttlMs, ttlAction, owner, group, mode, modificationTimeMs, accessTimeMs,
        recursive);
  }

  /** The modification time in ms since the epoch; {@link #UNCHANGED_TIME} leaves it. */
  public SetAttributeOptions withModificationTimeMs(long modificationTimeMs) {
    return new SetAttributeOptions(pinned, ttlMs, ttlAction, owner, group, mode, modificationTimeMs, accessTimeMs,
        recursive);
  }

  /** The access time in ms since the epoch; {@link #UNCHANGED_TIME} leaves it. */
  public SetAttributeOptions withAccessTimeMs(long accessTimeMs) {
    return new SetAttributeOptions(pinned, ttlMs, ttlAction, owner, group, mode, modificationTimeMs, accessTimeMs,
        recursive);
  }

  /** Applies every attribute set here to a directory and everything under it (chmod -R, chown -R). */
  public SetAttributeOptions withRecursive(boolean recursive) {
    return new SetAttributeOptions(pinned, ttlMs, ttlAction, owner, group, mode, modificationTimeMs, accessTimeMs,
        recursive);
  }
}
