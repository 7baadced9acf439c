package io.strata.common.exception;

/** The caller may not do this. */
public class PermissionDeniedException extends StrataException {
  public PermissionDeniedException(String message) {
    super(message, null);
  }

  public PermissionDeniedException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.PERMISSION_DENIED;
  }

}
