package io.strata.worker.rpc;

import io.grpc.stub.StreamObserver;
import io.strata.common.exception.DeadlineExceededException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.grpc.GrpcErrors;
import io.strata.proto.WriteUfsFileRequest;
import io.strata.proto.WriteUfsFileResponse;
import io.strata.worker.ufs.UfsFileWrite;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One under file system file write (WriteUfsFile, for CACHE_THROUGH and THROUGH writers): streams into the
 * file the master names, on the calling thread as block writes do; any failure or cancel deletes the
 * partial file, and so does a client that sends no message for the UFS write idle timeout (its writer went
 * silent). A live client sends an empty message (no header, no bytes) when it has sent nothing for its
 * keep-alive interval, which counts as progress and writes nothing, so a slow writer keeps its stream. The
 * master's word that the file's lease was recovered ends the write too ({@link UfsWrites}).
 *
 * <p>Threading: gRPC delivers its callbacks serially; the idle watch and the heartbeat thread may end it from
 * their own threads, so callbacks hold {@link #lock} (those only try it: a write busy in the UFS is not idle).
 */
final class UfsWriteCall implements StreamObserver<WriteUfsFileRequest>, IdleWatch.Watched, UfsWrites.Write {
  private final CallResources res;
  private final StreamObserver<WriteUfsFileResponse> response;
  private final ReentrantLock lock = new ReentrantLock();
  private UfsFileWrite write;
  private boolean failed;
  private volatile long lastDataNanos = System.nanoTime();
  private volatile long fileId = -1;
  private Runnable unwatch = () -> { };

  UfsWriteCall(CallResources res, StreamObserver<WriteUfsFileResponse> response) {
    this.res = res;
    this.response = response;
  }

  @Override
  public long lastProgressNanos() {
    return lastDataNanos;
  }

  /**
   * On the idle watch's timer thread, which all watched streams share: the abort (a UFS close and delete, which may
   * hang on a failing UFS) goes to the UFS pool; a full pool leaves the stream for the next sweep.
   */
  @Override
  public boolean idle(String why) {
    if (!lock.tryLock()) {
      return false;
    }
    try {
      if (failed) {
        return true;
      }
      if (write != null) {
        if (!res.ufs().abortInBackground(write)) {
          return false;
        }
        write = null; // aborted there; no callback of this call touches it again
      }
      fail(new DeadlineExceededException("Under file system write: the client made " + why
          + "; its partial file is deleted"));
      return true;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public long fileId() {
    return fileId;
  }

  @Override
  public boolean abandon() {
    if (!lock.tryLock()) {
      return false;
    }
    UfsFileWrite aborting;
    try {
      if (failed) {
        return true;
      }
      aborting = write;
      write = null; // aborted below; no callback of this call touches it again
      fail(new FailedPreconditionException("Under file system write of file " + fileId + ": the master recovered "
          + "the file (its writer's lease lapsed); its partial file is deleted"));
    } finally {
      lock.unlock();
    }
    if (aborting != null) {
      aborting.abort(); // UFS I/O: outside the call's lock (the worker hands abandons to its UFS pool)
    }
    return true;
  }

  @Override
  public void onNext(WriteUfsFileRequest req) {
    lock.lock();
    try {
      onNextLocked(req);
    } finally {
      lock.unlock();
    }
  }

  private void onNextLocked(WriteUfsFileRequest req) {
    if (failed) {
      return;
    }
    lastDataNanos = System.nanoTime();
    try {
      if (write == null) {
        if (!req.hasHeader()) {
          throw new InvalidArgumentException("The first message of an under file system write must carry the "
              + "header (the file id)");
        }
        write = res.ufs().openFileWrite(req.getHeader().getFileId());
        fileId = req.getHeader().getFileId();
        Runnable unidle = res.ufsWriteWatch().watch(this);
        Runnable forget = res.ufsWrites().add(this);
        unwatch = () -> {
          unidle.run();
          forget.run();
        };
      } else if (req.hasHeader()) {
        throw new InvalidArgumentException("Under file system write of file " + req.getHeader().getFileId()
            + ": only the first message may carry a header");
      }
      if (!req.getChunk().isEmpty()) {
        write.write(req.getChunk().asReadOnlyByteBuffer());
        lastDataNanos = System.nanoTime();
      }
    } catch (Exception e) {
      fail(e);
    }
  }

  private void fail(Throwable t) {
    failed = true;
    unwatch.run();
    if (write != null) {
      write.abort();
    }
    response.onError(GrpcErrors.toStatus(t));
  }

  @Override
  public void onError(Throwable t) {
    lock.lock();
    try {
      // The client cancelled or the connection broke: no partial file may remain.
      failed = true;
      unwatch.run();
      if (write != null) {
        write.abort();
      }
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void onCompleted() {
    lock.lock();
    try {
      onCompletedLocked();
    } finally {
      lock.unlock();
    }
  }

  private void onCompletedLocked() {
    if (failed) {
      return;
    }
    unwatch.run();
    if (write == null) {
      fail(new InvalidArgumentException("An under file system write ended before its header was sent"));
      return;
    }
    long length;
    try {
      length = write.complete();
    } catch (Exception e) {
      failed = true;
      response.onError(GrpcErrors.toStatus(e));
      return;
    }
    response.onNext(WriteUfsFileResponse.newBuilder().setLength(length).build());
    response.onCompleted();
  }
}
