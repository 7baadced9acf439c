package io.strata.client;

import io.strata.client.options.WriteType;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.DeleteRequest;
import java.io.IOException;
import java.io.OutputStream;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a file by its {@link WriteType}: blocks (MUST_CACHE, ASYNC_THROUGH, CACHE_THROUGH), each to the
 * worker the location policy picks, as a stream of chunks; and, for CACHE_THROUGH and THROUGH, the under
 * file system copy through one worker ({@link UfsOutStream}), fed the same chunks. {@link #close()} commits
 * the last block, closes the under file system copy (checking its length), then completes the file at the
 * master.
 *
 * <p>All or nothing: when any stream fails, or on {@link #cancel()}, every stream is cancelled (the workers
 * drop the block in progress and the partial under file system copy) and the file is deleted at the
 * master, so no half-written file stays visible. Blocks already committed go with the file.
 *
 * <p>Not thread-safe: one writer.
 */
public final class FileOutStream extends OutputStream {
  private static final Logger LOG = LoggerFactory.getLogger(FileOutStream.class);

  private final FileSystemContext context;
  private final WorkerSelector selector;
  private final URIStatus file;
  private final WriteType writeType;
  private final long blockSize;
  private final int chunkSize;
  private byte[] chunk;
  private int chunkFill;
  private BlockOutStream block;
  private UfsOutStream ufs;
  private int blockIndex;
  private long blockFill;
  private long length;
  private boolean closed;

  FileOutStream(FileSystemContext context, WorkerSelector selector, URIStatus file, WriteType writeType) {
    this.context = context;
    this.selector = selector;
    this.file = file;
    this.writeType = writeType;
    this.blockSize = file.blockSize();
    this.chunkSize = (int) Math.min(context.conf().get(ClientKeys.STREAM_CHUNK_SIZE), blockSize);
    context.leases().add(file.id()); // renewed until the file completes or is abandoned
  }

  /** Bytes written so far. */
  public long bytesWritten() {
    return length;
  }

  /** How this stream writes: the create call's write type, or the configured default. */
  public WriteType writeType() {
    return writeType;
  }

  /** The file being written, as the master described it at creation. */
  public URIStatus status() {
    return file;
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
      if (writeType.cachesBlocks() && block == null) {
        openBlock();
      }
      if (chunk == null) {
        chunk = new byte[chunkSize];
        chunkFill = 0;
      }
      // Chunks never straddle a block boundary, whether or not blocks are written.
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
    try {
      Set<WorkerAddress> failed = new HashSet<>();
      WorkerAddress worker = selector.select(blockId, blockSize, failed);
      block = new BlockOutStream(context, worker, blockId, blockSize);
    } catch (IOException | RuntimeException e) {
      abort();
      throw e;
    }
  }

  private void ensureUfs() throws IOException {
    if (ufs != null || !writeType.writesUfs()) {
      return;
    }
    try {
      WorkerAddress worker = selector.select(0, Set.of());
      ufs = new UfsOutStream(context, worker, file.id(), file.path());
    } catch (IOException | RuntimeException e) {
      abort();
      throw e;
    }
  }

  private void sendChunk() throws IOException {
    if (chunkFill == 0) {
      return;
    }
    byte[] full = chunk;
    int n = chunkFill;
    chunk = null;
    chunkFill = 0;
    ensureUfs();
    try {
      // Both streams wrap the same array without copying; neither changes it and this stream drops it.
      if (block != null) {
        block.write(full, n);
      }
      if (ufs != null) {
        ufs.write(full, n);
      }
    } catch (IOException | RuntimeException e) {
      abort();
      throw e;
    }
  }

  private void finishBlock() throws IOException {
    blockFill = 0;
    if (block == null) {
      return;
    }
    try {
      block.close();
    } catch (IOException | RuntimeException e) {
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

  /** Commits the last block, closes the under file system copy, and completes the file. */
  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    sendChunk();
    if (block != null) {
      finishBlock();
    }
    ensureUfs(); // an empty CACHE_THROUGH or THROUGH file still gets its (empty) under file system copy
    if (ufs != null) {
      try {
        ufs.close();
      } catch (IOException | RuntimeException e) {
        abort();
        throw e;
      }
      ufs = null;
    }
    closed = true;
    try {
      context.leases().remove(file.id()); // the master drops its lease when the file completes
      context.callMaster(m -> m.completeFile(CompleteFileRequest.newBuilder()
          .setPath(file.path()).setFileId(file.id()).setLength(length).build()));
    } catch (StrataException e) {
      // Not deleted: the master may have completed it and lost only the reply, or the path may now name
      // another writer's file. An incomplete file is refused by readers anyway.
      throw e.code().toException("Completing " + file.path() + " failed: " + e.getMessage(), e);
    }
  }

  /**
   * Abandons the write: the streams in progress are cancelled (the workers drop the block and the partial
   * under file system copy) and the file is deleted at the master. Harmless after close or a failure.
   */
  public void cancel() {
    abort();
  }

  private void abort() {
    if (closed) {
      return;
    }
    closed = true;
    context.leases().remove(file.id());
    if (block != null) {
      block.cancel();
      block = null;
    }
    if (ufs != null) {
      ufs.cancel();
      ufs = null;
    }
    deleteFile();
  }

  /** Best effort: a file that cannot be deleted now stays incomplete, which readers refuse anyway. */
  private void deleteFile() {
    try {
      // Strata only: the partial UFS copy was a temporary name the worker deletes; whatever the UFS holds at
      // the file's own path is not this writer's.
      context.callMaster(m -> m.delete(DeleteRequest.newBuilder().setPath(file.path()).setStrataOnly(true)
          .setFileId(file.id()).build()));
    } catch (StrataException e) {
      LOG.debug("Could not delete {} after its write failed", file.path(), e);
    }
  }
}
