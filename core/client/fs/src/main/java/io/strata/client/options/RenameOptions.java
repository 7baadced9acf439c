package io.strata.client.options;

/** Options of {@code rename}. Immutable; none yet beyond the defaults. */
public final class RenameOptions {
  private static final RenameOptions DEFAULTS = new RenameOptions();

  private RenameOptions() {}

  public static RenameOptions defaults() {
    return DEFAULTS;
  }
}
