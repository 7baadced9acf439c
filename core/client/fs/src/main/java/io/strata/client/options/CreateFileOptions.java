package io.strata.client.options;

import java.util.Optional;

/** Options of {@code createFile}. Immutable; build with {@link #defaults()} and the {@code with*} methods. */
public final class CreateFileOptions {
  private final long blockSize;
  private final boolean recursive;
  private final int mode;
  private final WriteType writeType;

  private CreateFileOptions(long blockSize, boolean recursive, int mode, WriteType writeType) {
    this.blockSize = blockSize;
    this.recursive = recursive;
    this.mode = mode;
    this.writeType = writeType;
  }

  /** Block size and write type from the client config, parents created, mode 0644. */
  public static CreateFileOptions defaults() {
    return new CreateFileOptions(0, true, 0644, null);
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

  /** The write type asked for; empty means the configured default ({@code strata.user.file.writetype.default}). */
  public Optional<WriteType> writeType() {
    return Optional.ofNullable(writeType);
  }

  public CreateFileOptions withBlockSize(long blockSize) {
    return new CreateFileOptions(blockSize, recursive, mode, writeType);
  }

  public CreateFileOptions withRecursive(boolean recursive) {
    return new CreateFileOptions(blockSize, recursive, mode, writeType);
  }

  public CreateFileOptions withMode(int mode) {
    return new CreateFileOptions(blockSize, recursive, mode, writeType);
  }

  /** null means the configured default. */
  public CreateFileOptions withWriteType(WriteType writeType) {
    return new CreateFileOptions(blockSize, recursive, mode, writeType);
  }
}
