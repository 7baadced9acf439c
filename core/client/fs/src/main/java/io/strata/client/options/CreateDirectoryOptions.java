package io.strata.client.options;

/** Options of {@code createDirectory}. Immutable. */
public final class CreateDirectoryOptions {
  private final boolean recursive;
  private final boolean allowExists;
  private final int mode;

  private CreateDirectoryOptions(boolean recursive, boolean allowExists, int mode) {
    this.recursive = recursive;
    this.allowExists = allowExists;
    this.mode = mode;
  }

  /** Not recursive, fails when the directory exists, mode 0755. */
  public static CreateDirectoryOptions defaults() {
    return new CreateDirectoryOptions(false, false, 0755);
  }

  public boolean recursive() {
    return recursive;
  }

  public boolean allowExists() {
    return allowExists;
  }

  public int mode() {
    return mode;
  }

  public CreateDirectoryOptions withRecursive(boolean recursive) {
    return new CreateDirectoryOptions(recursive, allowExists, mode);
  }

  public CreateDirectoryOptions withAllowExists(boolean allowExists) {
    return new CreateDirectoryOptions(recursive, allowExists, mode);
  }

  public CreateDirectoryOptions withMode(int mode) {
    return new CreateDirectoryOptions(recursive, allowExists, mode);
  }
}
