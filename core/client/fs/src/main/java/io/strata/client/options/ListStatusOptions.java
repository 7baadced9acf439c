package io.strata.client.options;

import java.util.OptionalLong;

/** Options of {@code listStatus}. Immutable. */
public final class ListStatusOptions {
  private static final long UNSET = Long.MIN_VALUE;

  private final boolean recursive;
  private final long syncIntervalMs;

  private ListStatusOptions(boolean recursive, long syncIntervalMs) {
    this.recursive = recursive;
    this.syncIntervalMs = syncIntervalMs;
  }

  /** Direct children only; the configured metadata sync interval. */
  public static ListStatusOptions defaults() {
    return new ListStatusOptions(false, UNSET);
  }

  public boolean recursive() {
    return recursive;
  }

  /**
   * How stale the listing may be relative to the under file system (-1 never re-check, 0 always, N ms);
   * empty means {@code strata.user.file.metadata.sync.interval}.
   */
  public OptionalLong syncIntervalMs() {
    return syncIntervalMs == UNSET ? OptionalLong.empty() : OptionalLong.of(syncIntervalMs);
  }

  public ListStatusOptions withRecursive(boolean recursive) {
    return new ListStatusOptions(recursive, syncIntervalMs);
  }

  /** -1, 0 or a positive number of ms. */
  public ListStatusOptions withSyncIntervalMs(long syncIntervalMs) {
    return new ListStatusOptions(recursive, GetStatusOptions.checkSyncInterval(syncIntervalMs));
  }
}
