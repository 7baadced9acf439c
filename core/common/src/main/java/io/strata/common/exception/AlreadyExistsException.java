package io.strata.common.exception;

/** A path or block that already exists. */
public class AlreadyExistsException extends StrataException {
  public AlreadyExistsException(String message) {
    super(message, null);
  }

  public AlreadyExistsException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.ALREADY_EXISTS;
  }

}
