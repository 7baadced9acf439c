package io.strata.common.exception;

/** A path that breaks a path rule (not absolute, not normalised, bad characters, too long). */
public class InvalidPathException extends InvalidArgumentException {
  public InvalidPathException(String message) {
    super(message);
  }

  public InvalidPathException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.INVALID_PATH;
  }
}
