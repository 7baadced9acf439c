package io.strata.client;

import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.StrataException;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.FileResult;
import io.strata.proto.CompleteFilesRequest;
import io.strata.proto.CompleteFilesResponse;
import io.strata.proto.DeleteRequest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A file created at the master whose blocks workers write themselves (Strata's shuffle partition files:
 * workers append pushed batches into its blocks and, at the seal, write its under file system copy), as
 * opposed to a {@link FileOutStream}, which streams the bytes from this client. The client holds the
 * file's write lease (renewed with its context's other files) until {@link #complete} or
 * {@link #abandon}.
 *
 * <p>Dropped before {@link #complete} or {@link #abandon}, the file's lease is no longer renewed once the collector
 * finds it unreachable ({@link OpenWrite}): the master deletes the file after its lease timeout.
 *
 * <p>Thread-safe; {@link #complete} and {@link #abandon} call the master (blocking).
 */
public final class WorkerWrittenFile {
  private final FileSystemContext context;
  private final URIStatus status;
  /** What this file lets go of when dropped before complete or abandon: its lease ({@link StreamCleaner}). */
  private final OpenWrite open;

  WorkerWrittenFile(FileSystemContext context, URIStatus status) {
    this.context = context;
    this.status = status;
    this.open = new OpenWrite(context.leases(), status.id(), status.path(), null);
    context.leases().add(status.id());
    StreamCleaner.register(this, open);
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
      open.done();
      return done;
    } catch (StrataException e) {
      throw e.code().toException("Completing " + status.path() + " failed: " + e.getMessage(), e);
    } finally {
      context.metadataCache().invalidate(status.path());
    }
  }

  /**
   * Most files one {@link #completeAll} (or {@link FileSystem#createWorkerWrittenFiles}) call takes: the
   * master's bound on a CompleteFiles (CreateFiles) call.
   */
  public static final int COMPLETE_ALL_MAX = 1000;

  /** The outcome of creating one file of {@link FileSystem#createWorkerWrittenFiles}: it, or (null) why not. */
  public record Creation(WorkerWrittenFile file, StrataException error) {}

  /** The outcome of one file of {@link #completeAll}: its status (with blocks), or (status null) why it failed. */
  public record Completion(URIStatus status, StrataException error) {}

  /**
   * Completes each of {@code files} with the length at the same index, as {@link #complete} would, in one
   * master call (one journal flush for all); each answer is the file's status with its blocks and their
   * locations, or that file's error. Throws only when the call as a whole fails (the master unreachable after
   * the context's retries; every retry carries the same request ids, so nothing completes twice). The files
   * must come from one context, at most {@link #COMPLETE_ALL_MAX} of them.
   */
  public static List<Completion> completeAll(List<WorkerWrittenFile> files, long[] lengths) throws IOException {
    if (files.isEmpty() || files.size() > COMPLETE_ALL_MAX || lengths.length != files.size()) {
      throw new io.strata.common.exception.InvalidArgumentException("completeAll takes 1 to " + COMPLETE_ALL_MAX
          + " files and one length each, not " + files.size() + " files and " + lengths.length + " lengths");
    }
    FileSystemContext context = files.get(0).context;
    CompleteFilesRequest.Builder req = CompleteFilesRequest.newBuilder().setIncludeBlocks(true);
    for (int i = 0; i < files.size(); i++) {
      WorkerWrittenFile f = files.get(i);
      if (f.context != context) {
        throw new io.strata.common.exception.InvalidArgumentException("completeAll takes files of one context; "
            + f.status.path() + " is of another");
      }
      req.addFiles(CompleteFileRequest.newBuilder().setPath(f.status.path()).setFileId(f.status.id())
          .setLength(lengths[i]).setRequestId(context.nextRequestId()));
    }
    CompleteFilesRequest built = req.build();
    CompleteFilesResponse answer;
    try {
      answer = context.callMaster(m -> m.completeFiles(built));
    } finally {
      context.metadataCache().invalidate(files.stream().map(f -> f.status.path()).toList());
    }
    if (answer.getResultsCount() != files.size()) {
      throw new io.strata.common.exception.InternalException("The master answered " + answer.getResultsCount()
          + " results to a CompleteFiles of " + files.size() + " files");
    }
    List<Completion> out = new ArrayList<>(files.size());
    for (int i = 0; i < files.size(); i++) {
      FileResult r = answer.getResults(i);
      WorkerWrittenFile f = files.get(i);
      if (r.getErrorCode().isEmpty()) {
        context.leases().remove(f.status.id());
        f.open.done();
        out.add(new Completion(ProtoConverter.toStatus(r.getFile()), null));
      } else {
        out.add(new Completion(null, error(r, "Completing " + f.status.path())));
      }
    }
    return out;
  }

  /** The exception of a failed entry of a CreateFiles or CompleteFiles answer; {@code doing} names the call. */
  static StrataException error(FileResult r, String doing) {
    ErrorCode code;
    try {
      code = ErrorCode.valueOf(r.getErrorCode());
    } catch (IllegalArgumentException e) {
      code = ErrorCode.INTERNAL; // a code this client does not know
    }
    return code.toException(doing + " failed: " + r.getErrorMessage(), null);
  }

  /** Stops renewing the lease and deletes the file at the master (best effort; its workers' copies go too). */
  public void abandon() {
    context.leases().remove(status.id());
    open.done();
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
