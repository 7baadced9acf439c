package io.strata.common.exception;

/** A request with a bad argument (offset, length, size, option). */
public class InvalidArgumentException extends StrataException {
  public InvalidArgumentException(String message) {
    super(message, null);
  }

  public InvalidArgumentException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.INVALID_ARGUMENT;
  }

}
