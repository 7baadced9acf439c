package io.strata.client.options;

import java.util.Optional;

/** Options of {@code createDirectory}. Immutable. */
public final class CreateDirectoryOptions {
  private final boolean recursive;
  private final boolean allowExists;
  private final int mode;
  private final WriteType writeType;

  private CreateDirectoryOptions(boolean recursive, boolean allowExists, int mode, WriteType writeType) {
    this.recursive = recursive;
    this.allowExists = allowExists;
    this.mode = mode;
    this.writeType = writeType;
  }

  /** Not recursive, fails when the directory exists, mode 0755, the configured write type. */
  public static CreateDirectoryOptions defaults() {
    return new CreateDirectoryOptions(false, false, 0755, null);
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

  /**
   * The write type asked for; empty means the configured default. CACHE_THROUGH and THROUGH also create
   * the directory in the under file system at once.
   */
  public Optional<WriteType> writeType() {
    return Optional.ofNullable(writeType);
  }

  public CreateDirectoryOptions withRecursive(boolean recursive) {
    return new CreateDirectoryOptions(recursive, allowExists, mode, writeType);
  }

  public CreateDirectoryOptions withAllowExists(boolean allowExists) {
    return new CreateDirectoryOptions(recursive, allowExists, mode, writeType);
  }

  public CreateDirectoryOptions withMode(int mode) {
    return new CreateDirectoryOptions(recursive, allowExists, mode, writeType);
  }

  /** null means the configured default. */
  public CreateDirectoryOptions withWriteType(WriteType writeType) {
    return new CreateDirectoryOptions(recursive, allowExists, mode, writeType);
  }
}
