package io.strata.common.exception;

/** A server bug or an unexpected failure. */
public class InternalException extends StrataException {
  public InternalException(String message) {
    super(message, null);
  }

  public InternalException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.INTERNAL;
  }

}
