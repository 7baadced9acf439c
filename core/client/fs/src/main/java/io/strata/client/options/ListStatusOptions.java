package io.strata.client.options;

/** Options of {@code listStatus}. Immutable. */
public final class ListStatusOptions {
  private final boolean recursive;

  private ListStatusOptions(boolean recursive) {
    this.recursive = recursive;
  }

  /** Direct children only. */
  public static ListStatusOptions defaults() {
    return new ListStatusOptions(false);
  }

  public boolean recursive() {
    return recursive;
  }

  public ListStatusOptions withRecursive(boolean recursive) {
    return new ListStatusOptions(recursive);
  }
}
