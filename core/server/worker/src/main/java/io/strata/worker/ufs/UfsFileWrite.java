package io.strata.worker.ufs;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * One file being written to the under file system through this worker. {@link #write} in order, then
 * exactly one of {@link #complete()} or {@link #abort()}. Not thread-safe: one writer (the calls of one
 * gRPC stream, which gRPC serialises).
 */
public interface UfsFileWrite {
  /** Appends {@code data} to the file. */
  void write(ByteBuffer data) throws IOException;

  /** Closes the file; returns its length. On failure the partial file is deleted. */
  long complete() throws IOException;

  /** Closes and deletes the partial file; never throws. */
  void abort();
}
