package io.strata.client;

import io.strata.client.shortcircuit.ShortCircuitWrite;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Writes a block short-circuit: straight into the local worker's temp block file through a
 * {@link java.nio.channels.FileChannel} (one copy, into the page cache), asking the worker for room
 * {@code grantSize} bytes at a time before the bytes that need it are written, and committing at the end.
 * The bytes never cross a socket; their CRC32C per checksum chunk ({@link ChunkChecksums}) is computed
 * here as they are written and travels with the grants and the commit, becoming the block's checksums.
 *
 * <p>Not thread-safe: one writer thread.
 */
final class ShortCircuitBlockWriter implements BlockWriter {
  private final ShortCircuitWrite block;
  private final long grantSize;
  private final ChunkChecksums.Builder crcs = new ChunkChecksums.Builder();
  private long written;
  /** Checksums already sent to the worker. */
  private int sent;

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
      int done = crcs.completed();
      int upTo = Math.min(done, sent + ShortCircuitWrite.MAX_CHECKSUMS_PER_MESSAGE);
      int[] next = new int[upTo - sent];
      for (int i = 0; i < next.length; i++) {
        next[i] = crcs.get(sent + i);
      }
      block.grant(Math.max(grantSize, end - block.granted()), next, 0, next.length);
      sent = upTo;
    }
    crcs.update(chunk, 0, length);
    ByteBuffer buf = ByteBuffer.wrap(chunk, 0, length);
    while (buf.hasRemaining()) {
      block.channel().write(buf, written + buf.position());
    }
    written = end;
  }

  @Override
  public long close() throws IOException {
    int[] all = crcs.finish();
    while (all.length - sent > ShortCircuitWrite.MAX_CHECKSUMS_PER_MESSAGE) {
      block.grant(0, all, sent, sent + ShortCircuitWrite.MAX_CHECKSUMS_PER_MESSAGE);
      sent += ShortCircuitWrite.MAX_CHECKSUMS_PER_MESSAGE;
    }
    return block.commit(written, all, sent, all.length);
  }

  @Override
  public void cancel() {
    block.abort();
  }
}
