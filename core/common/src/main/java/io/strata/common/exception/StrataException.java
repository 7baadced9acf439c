package io.strata.common.exception;

import java.io.IOException;

/**
 * Root of every error Strata reports. An {@link IOException}, so it fits Hadoop's FileSystem and
 * Java I/O. Each subclass stands for one {@link ErrorCode}; callers catch the subclass, never match text.
 */
public abstract class StrataException extends IOException {
  protected StrataException(String message, Throwable cause) {
    super(message, cause);
  }

  public abstract ErrorCode code();

  /** True when the same call may succeed if retried (elsewhere or later). */
  public boolean isRetryable() {
    return false;
  }
}
