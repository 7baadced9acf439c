package io.strata.common.exception;

/** The call was cancelled. */
public class CancelledException extends StrataException {
  public CancelledException(String message) {
    super(message, null);
  }

  public CancelledException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.CANCELLED;
  }

}
