package io.strata.client;

import io.strata.common.net.WorkerAddress;
import java.io.IOException;

/**
 * Writes one block to one worker: streamed over gRPC ({@link BlockOutStream}) or short-circuit into the
 * local worker's temp block file ({@link ShortCircuitBlockWriter}); {@link #open} chooses. A worker that
 * has no room answers RESOURCE_EXHAUSTED from the call that needed it, whichever the path, so the
 * caller's write-type rules (issue 9) hold for both.
 *
 * <p>Not thread-safe: one writer thread.
 */
interface BlockWriter {
  long blockId();

  WorkerAddress worker();

  /** Writes {@code chunk[0, length)} (which the caller no longer changes) as the block's next bytes. */
  void write(byte[] chunk, int length) throws IOException;

  /** Ends the block and waits for the worker to commit it (locally and at the master); its length. */
  long close() throws IOException;

  /** Abandons the block; the worker drops its temp block. */
  void cancel();

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
