package io.strata.client;

import io.strata.client.shortcircuit.ShortCircuitWrite;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Writes a block short-circuit: straight into the local worker's temp block file through a
 * {@link java.nio.channels.FileChannel} (one copy, into the page cache), asking the worker for room
 * {@code grantSize} bytes at a time before the bytes that need it are written, and committing at the end.
 * The bytes never cross a socket.
 *
 * <p>Not thread-safe: one writer thread.
 */
final class ShortCircuitBlockWriter implements BlockWriter {
  private final ShortCircuitWrite block;
  private final long grantSize;
  private long written;

  ShortCircuitBlockWriter(ShortCircuitWrite block, long grantSize) {
    this.block = block;
    this.grantSize = grantSize;
  }

  @Override
  public long blockId() {
    return block.blockId();
  }

  @Override
  public WorkerAddress worker() {
    return block.worker();
  }

  @Override
  public void write(byte[] chunk, int length) throws IOException {
    long end = written + length;
    if (end > block.granted()) {
      // The next increment, or more when one chunk is larger: the worker reserves it in its store's accounting.
      block.grant(Math.max(grantSize, end - block.granted()));
    }
    ByteBuffer buf = ByteBuffer.wrap(chunk, 0, length);
    while (buf.hasRemaining()) {
      block.channel().write(buf, written + buf.position());
    }
    written = end;
  }

  @Override
  public long close() throws IOException {
    return block.commit(written);
  }

  @Override
  public void cancel() {
    block.abort();
  }
}
