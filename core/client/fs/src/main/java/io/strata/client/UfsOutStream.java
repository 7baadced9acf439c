package io.strata.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.strata.common.exception.DataLossException;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.WriteUfsFileHeader;
import io.strata.proto.WriteUfsFileRequest;
import io.strata.proto.WriteUfsFileResponse;
import java.io.IOException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Writes a file's under file system copy through one worker (write types CACHE_THROUGH and THROUGH), as a
 * WriteUfsFile client stream: the first message names the file, the rest carry its bytes in order. The
 * worker asks the master where to write (a temporary name the master renames into place when the file
 * completes). {@link #close()} half-closes and checks the length the worker wrote; {@link #cancel()} makes
 * the worker delete the partial copy. Flow control as in {@link OutboundStream}.
 *
 * <p>Keep-alives: the worker ends a stream that brought it no message for its
 * {@code strata.worker.ufs.write.idle.timeout} (its writer went silent), but this stream sends only when the
 * writer fills a chunk, and a writer may be slow and alive: a gap between two chunks longer than that timeout
 * would lose the whole file. So from its first message to its close or cancel the stream is held by the
 * context's {@link UfsKeepAlives}, which calls {@link #keepAlive} from its own thread; an empty message (no
 * header, no bytes: the worker only notes it as progress) goes out when nothing was sent for the keep-alive
 * interval and the file's lease is still held. A writer that died sends nothing more, and its stream is reaped.
 *
 * <p>One writer thread calls the other methods; {@link #sending} keeps a keep-alive from overlapping them.
 */
final class UfsOutStream {
  private final long fileId;
  private final String path;
  private final WorkerAddress worker;
  private final OutboundStream<WriteUfsFileRequest, WriteUfsFileResponse> stream;
  private final UfsKeepAlives keepAlives;
  /** Serialises the writer's sends, half-close and cancel with a keep-alive (which only tries it). */
  private final ReentrantLock sending = new ReentrantLock();
  private long written;
  /** Written under {@link #sending}. */
  private boolean headerSent;
  /** Half-closed, cancelled or failed: nothing more may be sent. Guarded by {@link #sending}. */
  private boolean ended;
  /** {@code System.nanoTime()} of the last message sent. */
  private volatile long lastSentNanos = System.nanoTime();

  UfsOutStream(FileSystemContext context, WorkerAddress worker, long fileId, String path) {
    this.fileId = fileId;
    this.path = path;
    this.worker = worker;
    this.keepAlives = context.ufsKeepAlives();
    this.stream = new OutboundStream<>("writing the under file system copy of " + path + " through worker "
        + worker, context.rpcTimeoutMs(), o -> context.worker(worker).writeUfsFile(o));
  }

  WorkerAddress worker() {
    return worker;
  }

  long fileId() {
    return fileId;
  }

  /** Sends {@code req} (on the writer thread), once the transport can take it. */
  private void send(WriteUfsFileRequest req) throws IOException {
    sending.lock();
    try {
      boolean first = !headerSent;
      try {
        stream.send(req);
      } catch (IOException | RuntimeException e) {
        ended = true; // the call failed or was cancelled: its writer abandons it
        throw e;
      }
      headerSent = true;
      lastSentNanos = System.nanoTime();
      if (first) {
        keepAlives.add(this); // from now on an empty message is valid on this stream
      }
    } finally {
      sending.unlock();
    }
  }

  /**
   * On the keep-alive thread: sends an empty message if the stream sent nothing for {@code idleNanos} and is open,
   * its transport ready and no send of the writer's under way (that one is progress enough); never waits. True
   * when sent.
   */
  boolean keepAlive(long nowNanos, long idleNanos) {
    if (nowNanos - lastSentNanos < idleNanos || !sending.tryLock()) {
      return false;
    }
    try {
      if (ended || !headerSent || !stream.sendIfReady(WriteUfsFileRequest.getDefaultInstance())) {
        return false;
      }
      lastSentNanos = nowNanos;
      return true;
    } catch (RuntimeException e) {
      return false; // the call ended meanwhile (the worker failed it): its writer finds out at its next send
    } finally {
      sending.unlock();
    }
  }

  private WriteUfsFileRequest.Builder request() {
    WriteUfsFileRequest.Builder req = WriteUfsFileRequest.newBuilder();
    if (!headerSent) {
      req.setHeader(WriteUfsFileHeader.newBuilder().setFileId(fileId));
    }
    return req;
  }

  /** Sends {@code chunk} (which the caller no longer changes) once the transport can take it. */
  void write(byte[] chunk, int length) throws IOException {
    ByteString data = UnsafeByteOperations.unsafeWrap(chunk, 0, length);
    send(request().setChunk(data).build());
    written += length;
  }

  /** Closes the under file system file and checks that the worker wrote every byte sent; returns the length. */
  long close() throws IOException {
    long length;
    try {
      if (!headerSent) {
        send(request().build()); // an empty file still has to be created
      }
      end();
      length = stream.finish().getLength();
    } finally {
      end();
    }
    if (length != written) {
      throw new DataLossException("Worker " + worker + " wrote " + length + " bytes of the under file system "
          + "copy of " + path + ", but " + written + " were sent");
    }
    return length;
  }

  /** No message follows: no more keep-alives (one in progress finishes first). */
  private void end() {
    sending.lock();
    try {
      ended = true;
    } finally {
      sending.unlock();
    }
    keepAlives.remove(this);
  }

  /** Aborts; the worker deletes the partial under file system file. */
  void cancel() {
    end();
    stream.cancel();
  }
}
