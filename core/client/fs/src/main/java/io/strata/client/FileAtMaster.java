package io.strata.client;

import io.strata.common.exception.StrataException;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.DeleteRequest;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's side of a file a {@link FileOutStream} writes: its write lease, renewed from the stream's creation
 * until the file completes or the write is abandoned; the completion ({@link #complete}), one request whose
 * retries carry one request id; the deletion of a file whose write failed ({@link #delete}). Each call ends by
 * dropping the path from the context's metadata cache.
 *
 * <p>Not thread-safe: its stream's one writer thread; the calls block on the master.
 */
final class FileAtMaster {
  private static final Logger LOG = LoggerFactory.getLogger(FileAtMaster.class);

  private final FileSystemContext context;
  private final URIStatus file;

  FileAtMaster(FileSystemContext context, URIStatus file) {
    this.context = context;
    this.file = file;
    context.leases().add(file.id()); // renewed until the file completes or is abandoned
  }

  /** Stops renewing the lease: the write is abandoned. */
  void dropLease() {
    context.leases().remove(file.id());
  }

  /**
   * Completes the file with {@code length} bytes; {@code ufsWritten}: an ASYNC_THROUGH file written through to
   * its under file system copy (PERSISTED, with the blocks committed before cached).
   */
  void complete(long length, boolean ufsWritten) throws IOException {
    try {
      context.leases().remove(file.id()); // the master drops its lease when the file completes
      // One request, so one request id, for every retry: a retry the master already applied gets its answer.
      CompleteFileRequest req = CompleteFileRequest.newBuilder().setPath(file.path()).setFileId(file.id())
          .setLength(length).setUfsWritten(ufsWritten).setRequestId(context.nextRequestId()).build();
      context.callMaster(m -> m.completeFile(req));
    } catch (StrataException e) {
      // Not deleted: the master may have completed it and lost only the reply, or the path may now name
      // another writer's file. An incomplete file is refused by readers anyway.
      throw e.code().toException("Completing " + file.path() + " failed: " + e.getMessage(), e);
    } finally {
      context.metadataCache().invalidate(file.path());
    }
  }

  /** Best effort: a file that cannot be deleted now stays incomplete, which readers refuse anyway. */
  void delete() {
    try {
      // Strata only: the partial UFS copy was a temporary name the worker deletes; whatever the UFS holds at
      // the file's own path is not this writer's.
      DeleteRequest req = DeleteRequest.newBuilder().setPath(file.path()).setStrataOnly(true)
          .setFileId(file.id()).setRequestId(context.nextRequestId()).build();
      context.callMaster(m -> m.delete(req));
    } catch (StrataException e) {
      LOG.debug("Could not delete {} after its write failed", file.path(), e);
    } finally {
      context.metadataCache().invalidate(file.path());
    }
  }
}
