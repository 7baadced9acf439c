package io.strata.worker.rpc;

import com.google.protobuf.UnsafeByteOperations;
import io.grpc.stub.ServerCallStreamObserver;
import io.strata.common.grpc.ChunkMarshaller;
import io.strata.common.grpc.GrpcErrors;
import io.strata.common.time.Deadlines;
import io.strata.proto.ReadBlockResponse;
import io.strata.worker.ufs.ReadSink;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The response side of one ReadBlock call. gRPC lets a service set a call's ready and cancel handlers
 * only while the call is first delivered, but a read served from the under file system may switch to
 * the local store later (after a load it waited for): so this object installs both handlers up front and
 * forwards them to whoever serves the call now. As a {@link ReadSink} it lets UFS code on a worker thread
 * wait for the transport to be ready and send chunks of at most the call's chunk size.
 *
 * <p>Threading: one party sends at a time (the UFS code, or a store read once handed over); the
 * handlers run on gRPC threads and only signal or forward. Waiters block on this object's monitor.
 */
final class ReadStream implements ReadSink {
  /** Serves the call from the local store (set by the service). */
  interface StoreReader {
    /**
     * Serves {@code stream}'s request; from {@code resumeAt} ({@code >= 0}) to its end only, without checksums
     * ({@link ReadSink#resumeFromStore}).
     */
    void serve(ReadStream stream, long resumeAt);
  }

  private final ServerCallStreamObserver<ReadBlockResponse> out;
  private final int chunk;
  private volatile StoreReader storeReader;
  private volatile Runnable readyListener;
  private volatile Runnable cancelListener;
  private volatile boolean cancelled;

  /** Must be called while gRPC first delivers the call. */
  ReadStream(ServerCallStreamObserver<ReadBlockResponse> out, int chunk) {
    this.out = out;
    this.chunk = chunk;
    out.setOnReadyHandler(this::onReady);
    out.setOnCancelHandler(this::onCancel);
  }

  void storeReader(StoreReader r) {
    this.storeReader = r;
  }

  int chunk() {
    return chunk;
  }

  private void onReady() {
    synchronized (this) {
      notifyAll();
    }
    Runnable r = readyListener;
    if (r != null) {
      r.run();
    }
  }

  private void onCancel() {
    cancelled = true;
    synchronized (this) {
      notifyAll();
    }
    Runnable r = cancelListener;
    if (r != null) {
      r.run();
    }
  }

  /** Forwards the call's ready and cancel events to a store read. */
  void listen(Runnable onReady, Runnable onCancel) {
    this.readyListener = onReady;
    this.cancelListener = onCancel;
  }

  @Override
  public boolean isReady() {
    return out.isReady();
  }

  @Override
  public boolean isCancelled() {
    return cancelled || out.isCancelled();
  }

  @Override
  public boolean awaitReady(long timeoutMs) throws InterruptedException {
    long deadline = Deadlines.nanoDeadline(System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(timeoutMs));
    synchronized (this) {
      while (true) {
        if (isCancelled()) {
          return false;
        }
        if (out.isReady()) {
          return true;
        }
        long leftMs = Deadlines.nanosLeft(System.nanoTime(), deadline) / 1_000_000L;
        if (leftMs <= 0) {
          return false;
        }
        // A bounded wait: readiness is re-checked even if a signal raced past.
        wait(Math.min(leftMs, 100));
      }
    }
  }

  @Override
  public void send(ByteBuffer data) {
    while (data.hasRemaining() && !isCancelled()) {
      int n = Math.min(chunk, data.remaining());
      ByteBuffer piece = data.slice();
      piece.limit(n);
      data.position(data.position() + n);
      // The UFS code never reuses a buffer it sent, so wrapping without a copy is safe.
      out.onNext(ReadBlockResponse.newBuilder().setChunk(UnsafeByteOperations.unsafeWrap(piece)).build());
    }
  }

  /**
   * A message whose chunk wraps {@code data} (no copy); with {@code sums}, {@code data} is whole checksum
   * chunks starting at block offset {@code offset}, and the message carries their checksums.
   */
  static ReadBlockResponse message(ByteBuffer data, long offset, int[] sums) {
    ReadBlockResponse.Builder r = ReadBlockResponse.newBuilder().setChunk(UnsafeByteOperations.unsafeWrap(data));
    if (sums != null) {
      r.setOffset(offset);
      int to = io.strata.common.checksum.ChunkChecksums.chunkOf(offset + data.remaining() - 1) + 1;
      for (int i = io.strata.common.checksum.ChunkChecksums.chunkOf(offset); i < to; i++) {
        r.addChunkCrc32C(sums[i]);
      }
    }
    return r.build();
  }

  /**
   * Sends one message whose chunk is lent from a pooled buffer: {@code release} runs once gRPC has
   * written it, or at once when the call ended before it could be sent.
   */
  void sendLent(ReadBlockResponse msg, ChunkMarshaller<ReadBlockResponse> marshaller, Runnable release) {
    marshaller.onWritten(msg, release);
    try {
      out.onNext(msg);
    } finally {
      marshaller.forgetWritten(msg);
    }
  }

  /** Sends one message (store reads size their own chunks). */
  void sendOne(ReadBlockResponse msg) {
    out.onNext(msg);
  }

  @Override
  public void complete() {
    if (!isCancelled()) {
      out.onCompleted();
    }
  }

  @Override
  public void fail(Throwable cause) {
    if (!isCancelled()) {
      out.onError(GrpcErrors.toStatus(cause));
    }
  }

  @Override
  public void serveFromStore() {
    // A resumed reader stays resumed: a block that left the store before the resume opened it sends this stream back
    // through the UFS paths, which end in serveFromStore; the original request would send the bytes again from its
    // start (duplicates the client cannot see: they are unchecksummed, as the bytes it got before).
    storeReader.serve(this, resumeAt);
  }

  /** The block offset this stream resumed at ({@link #resumeFromStore}); -1 when it did not. */
  private volatile long resumeAt = -1;

  @Override
  public void resumeFromStore(long offset) {
    if (offset < 0) {
      throw new IllegalArgumentException("Negative resume offset " + offset);
    }
    resumeAt = offset;
    storeReader.serve(this, offset);
  }
}
