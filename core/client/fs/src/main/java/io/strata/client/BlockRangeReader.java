package io.strata.client;

import io.strata.common.exception.DataLossException;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;

/**
 * Reads a range of one block from one worker, streamed ({@link BlockReader}) or short-circuit
 * ({@link ShortCircuitBlockReader}). Not thread-safe: one reader thread.
 */
interface BlockRangeReader extends AutoCloseable {
  WorkerAddress worker();

  /** Where the bytes come from, in words for errors ("worker h:1", "worker h:1 (short-circuit)"). */
  default String source() {
    return "worker " + worker();
  }

  /** Copies up to len bytes into b; returns -1 at the end of the range. */
  int read(byte[] b, int off, int len) throws IOException;

  /** Reads exactly len bytes or fails with DataLoss. */
  default void readFully(byte[] b, int off, int len) throws IOException {
    while (len > 0) {
      int n = read(b, off, len);
      if (n < 0) {
        throw new DataLossException("A block from worker " + worker() + " ended " + len + " bytes early");
      }
      off += n;
      len -= n;
    }
  }

  @Override
  void close();
}
