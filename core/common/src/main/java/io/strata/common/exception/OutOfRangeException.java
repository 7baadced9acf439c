package io.strata.common.exception;

/** A read or seek past the end of a file or block. */
public class OutOfRangeException extends StrataException {
  public OutOfRangeException(String message) {
    super(message, null);
  }

  public OutOfRangeException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.OUT_OF_RANGE;
  }

}
