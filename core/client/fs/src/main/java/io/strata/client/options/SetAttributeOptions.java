package io.strata.client.options;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/** Options of {@code setAttribute}: each attribute left unset is left alone. Immutable. */
public final class SetAttributeOptions {
  /** The TTL value that removes a file's TTL. */
  public static final long NO_TTL = -1;

  private static final SetAttributeOptions DEFAULTS = new SetAttributeOptions(null, null, null);

  private final Boolean pinned;
  private final Long ttlMs;
  private final TtlAction ttlAction;

  private SetAttributeOptions(Boolean pinned, Long ttlMs, TtlAction ttlAction) {
    this.pinned = pinned;
    this.ttlMs = ttlMs;
    this.ttlAction = ttlAction;
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

  /** Pinned files' blocks are never evicted (nor freed, unless forced). */
  public SetAttributeOptions withPinned(boolean pinned) {
    return new SetAttributeOptions(pinned, ttlMs, ttlAction);
  }

  /** Time to live in ms from the file's creation; {@link #NO_TTL} removes it. */
  public SetAttributeOptions withTtlMs(long ttlMs) {
    if (ttlMs < 0 && ttlMs != NO_TTL) {
      throw new IllegalArgumentException("A TTL is a non-negative number of ms, or -1 for none; not " + ttlMs);
    }
    return new SetAttributeOptions(pinned, ttlMs, ttlAction);
  }

  public SetAttributeOptions withTtlAction(TtlAction ttlAction) {
    return new SetAttributeOptions(pinned, ttlMs, Objects.requireNonNull(ttlAction));
  }
}
