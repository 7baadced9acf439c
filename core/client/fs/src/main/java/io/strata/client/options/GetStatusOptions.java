package io.strata.client.options;

import java.util.OptionalLong;

/** Options of {@code getStatus}. Immutable. */
public final class GetStatusOptions {
  private static final long UNSET = Long.MIN_VALUE;
  private static final GetStatusOptions DEFAULTS = new GetStatusOptions(UNSET);

  private final long syncIntervalMs;

  private GetStatusOptions(long syncIntervalMs) {
    this.syncIntervalMs = syncIntervalMs;
  }

  /** The configured metadata sync interval ({@code strata.user.file.metadata.sync.interval}). */
  public static GetStatusOptions defaults() {
    return DEFAULTS;
  }

  /**
   * How stale the status may be relative to the under file system: -1 loads a path Strata lacks but
   * never re-checks one it has, 0 re-checks now, N re-checks when the last check is older than N ms;
   * empty means the configured default.
   */
  public OptionalLong syncIntervalMs() {
    return syncIntervalMs == UNSET ? OptionalLong.empty() : OptionalLong.of(syncIntervalMs);
  }

  /** -1, 0 or a positive number of ms. */
  public GetStatusOptions withSyncIntervalMs(long syncIntervalMs) {
    return new GetStatusOptions(checkSyncInterval(syncIntervalMs));
  }

  static long checkSyncInterval(long ms) {
    if (ms < -1) {
      throw new IllegalArgumentException("A metadata sync interval is -1, 0 or a positive number of ms, not " + ms);
    }
    return ms;
  }
}
