package io.strata.client.options;

import java.util.Objects;
import java.util.Optional;

/** Options of {@code openFile}. Immutable. */
public final class OpenFileOptions {
  private static final OpenFileOptions DEFAULTS = new OpenFileOptions(null);

  private final ReadType readType;

  private OpenFileOptions(ReadType readType) {
    this.readType = readType;
  }

  /** The read type of the client's configuration ({@code strata.user.file.readtype.default}). */
  public static OpenFileOptions defaults() {
    return DEFAULTS;
  }

  /** The read type asked for; empty means the configured default. */
  public Optional<ReadType> readType() {
    return Optional.ofNullable(readType);
  }

  public OpenFileOptions withReadType(ReadType readType) {
    return new OpenFileOptions(Objects.requireNonNull(readType));
  }
}
