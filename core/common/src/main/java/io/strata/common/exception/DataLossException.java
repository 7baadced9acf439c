package io.strata.common.exception;

/** Data that should exist is gone or corrupt. */
public class DataLossException extends StrataException {
  public DataLossException(String message) {
    super(message, null);
  }

  public DataLossException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public ErrorCode code() {
    return ErrorCode.DATA_LOSS;
  }

}
