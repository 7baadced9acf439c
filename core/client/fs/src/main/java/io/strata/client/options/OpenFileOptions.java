package io.strata.client.options;

/** Options of {@code openFile}. Immutable. */
public final class OpenFileOptions {
  private static final OpenFileOptions DEFAULTS = new OpenFileOptions(ReadType.CACHE);

  private final ReadType readType;

  private OpenFileOptions(ReadType readType) {
    this.readType = readType;
  }

  /** Read type CACHE. */
  public static OpenFileOptions defaults() {
    return DEFAULTS;
  }

  public ReadType readType() {
    return readType;
  }

  public OpenFileOptions withReadType(ReadType readType) {
    return new OpenFileOptions(java.util.Objects.requireNonNull(readType));
  }
}
