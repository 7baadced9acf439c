package io.strata.client.options;

/** Options of {@code createFile}. Immutable; build with {@link #defaults()} and the {@code with*} methods. */
public final class CreateFileOptions {
  private final long blockSize;
  private final boolean recursive;
  private final int mode;

  private CreateFileOptions(long blockSize, boolean recursive, int mode) {
    this.blockSize = blockSize;
    this.recursive = recursive;
    this.mode = mode;
  }

  /** Block size from the client config, parents created, mode 0644. */
  public static CreateFileOptions defaults() {
    return new CreateFileOptions(0, true, 0644);
  }

  /** 0 means the configured default. */
  public long blockSize() {
    return blockSize;
  }

  public boolean recursive() {
    return recursive;
  }

  public int mode() {
    return mode;
  }

  public CreateFileOptions withBlockSize(long blockSize) {
    return new CreateFileOptions(blockSize, recursive, mode);
  }

  public CreateFileOptions withRecursive(boolean recursive) {
    return new CreateFileOptions(blockSize, recursive, mode);
  }

  public CreateFileOptions withMode(int mode) {
    return new CreateFileOptions(blockSize, recursive, mode);
  }
}
