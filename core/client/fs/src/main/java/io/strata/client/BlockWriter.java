package io.strata.client;

import io.strata.common.net.WorkerAddress;
import java.io.IOException;

/**
 * Where {@link FileOutStream} sends the block it is writing: one worker's WriteBlock stream
 * ({@link BlockOutStream}), or, to a worker on this host, short-circuit into its temp block file
 * ({@link ShortCircuitBlockWriter}); {@link #open} chooses. A worker that has no room answers
 * RESOURCE_EXHAUSTED from the call that needed it, whichever the path, so the write-type rules (issue 9)
 * hold for both. When a writer fails, FileOutStream cancels it and replays the block's bytes so far into a
 * new writer for another worker ({@link BlockReplayBuffer}), so a writer holds nothing the caller still needs.
 *
 * <p>Not thread-safe: one writer thread.
 */
interface BlockWriter {
  long blockId();

  /** The worker that receives the block. */
  WorkerAddress worker();

  /** Sends {@code chunk} (which the caller no longer changes) once the worker can take it. */
  void write(byte[] chunk, int length) throws IOException;

  /** Ends the block and waits for the worker to commit it; returns the committed length. */
  long close() throws IOException;

  /** Aborts; the worker drops what it received. Harmless after a failure. */
  void cancel();

  /**
   * Whether this writer keeps the block's bytes itself, readable back after it fails ({@link #detachBytes}):
   * then the caller need not keep them, and may write from arrays it goes on changing ({@link #writeThrough}).
   */
  default boolean keepsBytes() {
    return false;
  }

  /**
   * Writes {@code len} bytes of {@code b} from {@code off}, done with the array on return (only when
   * {@link #keepsBytes}); on failure none of them counts as written.
   */
  default void writeThrough(byte[] b, int off, int len) throws IOException {
    throw new UnsupportedOperationException("this writer does not keep the block's bytes");
  }

  /**
   * After a failure, before {@link #cancel}, when {@link #keepsBytes}: the bytes written so far, handed over
   * into {@code to} (which then owns what holds them). Null when they cannot be had.
   */
  default BlockReplayBuffer detachBytes(BlockReplayBuffer to) {
    return null;
  }

  /**
   * The writer for a block of {@code maxLength} bytes at {@code worker}: short-circuit when the worker is on
   * this host (its host name is {@code strata.user.hostname}, the rule reads follow) and
   * {@code strata.user.shortcircuit.mode} is not off, else (or when short-circuit is not possible here; the
   * reason logged once) streamed. With {@code reserved}, the block's room was reserved whole by
   * {@link BlockOutStream#reserve}.
   */
  static BlockWriter open(FileSystemContext context, WorkerAddress worker, long blockId, long maxLength,
      boolean reserved) throws IOException {
    if (worker.host().equals(context.conf().get(ClientKeys.HOSTNAME))) {
      long grant = context.conf().get(ClientKeys.SHORT_CIRCUIT_WRITE_GRANT_SIZE);
      io.strata.client.shortcircuit.ShortCircuitWrite w =
          context.shortCircuit().create(worker, blockId, maxLength, reserved, Math.min(grant, maxLength));
      if (w != null) {
        return new ShortCircuitBlockWriter(w, grant);
      }
      if (reserved && context.shortCircuit().mode() != io.strata.client.shortcircuit.ShortCircuitClient.Mode.OFF) {
        reserveAgain(context, worker, blockId, maxLength);
      }
    }
    return new BlockOutStream(context, worker, blockId, maxLength, reserved);
  }

  /**
   * A short-circuit attempt that gave up after the worker took the block's reservation gave it back
   * (dropped the temp block): reserve it again for the stream; AlreadyExists means it was never taken.
   */
  private static void reserveAgain(FileSystemContext context, WorkerAddress worker, long blockId, long maxLength)
      throws IOException {
    try {
      BlockOutStream.reserve(context, worker, blockId, maxLength,
          context.conf().get(ClientKeys.WRITE_SPACE_WAIT_TIMEOUT).toMillis());
    } catch (io.strata.common.exception.AlreadyExistsException stillReserved) {
      // the reservation is still there for the stream to take
    }
  }
}
