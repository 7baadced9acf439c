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
 * <p>When its descriptor of the temp file is readable too, it {@link #keepsBytes}: the caller writes from its
 * own arrays ({@link #writeThrough}: no copy into a chunk of its own, nothing kept on the heap), and when the
 * worker fails the bytes written so far are read back from this descriptor ({@link #detachBytes}), which
 * holds them even when the worker is gone or has deleted the file.
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
    writeThrough(chunk, 0, length);
  }

  @Override
  public boolean keepsBytes() {
    return block.readable();
  }

  @Override
  public BlockReplayBuffer detachBytes(BlockReplayBuffer to) {
    if (!block.readable()) {
      return null;
    }
    to.keepFile(block.detachChannel(), written);
    return to;
  }

  @Override
  public void writeThrough(byte[] b, int off, int length) throws IOException {
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
    ByteBuffer buf = ByteBuffer.wrap(b, off, length);
    while (buf.hasRemaining()) {
      block.channel().write(buf, written + buf.position() - off);
    }
    // After the write: a write that failed part way leaves the checksums as they were, so the bytes count
    // as not written (a failover replays up to `written` and sends these again).
    crcs.update(b, off, length);
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
