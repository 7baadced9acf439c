package io.strata.client;

import io.strata.client.shortcircuit.ShortCircuitClient;
import io.strata.common.exception.DataLossException;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Reads a range of a block opened short-circuit: positioned reads of the block's file straight into the
 * caller's array (one copy, from the page cache). Closing releases the worker's read lock.
 *
 * <p>Not thread-safe: one reader thread.
 */
final class ShortCircuitBlockReader implements BlockRangeReader {
  private final ShortCircuitClient.OpenBlock block;
  private final WorkerAddress worker;
  private final long end;
  private long pos;

  ShortCircuitBlockReader(ShortCircuitClient.OpenBlock block, WorkerAddress worker, long offset, long length) {
    this.block = block;
    this.worker = worker;
    this.pos = offset;
    this.end = offset + length;
  }

  @Override
  public WorkerAddress worker() {
    return worker;
  }

  @Override
  public String source() {
    return "worker " + worker + " (short-circuit)";
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (pos >= end) {
      return -1;
    }
    ByteBuffer buf = ByteBuffer.wrap(b, off, (int) Math.min(len, end - pos));
    int n = block.channel().read(buf, pos);
    if (n < 0) {
      throw new DataLossException("Block " + block.blockId() + " of worker " + worker + " ends at " + pos
          + " but " + end + " bytes were expected (short-circuit read)");
    }
    pos += n;
    return n;
  }

  @Override
  public void close() {
    block.close();
  }
}
