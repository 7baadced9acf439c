package io.strata.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.strata.common.exception.CancelledException;
import io.strata.common.exception.DeadlineExceededException;
import io.strata.common.exception.StrataException;
import io.strata.common.grpc.GrpcErrors;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.WriteBlockHeader;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Streams one block to one worker as a gRPC client stream of chunks. Sends only while the transport is
 * ready (gRPC's flow-control window), so a slow worker makes the writer wait rather than fill memory.
 * {@link #close()} half-closes and waits for the worker's commit; {@link #cancel()} aborts, and the
 * worker drops its temp block.
 *
 * <p>Not thread-safe: one writer thread; gRPC callbacks only signal it.
 */
final class BlockOutStream {
  private final long blockId;
  private final WorkerAddress worker;
  private final long timeoutMs;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private ClientCallStreamObserver<WriteBlockRequest> requests;
  private WriteBlockResponse response;
  private Throwable error;
  private boolean done;
  private long written;
  private boolean headerSent;
  private final long maxLength;

  BlockOutStream(FileSystemContext context, WorkerAddress worker, long blockId, long maxLength) {
    this.blockId = blockId;
    this.worker = worker;
    this.maxLength = maxLength;
    this.timeoutMs = context.rpcTimeoutMs();
    context.worker(worker).writeBlock(new ClientResponseObserver<WriteBlockRequest, WriteBlockResponse>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<WriteBlockRequest> stream) {
        requests = stream;
        stream.setOnReadyHandler(BlockOutStream.this::signal);
      }

      @Override
      public void onNext(WriteBlockResponse value) {
        lock.lock();
        try {
          response = value;
        } finally {
          lock.unlock();
        }
      }

      @Override
      public void onError(Throwable t) {
        lock.lock();
        try {
          error = t;
          done = true;
          changed.signalAll();
        } finally {
          lock.unlock();
        }
      }

      @Override
      public void onCompleted() {
        lock.lock();
        try {
          done = true;
          changed.signalAll();
        } finally {
          lock.unlock();
        }
      }
    });
  }

  private void signal() {
    lock.lock();
    try {
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  WorkerAddress worker() {
    return worker;
  }

  long written() {
    return written;
  }

  /** Sends {@code chunk} (which the caller no longer touches) once the transport can take it. */
  void write(byte[] chunk, int length) throws IOException {
    awaitReady();
    WriteBlockRequest.Builder req = WriteBlockRequest.newBuilder();
    if (!headerSent) {
      req.setHeader(WriteBlockHeader.newBuilder().setBlockId(blockId).setMaxLength(maxLength));
      headerSent = true;
    }
    ByteString data = UnsafeByteOperations.unsafeWrap(chunk, 0, length);
    requests.onNext(req.setChunk(data).build());
    written += length;
  }

  private void awaitReady() throws IOException {
    lock.lock();
    try {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
      while (!done && !requests.isReady()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          cancel();
          throw new DeadlineExceededException("Worker " + worker + " took no data for " + timeoutMs
              + " ms while writing block " + blockId);
        }
        changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
      }
      if (done) {
        throw failure();
      }
    } catch (InterruptedException e) {
      cancel();
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while writing block " + blockId);
    } finally {
      lock.unlock();
    }
  }

  private StrataException failure() {
    if (error != null) {
      StrataException e = GrpcErrors.fromThrowable(error);
      return e.code().toException("Writing block " + blockId + " to worker " + worker + " failed: "
          + e.getMessage(), error);
    }
    return new CancelledException("Worker " + worker + " ended the write of block " + blockId + " early");
  }

  /** Half-closes and waits for the worker to commit; returns the committed length. */
  long close() throws IOException {
    if (!headerSent) {
      // An empty block still needs its header so the worker knows which block to commit.
      awaitReady();
      requests.onNext(WriteBlockRequest.newBuilder()
          .setHeader(WriteBlockHeader.newBuilder().setBlockId(blockId).setMaxLength(maxLength)).build());
      headerSent = true;
    }
    requests.onCompleted();
    lock.lock();
    try {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
      while (!done) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          requests.cancel("commit timed out", null);
          throw new DeadlineExceededException("Worker " + worker + " did not commit block " + blockId
              + " within " + timeoutMs + " ms");
        }
        changed.awaitNanos(left);
      }
      if (error != null || response == null) {
        throw failure();
      }
      return response.getLength();
    } catch (InterruptedException e) {
      requests.cancel("interrupted", e);
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while committing block " + blockId);
    } finally {
      lock.unlock();
    }
  }

  /** Aborts the write; the worker removes the temp block. */
  void cancel() {
    requests.cancel("write cancelled by client", null);
  }
}
