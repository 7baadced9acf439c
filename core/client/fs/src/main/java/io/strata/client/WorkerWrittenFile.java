package io.strata.client;

import io.strata.common.exception.StrataException;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.DeleteRequest;
import java.io.IOException;

/**
 * A file created at the master whose blocks workers write themselves (Strata's shuffle partition files:
 * workers append pushed batches into its blocks and, at the seal, write its under file system copy), as
 * opposed to a {@link FileOutStream}, which streams the bytes from this client. The client holds the
 * file's write lease (renewed with its context's other files) until {@link #complete} or
 * {@link #abandon}.
 *
 * <p>Thread-safe; {@link #complete} and {@link #abandon} call the master (blocking).
 */
public final class WorkerWrittenFile {
  private final FileSystemContext context;
  private final URIStatus status;

  WorkerWrittenFile(FileSystemContext context, URIStatus status) {
    this.context = context;
    this.status = status;
    context.leases().add(status.id());
  }

  /** The file as the master described it at creation (its id names its blocks). */
  public URIStatus status() {
    return status;
  }

  /**
   * Completes the file with {@code length} bytes: its blocks must be committed with those bytes and, for a
   * CACHE_THROUGH file, its under file system copy written with that length (the master renames it into
   * place, so the file is PERSISTED).
   */
  public URIStatus complete(long length) throws IOException {
    CompleteFileRequest req = CompleteFileRequest.newBuilder().setPath(status.path()).setFileId(status.id())
        .setLength(length).setRequestId(context.nextRequestId()).build();
    try {
      URIStatus done = ProtoConverter.toStatus(context.callMaster(m -> m.completeFile(req)).getFile());
      context.leases().remove(status.id());
      return done;
    } catch (StrataException e) {
      throw e.code().toException("Completing " + status.path() + " failed: " + e.getMessage(), e);
    } finally {
      context.metadataCache().invalidate(status.path());
    }
  }

  /** Stops renewing the lease and deletes the file at the master (best effort; its workers' copies go too). */
  public void abandon() {
    context.leases().remove(status.id());
    try {
      DeleteRequest req = DeleteRequest.newBuilder().setPath(status.path()).setStrataOnly(true)
          .setFileId(status.id()).setRequestId(context.nextRequestId()).build();
      context.callMaster(m -> m.delete(req));
    } catch (StrataException e) {
      // An incomplete file nobody renews is deleted by the master after its lease timeout.
    } finally {
      context.metadataCache().invalidate(status.path());
    }
  }
}
