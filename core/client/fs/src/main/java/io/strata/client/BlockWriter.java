package io.strata.client;

import io.strata.common.net.WorkerAddress;
import java.io.IOException;

/**
 * Where {@link FileOutStream} sends the block it is writing: one worker's WriteBlock stream
 * ({@link BlockOutStream}), or any other way to one worker (a short-circuit writer fits). When a writer
 * fails, FileOutStream cancels it and replays the block's bytes so far into a new writer for another worker
 * ({@link BlockReplayBuffer}), so a writer holds nothing the caller still needs.
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
}
