package io.strata.worker.ufs;

import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import java.io.FileNotFoundException;
import java.io.IOException;

/**
 * Turns under file system failures into Strata errors that say what was being done: a missing file is
 * NOT_FOUND, any other I/O failure UNAVAILABLE (the under store is unreachable or failing, which a retry
 * may get past), and a Strata error keeps its code (its message gains what was being done). Stateless.
 */
final class UfsErrors {
  private UfsErrors() {}

  static StrataException wrap(String doing, Throwable t) {
    if (t instanceof StrataException s) {
      return s.getMessage() != null && s.getMessage().startsWith(doing) ? s
          : s.code().toException(doing + " failed: " + s.getMessage(), s);
    }
    if (t instanceof FileNotFoundException) {
      return new NotFoundException(doing + " failed: " + t.getMessage(), t);
    }
    if (t instanceof IOException) {
      return new UnavailableException(doing + " failed: " + t, t);
    }
    if (t instanceof InterruptedException) {
      Thread.currentThread().interrupt();
      return new UnavailableException(doing + " was interrupted (the worker is stopping)", t);
    }
    return new io.strata.common.exception.InternalException(doing + " failed: " + t, t);
  }

  /** Why {@code executor} refused a task: it is shutting down, or its bounded queue is full. */
  static StrataException refused(java.util.concurrent.Executor executor, String doing) {
    if (executor instanceof java.util.concurrent.ExecutorService es && es.isShutdown()) {
      return new UnavailableException("The worker is stopping; cannot " + doing);
    }
    return new io.strata.common.exception.ResourceExhaustedException("Cannot " + doing + ": the worker's under "
        + "file system reads are all busy and its queue is full (" + io.strata.worker.WorkerKeys.UFS_IO_QUEUE_MAX.name()
        + "); retry later");
  }
}
