package io.strata.cli;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * How the CLI words failures, the way {@code hdfs dfs} does: {@code <cmd>: <path>: <reason>}, where the
 * reason of a missing path is {@code No such file or directory}, of an existing one {@code File exists},
 * and of any other Strata error its message. Errors are told apart by exception type, never by text.
 *
 * <p>Stateless; the nested exceptions are ordinary immutable exceptions.
 */
final class Failures {
  static final String NO_SUCH_FILE = "No such file or directory";
  static final String FILE_EXISTS = "File exists";
  static final String IS_A_DIRECTORY = "Is a directory";
  static final String IS_NOT_A_DIRECTORY = "Is not a directory";
  static final String DIRECTORY_NOT_EMPTY = "Directory is not empty";

  private Failures() {}

  /** The reason printed after {@code <cmd>: <path>: } for a failure of a namespace call or local I/O. */
  static String reason(IOException e) {
    if (e instanceof TransferException) {
      // Data-path failures (a worker, a block) keep their own message: "No such file" would mislead.
      IOException cause = ((TransferException) e).getCause();
      return cause instanceof StrataException ? message(cause) : reason(cause);
    }
    if (e instanceof NotFoundException || e instanceof NoSuchFileException) {
      return NO_SUCH_FILE;
    }
    if (e instanceof AlreadyExistsException || e instanceof FileAlreadyExistsException) {
      return FILE_EXISTS;
    }
    if (e instanceof NotDirectoryException) {
      return IS_NOT_A_DIRECTORY;
    }
    if (e instanceof AccessDeniedException) {
      return "Permission denied";
    }
    if (e instanceof java.nio.file.DirectoryNotEmptyException
        || e instanceof io.strata.common.exception.DirectoryNotEmptyException) {
      return DIRECTORY_NOT_EMPTY;
    }
    return message(e);
  }

  /** True when {@code e} says the master could not be reached (not a worker: data failures are wrapped). */
  static boolean isMasterUnavailable(Throwable e) {
    return e instanceof UnavailableException;
  }

  /** {@code cannot reach the master at host:port: <detail>}. */
  static String masterUnreachable(String masterAddress, Throwable e) {
    return "cannot reach the master at " + masterAddress + ": " + message(e);
  }

  /** The message of {@code e}, followed by its root cause's when that adds something (connection refused). */
  static String message(Throwable e) {
    String msg = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String rootMsg = root.getMessage();
    // Only when the root says something new: a gRPC status repeating the message ("CODE: message") does not.
    if (root != e && rootMsg != null && !msg.contains(rootMsg) && !rootMsg.contains(msg)
        && !(root instanceof StrataException)) {
      msg += " (" + rootMsg + ")";
    }
    return msg;
  }

  /**
   * A failure to report against a path other than the argument being processed, or with a reason of the
   * CLI's own ({@code Is a directory}). Carries the IOException behind it, if any, so an unreachable
   * master is still reported as such.
   */
  static final class PathFailure extends Exception {
    private final String path;
    private final String reason;

    PathFailure(String path, String reason) {
      this(path, reason, null);
    }

    private PathFailure(String path, String reason, IOException cause) {
      super(path + ": " + reason, cause, false, false);
      this.path = path;
      this.reason = reason;
    }

    /** {@code e} reported against {@code path}. */
    static PathFailure of(String path, IOException e) {
      return new PathFailure(path, Failures.reason(e), e);
    }

    String path() {
      return path;
    }

    String reason() {
      return reason;
    }
  }

  /**
   * Wraps a failure of a data stream (reading or writing blocks, completing a file) so that it is printed
   * with its own message and never mistaken for the master being unreachable: a block stream talks to
   * workers, whose UnavailableException says nothing about the master.
   */
  static final class TransferException extends IOException {
    TransferException(IOException cause) {
      super(cause.getMessage(), cause);
    }

    @Override
    public synchronized IOException getCause() {
      return (IOException) super.getCause();
    }
  }
}
