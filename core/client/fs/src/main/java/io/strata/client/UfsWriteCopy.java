package io.strata.client;

import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The under file system copy of a file a {@link FileOutStream} writes, through one worker ({@link UfsOutStream}):
 * CACHE_THROUGH and THROUGH write it from the first byte ({@link #open}); an ASYNC_THROUGH file for which no
 * worker has room falls back to it ({@link #writeThrough}): the copy gets the blocks committed so far, read back
 * from their workers, then every later byte, and the file completes PERSISTED with those blocks cached
 * ({@code ufs_written}, {@link #through}).
 *
 * <p>A method that throws leaves the write to its stream to abandon ({@link #cancel}: the worker deletes the
 * partial copy).
 *
 * <p>Not thread-safe: its stream's one writer thread.
 */
final class UfsWriteCopy {
  private static final Logger LOG = LoggerFactory.getLogger(UfsWriteCopy.class);

  private final FileSystemContext context;
  private final WorkerSelector selector;
  private final URIStatus file;
  /** The size of the pieces committed blocks are read back and sent in. */
  private final int chunkSize;
  private UfsOutStream stream;
  /** Told the copy's stream, to cancel it if the file's stream is dropped unclosed. */
  private final OpenWrite open;
  /** ASYNC_THROUGH: no worker had room; the rest of the file goes to the under file system only. */
  private boolean through;

  UfsWriteCopy(FileSystemContext context, WorkerSelector selector, URIStatus file, int chunkSize, OpenWrite open) {
    this.open = open;
    this.context = context;
    this.selector = selector;
    this.file = file;
    this.chunkSize = chunkSize;
  }

  /** Makes {@code s} (or null) the copy's stream. */
  private void setStream(UfsOutStream s) {
    stream = s;
    open.ufs = s;
  }

  /** The copy's stream, or null while none is written (not yet, not for this write type, or closed). */
  UfsOutStream stream() {
    return stream;
  }

  /** Whether the file fell back to its under file system copy (ASYNC_THROUGH with no worker room left). */
  boolean through() {
    return through;
  }

  /** Opens the copy through a worker the write policy picks among those not in {@code failed}, unless open. */
  void open(Set<WorkerAddress> failed) throws IOException {
    if (stream != null) {
      return;
    }
    WorkerAddress worker = selector.select(0, failed);
    setStream(new UfsOutStream(context, worker, file.id(), file.path()));
  }

  /**
   * ASYNC_THROUGH, no worker had room for block {@code blockIndex} ({@code why}): from now on the file is written
   * through. Its UFS copy gets the {@code committed} blocks, read back from their workers, then
   * {@code blockSoFar} (the bytes so far of a block failing over; null for none), then every later byte.
   */
  void writeThrough(ResourceExhaustedException why, int blockIndex, Set<WorkerAddress> failed,
      List<BlockFailover.Committed> committed, BlockReplayBuffer blockSoFar) throws IOException {
    LOG.warn("No worker has room for block {} of {}; writing the file through to the under file system: {}",
        blockIndex, file.path(), why.getMessage());
    try {
      setStream(new UfsOutStream(context, selector.select(0, failed), file.id(), file.path()));
      for (BlockFailover.Committed c : committed) {
        try (BlockReader r = new BlockReader(context, c.worker(), c.blockId(), 0, c.length(), false, false, false,
            false, false)) {
          for (long done = 0; done < c.length(); ) {
            int n = (int) Math.min(chunkSize, c.length() - done);
            byte[] buf = new byte[n];
            r.readFully(buf, 0, n);
            stream.write(buf, n);
            done += n;
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      e.addSuppressed(why);
      throw e;
    }
    through = true;
    if (blockSoFar != null) {
      blockSoFar.replayTo(stream::write);
    }
  }

  /** Closes the copy, if written, checking that the worker wrote every byte sent. */
  void close() throws IOException {
    if (stream != null) {
      stream.close();
      setStream(null);
    }
  }

  /** Aborts the copy, if written; the worker deletes the partial file. */
  void cancel() {
    if (stream != null) {
      stream.cancel();
      setStream(null);
    }
  }
}
