package io.strata.worker.rpc;

import io.grpc.stub.StreamObserver;
import io.strata.common.exception.DeadlineExceededException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.grpc.GrpcErrors;
import io.strata.proto.WriteUfsFileRequest;
import io.strata.proto.WriteUfsFileResponse;
import io.strata.worker.ufs.UfsFileWrite;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One under file system file write (WriteUfsFile, for CACHE_THROUGH and THROUGH writers): streams into the
 * file the master names, on the calling thread as block writes do; any failure or cancel deletes the
 * partial file, and so does a client that sends no data for the UFS write idle timeout.
 *
 * <p>Threading: gRPC delivers its callbacks serially; the idle watch may end it from its own thread, so
 * callbacks hold {@link #lock} (the watch only tries it: a write busy in the UFS is not idle).
 */
final class UfsWriteCall implements StreamObserver<WriteUfsFileRequest>, IdleWatch.Watched {
  private final CallResources res;
  private final StreamObserver<WriteUfsFileResponse> response;
  private final ReentrantLock lock = new ReentrantLock();
  private UfsFileWrite write;
  private boolean failed;
  private volatile long lastDataNanos = System.nanoTime();
  private Runnable unwatch = () -> { };

  UfsWriteCall(CallResources res, StreamObserver<WriteUfsFileResponse> response) {
    this.res = res;
    this.response = response;
  }

  @Override
  public long lastProgressNanos() {
    return lastDataNanos;
  }

  @Override
  public boolean idle(String why) {
    if (!lock.tryLock()) {
      return false;
    }
    try {
      if (!failed) {
        fail(new DeadlineExceededException("Under file system write: the client made " + why
            + "; its partial file is deleted"));
      }
      return true;
    } finally {
      lock.unlock();
    }
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
        unwatch = res.ufsWriteWatch().watch(this);
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
