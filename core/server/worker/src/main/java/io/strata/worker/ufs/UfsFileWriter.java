package io.strata.worker.ufs;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.StrataException;
import io.strata.server.ufs.UfsManager;
import io.strata.server.ufs.UnderFileSystem;
import io.strata.worker.ufs.MasterClient.UfsTarget;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one file's under file system copy for a client writing CACHE_THROUGH or THROUGH. The master
 * names the target (a temporary name it renames into place when the file completes); the client never
 * names a UFS location. Any failure, and {@link #abort()}, closes the stream and deletes the partial file,
 * so the UFS holds either the whole file as the client sent it or nothing. It holds a lease on its UFS client from
 * open to complete or abort, so the client is not closed under the stream to make room for another.
 *
 * <p>Not thread-safe: one writer (the calls of one gRPC stream, which gRPC serialises).
 */
final class UfsFileWriter implements UfsFileWrite {
  private static final Logger LOG = LoggerFactory.getLogger(UfsFileWriter.class);

  private final long fileId;
  private final UfsManager.Lease lease;
  private final UnderFileSystem fs;
  private final String uri;
  private final OutputStream out;
  private byte[] copy;
  private long length;
  private boolean done;

  private final java.util.concurrent.atomic.LongAdder bytesWritten;

  private UfsFileWriter(long fileId, UfsManager.Lease lease, String uri, OutputStream out,
      java.util.concurrent.atomic.LongAdder bytesWritten) {
    this.bytesWritten = bytesWritten;
    this.fileId = fileId;
    this.lease = lease;
    this.fs = lease.ufs();
    this.uri = uri;
    this.out = out;
  }

  /** Asks the master where file {@code fileId} goes and creates it there. Blocks for an RPC and a UFS create. */
  static UfsFileWriter open(MasterClient master, UfsManager ufs, long fileId,
      java.util.concurrent.atomic.LongAdder bytesWritten) throws StrataException {
    return open(master.ufsWriteTarget(fileId), ufs, fileId, bytesWritten);
  }

  /** Creates file {@code fileId}'s copy at {@code t}, the target the master named for it. Blocks for a UFS create. */
  static UfsFileWriter open(UfsTarget t, UfsManager ufs, long fileId,
      java.util.concurrent.atomic.LongAdder bytesWritten) throws StrataException {
    String doing = "Creating the under file system file " + t.uri() + " of file " + fileId;
    UfsManager.Lease lease;
    try {
      lease = ufs.acquire(t.uri(), t.options());
    } catch (IOException e) {
      throw UfsErrors.wrap(doing, e);
    }
    boolean opened = false;
    try {
      OutputStream out = lease.ufs().createNonRecursive(t.uri());
      opened = true;
      return new UfsFileWriter(fileId, lease, t.uri(), out, bytesWritten);
    } catch (IOException e) {
      throw UfsErrors.wrap(doing, e);
    } finally {
      if (!opened) {
        lease.close();
      }
    }
  }

  @Override
  public void write(ByteBuffer data) throws StrataException {
    if (done) {
      throw new FailedPreconditionException("The under file system write of file " + fileId + " to " + uri
          + " is already finished");
    }
    int n = data.remaining();
    try {
      if (data.hasArray()) {
        out.write(data.array(), data.arrayOffset() + data.position(), n);
        data.position(data.limit());
      } else {
        if (copy == null) {
          copy = new byte[64 * 1024];
        }
        while (data.hasRemaining()) {
          int k = Math.min(copy.length, data.remaining());
          data.get(copy, 0, k);
          out.write(copy, 0, k);
        }
      }
    } catch (IOException e) {
      abort();
      throw UfsErrors.wrap("Writing file " + fileId + " to the under file system file " + uri, e);
    }
    length += n;
    bytesWritten.add(n);
  }

  @Override
  public long complete() throws StrataException {
    if (done) {
      throw new FailedPreconditionException("The under file system write of file " + fileId + " to " + uri
          + " is already finished");
    }
    done = true;
    try {
      out.close();
    } catch (IOException e) {
      delete();
      throw UfsErrors.wrap("Closing the under file system file " + uri + " of file " + fileId, e);
    } finally {
      lease.close();
    }
    return length;
  }

  @Override
  public void abort() {
    if (done) {
      return;
    }
    done = true;
    try {
      UnderFileSystem.abandon(out); // not close(): that would sync (HDFS) or upload (S3A) what is deleted next
    } catch (IOException | RuntimeException e) {
      LOG.debug("Closing the abandoned under file system file {}: {}", uri, e.toString());
    }
    try {
      delete();
    } finally {
      lease.close();
    }
  }

  private void delete() {
    try {
      fs.delete(uri, false);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Cannot delete the partial under file system file {} of file {}: {}", uri, fileId, e.toString());
    }
  }
}
