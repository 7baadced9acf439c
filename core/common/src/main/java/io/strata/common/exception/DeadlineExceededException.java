package io.strata.common.exception;

/** The call did not finish within its deadline. */
public class DeadlineExceededException extends StrataException {
  public DeadlineExceededException(String message) {
    super(message, null);
  }

  public DeadlineExceededException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.DEADLINE_EXCEEDED;
  }

  @Override
  public boolean isRetryable() {
    return true;
  }
}
