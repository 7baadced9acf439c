package io.strata.client;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a file being written holds that must be let go when its writer ({@link FileOutStream} or
 * {@link WorkerWrittenFile}) is dropped without close, cancel, complete or abandon: the file's write lease (else the
 * context renews it, and keeps its id, for as long as it lives), the under file system stream (else the context's
 * {@link UfsKeepAlives} keep it open at its worker for as long), the current block's stream and the temp block
 * created ahead. Registered with the {@link StreamCleaner} by the writer; it holds none of the writer's own objects,
 * only the lease renewer, the file's id and path and the streams, so the writer can become unreachable. Once the
 * collector finds the writer so, {@link #run} drops the lease and cancels the streams; the master recovers (deletes)
 * the file after its lease timeout, as for a writer that died.
 *
 * <p>The stream fields are set by the writer's one thread as it opens and ends its streams; {@link #run} reads them
 * on the cleaner's thread only once the writer is unreachable, or on the writer's own thread when it ends
 * ({@link #done}, after which run does nothing).
 */
final class OpenWrite implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(OpenWrite.class);

  private final LeaseRenewer leases;
  private final long fileId;
  private final String path;
  private final WriteAhead ahead;
  /** The current block's writer, or null. */
  volatile BlockWriter block;
  /** The under file system copy's stream, or null. */
  volatile UfsOutStream ufs;
  /** The writer ended (closed, cancelled, completed, abandoned): nothing is left to let go. */
  private volatile boolean done;

  /** For the file {@code fileId} at {@code path}, whose lease {@code leases} renews; {@code ahead} may be null. */
  OpenWrite(LeaseRenewer leases, long fileId, String path, WriteAhead ahead) {
    this.leases = leases;
    this.fileId = fileId;
    this.path = path;
    this.ahead = ahead;
  }

  /** The writer ended the write itself: a later {@link #run} (its clean) does nothing. */
  void done() {
    done = true;
  }

  @Override
  public void run() {
    if (done) {
      return;
    }
    done = true;
    LOG.warn("The writer of {} (file id {}) was dropped without being closed or cancelled: its lease is no longer "
        + "renewed (the master deletes the file after its lease timeout) and its streams are cancelled", path, fileId);
    leases.remove(fileId);
    BlockWriter b = block;
    UfsOutStream u = ufs;
    // The cancels may wait for their workers' answers (a short-circuit abort, up to the RPC timeout): not on the
    // cleaner's one thread, which every dropped stream's clean-up shares.
    StreamCleaner.later(() -> {
      if (ahead != null) {
        ahead.discard();
      }
      if (b != null) {
        b.cancel();
      }
      if (u != null) {
        u.cancel();
      }
    });
  }
}
