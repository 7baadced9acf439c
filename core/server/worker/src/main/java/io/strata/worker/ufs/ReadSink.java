package io.strata.worker.ufs;

import java.nio.ByteBuffer;

/**
 * The reader of one block read served from the under file system: receives the requested range in
 * order, with flow control, then exactly one of {@link #complete()}, {@link #fail(Throwable)},
 * {@link #serveFromStore()} or {@link #resumeFromStore(long)}.
 *
 * <p>Threading: the UFS code calls one sink from one thread at a time (a worker executor thread, or the
 * thread that finished a load it waited for); {@link #awaitReady} blocks that thread, so it is never
 * called on a gRPC event thread. {@link #isCancelled()} may be called from any thread.
 */
public interface ReadSink {
  /**
   * Waits until the reader can take another chunk. False when it has gone (cancelled) or took nothing
   * for {@code timeoutMs}.
   */
  boolean awaitReady(long timeoutMs) throws InterruptedException;

  /**
   * True when the reader can take another chunk now (its transport's buffer has room); never waits. A load asks this
   * of its first reader, whom it must not wait for.
   */
  boolean isReady();

  /** True once the reader has cancelled. */
  boolean isCancelled();

  /** The next bytes of the range; the sink owns {@code data} from here on. */
  void send(ByteBuffer data);

  /** The whole range was sent. */
  void complete();

  /** The read failed; {@code cause} is usually a {@code StrataException}. */
  void fail(Throwable cause);

  /** The block is now in the local store: serve the read from there, as any cached block. */
  void serveFromStore();

  /**
   * The block is now in the local store, and the reader was sent its range up to block offset {@code offset}
   * (exclusive) already, without checksums: serve the rest, {@code [offset, end of the range)}, from there, also
   * without checksums (the reader accepts unchecksummed bytes of reads that may come from the under file system, and
   * could not place checksums of whole chunks that start before {@code offset}).
   */
  void resumeFromStore(long offset);
}
