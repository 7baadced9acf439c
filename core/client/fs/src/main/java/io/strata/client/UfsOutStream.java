package io.strata.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.strata.common.exception.DataLossException;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.WriteUfsFileHeader;
import io.strata.proto.WriteUfsFileRequest;
import io.strata.proto.WriteUfsFileResponse;
import java.io.IOException;

/**
 * Writes a file's under file system copy through one worker (write types CACHE_THROUGH and THROUGH), as a
 * WriteUfsFile client stream: the first message names the file, the rest carry its bytes in order. The
 * worker asks the master where to write (a temporary name the master renames into place when the file
 * completes). {@link #close()} half-closes and checks the length the worker wrote; {@link #cancel()} makes
 * the worker delete the partial copy. Flow control as in {@link OutboundStream}.
 *
 * <p>Not thread-safe: one writer thread.
 */
final class UfsOutStream {
  private final long fileId;
  private final String path;
  private final WorkerAddress worker;
  private final OutboundStream<WriteUfsFileRequest, WriteUfsFileResponse> stream;
  private long written;
  private boolean headerSent;

  UfsOutStream(FileSystemContext context, WorkerAddress worker, long fileId, String path) {
    this.fileId = fileId;
    this.path = path;
    this.worker = worker;
    this.stream = new OutboundStream<>("writing the under file system copy of " + path + " through worker "
        + worker, context.rpcTimeoutMs(), o -> context.worker(worker).writeUfsFile(o));
  }

  WorkerAddress worker() {
    return worker;
  }

  private WriteUfsFileRequest.Builder request() {
    WriteUfsFileRequest.Builder req = WriteUfsFileRequest.newBuilder();
    if (!headerSent) {
      req.setHeader(WriteUfsFileHeader.newBuilder().setFileId(fileId));
      headerSent = true;
    }
    return req;
  }

  /** Sends {@code chunk} (which the caller no longer changes) once the transport can take it. */
  void write(byte[] chunk, int length) throws IOException {
    ByteString data = UnsafeByteOperations.unsafeWrap(chunk, 0, length);
    stream.send(request().setChunk(data).build());
    written += length;
  }

  /** Closes the under file system file and checks that the worker wrote every byte sent; returns the length. */
  long close() throws IOException {
    if (!headerSent) {
      stream.send(request().build()); // an empty file still has to be created
    }
    long length = stream.finish().getLength();
    if (length != written) {
      throw new DataLossException("Worker " + worker + " wrote " + length + " bytes of the under file system "
          + "copy of " + path + ", but " + written + " were sent");
    }
    return length;
  }

  /** Aborts; the worker deletes the partial under file system file. */
  void cancel() {
    stream.cancel();
  }
}
