package io.strata.common.exception;

/** No space left, or a message larger than allowed. */
public class ResourceExhaustedException extends StrataException {
  public ResourceExhaustedException(String message) {
    super(message, null);
  }

  public ResourceExhaustedException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.RESOURCE_EXHAUSTED;
  }

  @Override
  public boolean isRetryable() {
    return true;
  }
}
