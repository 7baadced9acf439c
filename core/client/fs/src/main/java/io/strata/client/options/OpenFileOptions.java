package io.strata.client.options;

/** Options of {@code openFile}. Immutable; read types come with the UFS issue. */
public final class OpenFileOptions {
  private static final OpenFileOptions DEFAULTS = new OpenFileOptions();

  private OpenFileOptions() {}

  public static OpenFileOptions defaults() {
    return DEFAULTS;
  }
}
