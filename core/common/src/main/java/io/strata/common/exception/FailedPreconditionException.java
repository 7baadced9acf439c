package io.strata.common.exception;

/** A request that does not fit the current state (file incomplete, already complete, not a directory). */
public class FailedPreconditionException extends StrataException {
  public FailedPreconditionException(String message) {
    super(message, null);
  }

  public FailedPreconditionException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.FAILED_PRECONDITION;
  }

}
