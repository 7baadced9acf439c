package io.strata.common.exception;

/** A path, block or worker that does not exist. */
public class NotFoundException extends StrataException {
  public NotFoundException(String message) {
    super(message, null);
  }

  public NotFoundException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.NOT_FOUND;
  }

}
