package io.strata.common.exception;

/** A non-recursive delete of a directory that has children. */
public class DirectoryNotEmptyException extends FailedPreconditionException {
  public DirectoryNotEmptyException(String message) {
    super(message);
  }

  public DirectoryNotEmptyException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.DIRECTORY_NOT_EMPTY;
  }
}
