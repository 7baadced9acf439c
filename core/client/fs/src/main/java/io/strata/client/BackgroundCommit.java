package io.strata.client;

import io.strata.common.exception.ErrorCode;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One finished block whose COMMIT (a round trip to its worker, which commits at the master) runs on the
 * context's background threads while its {@link FileOutStream} writes the next block (MUST_CACHE
 * short-circuit, {@code strata.user.shortcircuit.write.commit.background}). Its writer keeps its descriptor of
 * the block's file until the commit succeeds, so a commit that fails at its worker is written again elsewhere
 * from that file ({@link #rewrite}).
 *
 * <p>Threading: started and waited for by the stream's writer thread. The writer is used by the background
 * thread until its commit is over and by the writer thread only after that; the future orders the two.
 */
final class BackgroundCommit {
  private static final Logger LOG = LoggerFactory.getLogger(BackgroundCommit.class);

  /** How a commit ended: its committed length, or what failed it (null when it succeeded). */
  record Outcome(long length, Throwable failure) {}

  /** Where the block is committed after a rewrite, and its length. */
  record Rewritten(WorkerAddress worker, long length) {}

  final BlockWriter writer;
  final int blockIndex;
  private final CompletableFuture<Long> length;

  private BackgroundCommit(BlockWriter writer, int blockIndex, CompletableFuture<Long> length) {
    this.writer = writer;
    this.blockIndex = blockIndex;
    this.length = length;
  }

  /** Starts {@code writer}'s commit; null (nothing started) when the background threads refuse more work. */
  static BackgroundCommit start(FileSystemContext context, BlockWriter writer, int blockIndex) {
    CompletableFuture<Long> len = new CompletableFuture<>();
    try {
      context.background().execute(() -> {
        try {
          len.complete(writer.close());
        } catch (Throwable t) {
          len.completeExceptionally(t);
        }
      });
    } catch (RejectedExecutionException e) {
      return null;
    }
    return new BackgroundCommit(writer, blockIndex, len);
  }

  /** Whether the commit is over and failed. */
  boolean failed() {
    return length.isCompletedExceptionally();
  }

  /** The stream is abandoned: once the commit is over, a writer whose commit failed closes what it holds. */
  void cancelWhenFailed() {
    length.whenComplete((len, err) -> {
      if (err != null) {
        writer.cancel();
      }
    });
  }

  /**
   * Waits for the commit to end, in steps, so that a client closed meanwhile (its background threads gone, the
   * commit perhaps never run) ends the wait with UNAVAILABLE; an interrupt ends it too. Either way the commit
   * may still be running, and the writer is not the caller's.
   */
  Outcome await(FileSystemContext context, String path) throws IOException {
    while (true) {
      try {
        return new Outcome(length.get(1, TimeUnit.SECONDS), null);
      } catch (TimeoutException e) {
        if (context.isClosed()) {
          throw new io.strata.common.exception.UnavailableException("The client was closed while block "
              + blockIndex + " of " + path + " was committing");
        }
      } catch (InterruptedException e) {
        throw new java.io.InterruptedIOException("Interrupted waiting for the commit of block " + blockIndex
            + " of " + path);
      } catch (ExecutionException e) {
        return new Outcome(-1, e.getCause());
      }
    }
  }

  /**
   * Writes the block, whose commit failed at its worker with {@code cause}, again to another worker from the
   * bytes in its writer's descriptor, and commits it there, within the write retries; each worker that fails
   * goes to {@code failedWorkers}. Throws what ends the retries (naming the block and the workers tried).
   */
  Rewritten rewrite(FileSystemContext context, WorkerSelector selector, Set<WorkerAddress> failedWorkers,
      BlockRetry.Policy policy, long blockSize, IOException cause, String what) throws IOException {
    BlockReplayBuffer bytes = writer.detachBytes(new BlockReplayBuffer(0));
    writer.cancel();
    long blockId = writer.blockId();
    WorkerAddress failedAt = writer.worker();
    BlockRetry retry = new BlockRetry(policy);
    IOException failure = cause;
    try {
      while (true) {
        failedWorkers.add(failedAt);
        if (bytes == null) {
          throw ErrorCode.DATA_LOSS.toException(what + " failed at worker " + failedAt + " ("
              + failure.getMessage() + "), and its bytes cannot be read back to write it elsewhere", failure);
        }
        LOG.warn("{} failed at worker {} ({}); writing the block again on another worker", what, failedAt,
            failure.getMessage());
        if (!retry.retryAfter("worker " + failedAt, failure)) {
          throw retry.finalError(what, failure);
        }
        BlockWriter w = null;
        try {
          w = BlockWriter.open(context, selector.select(blockId, blockSize, failedWorkers), blockId, blockSize,
              false);
          bytes.replayTo(w::write);
          return new Rewritten(w.worker(), w.close());
        } catch (RuntimeException e) {
          if (w != null) {
            w.cancel();
          }
          throw e;
        } catch (IOException e) {
          if (w != null) {
            w.cancel();
          }
          if (w == null || !BlockRetry.isCopyFailure(e)) {
            throw retry.finalError(what, e);
          }
          failure = e;
          failedAt = w.worker();
        }
      }
    } finally {
      if (bytes != null) {
        bytes.clear(); // closes the failed writer's descriptor
      }
    }
  }
}
