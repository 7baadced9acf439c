package io.strata.cli;

import io.strata.cli.Failures.TransferException;
import io.strata.client.FileOutStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;

/**
 * Copies bytes between local streams and Strata streams with a 1 MiB buffer. Failures of the Strata side
 * come out as {@link TransferException} (so a worker's error is never read as "the master is
 * unreachable" or "no such file"); failures of the local side come out as they are. Stateless.
 */
final class Streams {
  static final int BUFFER_BYTES = 1 << 20;

  private Streams() {}

  /** Copies all of a local stream into a Strata file being written; does not close either. */
  static long upload(InputStream local, FileOutStream strata) throws IOException {
    return upload(local, strata, Progress.NONE);
  }

  /** As {@link #upload(InputStream, FileOutStream)}, advancing {@code progress} per buffer. */
  static long upload(InputStream local, FileOutStream strata, Progress progress) throws IOException {
    byte[] buf = new byte[BUFFER_BYTES];
    long total = 0;
    while (true) {
      int n = local.read(buf);
      if (n < 0) {
        return total;
      }
      try {
        strata.write(buf, 0, n);
      } catch (IOException e) {
        throw new TransferException(e);
      }
      total += n;
      progress.advance(n);
    }
  }

  /** Closes a Strata file being written, which completes it at the master. */
  static void complete(FileOutStream strata) throws IOException {
    try {
      strata.close();
    } catch (IOException e) {
      throw new TransferException(e);
    }
  }

  /**
   * Copies up to {@code limit} bytes of a Strata stream to a local one; does not close either. Returns
   * false when the local stream is a PrintStream that failed (stdout closed by {@code | head}), which
   * PrintStream reports only through {@link PrintStream#checkError()}.
   */
  static boolean download(InputStream strata, OutputStream local, long limit) throws IOException {
    return download(strata, local, limit, Progress.NONE);
  }

  /** As {@link #download(InputStream, OutputStream, long)}, advancing {@code progress} per buffer. */
  static boolean download(InputStream strata, OutputStream local, long limit, Progress progress) throws IOException {
    byte[] buf = new byte[(int) Math.min(BUFFER_BYTES, Math.max(1, limit))];
    long left = limit;
    PrintStream print = local instanceof PrintStream ? (PrintStream) local : null;
    while (left > 0) {
      int n;
      try {
        n = strata.read(buf, 0, (int) Math.min(buf.length, left));
      } catch (IOException e) {
        throw new TransferException(e);
      }
      if (n < 0) {
        break;
      }
      local.write(buf, 0, n);
      left -= n;
      progress.advance(n);
      if (print != null && print.checkError()) {
        return false;
      }
    }
    local.flush();
    return print == null || !print.checkError();
  }
}
