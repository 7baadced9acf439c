package io.strata.common.exception;

/** The server cannot be reached or is not serving yet; retry elsewhere or later. */
public class UnavailableException extends StrataException {
  public UnavailableException(String message) {
    super(message, null);
  }

  public UnavailableException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.UNAVAILABLE;
  }

  @Override
  public boolean isRetryable() {
    return true;
  }
}
