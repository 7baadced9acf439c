package io.strata.worker.ufs;

import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import java.io.FileNotFoundException;
import java.io.IOException;

/**
 * Turns under file system failures into Strata errors that say what was being done: a missing file is
 * NOT_FOUND, a refused access ({@link #isPermissionDenied}) PERMISSION_DENIED (no retry gets past it), any
 * other I/O failure UNAVAILABLE (the under store is unreachable or failing, which a retry may get past), and a
 * Strata error keeps its code (its message gains what was being done). Stateless.
 */
final class UfsErrors {
  private UfsErrors() {}

  static StrataException wrap(String doing, Throwable t) {
    if (t instanceof StrataException s) {
      return s.getMessage() != null && s.getMessage().startsWith(doing) ? s
          : s.code().toException(doing + " failed: " + s.getMessage(), s);
    }
    if (isPermissionDenied(t)) {
      return new io.strata.common.exception.PermissionDeniedException(doing + " failed: the under file system "
          + "refused this worker access: " + t.getMessage(), t);
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

  /**
   * Whether {@code t} is the under file system refusing access: Hadoop's {@code AccessControlException} (HDFS),
   * S3A's {@code AccessDeniedException} (both by name: hadoop-aws need not be on the classpath), NIO's
   * {@link java.nio.file.AccessDeniedException}, or the JDK's {@link FileNotFoundException} of a file it may not open
   * (its message ends "(Permission denied)", as {@code FileInputStream} and {@code FileOutputStream} word it).
   */
  static boolean isPermissionDenied(Throwable t) {
    if (t instanceof java.nio.file.AccessDeniedException) {
      return true;
    }
    if (t instanceof FileNotFoundException && t.getMessage() != null
        && t.getMessage().endsWith("(Permission denied)")) {
      return true;
    }
    for (Class<?> c = t.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
      String n = c.getName();
      if (n.equals("org.apache.hadoop.security.AccessControlException")
          || n.equals("org.apache.hadoop.fs.s3a.AccessDeniedException")) {
        return true;
      }
    }
    return false;
  }

  /**
   * Why {@code executor} refused a task: it is shutting down, or its bounded queue is full. Both UNAVAILABLE, a
   * failure of this worker that clients take to another worker (RESOURCE_EXHAUSTED means a full cache to them, which
   * they do not try elsewhere for).
   */
  static StrataException refused(java.util.concurrent.Executor executor, String doing) {
    if (executor instanceof java.util.concurrent.ExecutorService es && es.isShutdown()) {
      return new UnavailableException("The worker is stopping; cannot " + doing);
    }
    return new UnavailableException("Cannot " + doing + ": the worker's under file system reads are all busy and "
        + "its queue is full (" + io.strata.worker.WorkerKeys.UFS_IO_QUEUE_MAX.name() + "); another worker, or this "
        + "one later, may serve it");
  }
}
