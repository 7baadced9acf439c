package io.strata.client;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.CompleteFileRequest;
import java.io.IOException;
import java.io.OutputStream;
import java.util.HashSet;
import java.util.Set;

/**
 * Writes a file block by block: each block goes to the worker the location policy picks, as a stream of
 * chunks; {@link #close()} commits the last block and completes the file at the master.
 * {@link #cancel()} aborts: the worker drops the block in progress; the file stays incomplete.
 *
 * <p>Not thread-safe: one writer.
 */
public final class FileOutStream extends OutputStream {
  private final FileSystemContext context;
  private final WorkerSelector selector;
  private final URIStatus file;
  private final long blockSize;
  private final int chunkSize;
  private byte[] chunk;
  private int chunkFill;
  private BlockOutStream block;
  private int blockIndex;
  private long blockFill;
  private long length;
  private boolean closed;

  FileOutStream(FileSystemContext context, WorkerSelector selector, URIStatus file) {
    this.context = context;
    this.selector = selector;
    this.file = file;
    this.blockSize = file.blockSize();
    this.chunkSize = (int) Math.min(context.conf().get(ClientKeys.STREAM_CHUNK_SIZE), blockSize);
  }

  /** Bytes written so far. */
  public long bytesWritten() {
    return length;
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    if (off < 0 || len < 0 || off + len > b.length) {
      throw new IndexOutOfBoundsException("off=" + off + " len=" + len + " array=" + b.length);
    }
    ensureOpen();
    while (len > 0) {
      if (block == null) {
        openBlock();
      }
      if (chunk == null) {
        chunk = new byte[chunkSize];
        chunkFill = 0;
      }
      int n = (int) Math.min(Math.min(len, chunk.length - chunkFill), blockSize - blockFill);
      System.arraycopy(b, off, chunk, chunkFill, n);
      chunkFill += n;
      blockFill += n;
      length += n;
      off += n;
      len -= n;
      if (chunkFill == chunk.length || blockFill == blockSize) {
        sendChunk();
      }
      if (blockFill == blockSize) {
        finishBlock();
      }
    }
  }

  private void ensureOpen() throws IOException {
    if (closed) {
      throw new FailedPreconditionException("The stream writing " + file.path() + " is closed");
    }
  }

  private void openBlock() throws IOException {
    long blockId = BlockId.of(file.id(), blockIndex);
    Set<WorkerAddress> failed = new HashSet<>();
    WorkerAddress worker = selector.select(blockSize, failed);
    block = new BlockOutStream(context, worker, blockId, blockSize);
    blockFill = 0;
  }

  private void sendChunk() throws IOException {
    if (chunkFill == 0) {
      return;
    }
    byte[] full = chunk;
    int n = chunkFill;
    chunk = null;
    chunkFill = 0;
    try {
      block.write(full, n);
    } catch (IOException e) {
      abort();
      throw e;
    }
  }

  private void finishBlock() throws IOException {
    try {
      block.close();
    } catch (IOException e) {
      block = null;
      abort();
      throw e;
    }
    block = null;
    blockIndex++;
  }

  @Override
  public void flush() {
    // Data becomes visible only when the file completes; nothing to flush early.
  }

  /** Commits the last block and completes the file. */
  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    if (block != null) {
      sendChunk();
      finishBlock();
    }
    closed = true;
    try {
      context.callMaster(m -> m.completeFile(CompleteFileRequest.newBuilder()
          .setPath(file.path()).setFileId(file.id()).setLength(length).build()));
    } catch (StrataException e) {
      throw e.code().toException("Completing " + file.path() + " failed: " + e.getMessage(), e);
    }
  }

  /** Abandons the write: the block in progress is dropped by its worker, the file stays incomplete. */
  public void cancel() {
    abort();
  }

  private void abort() {
    closed = true;
    if (block != null) {
      block.cancel();
      block = null;
    }
  }
}
