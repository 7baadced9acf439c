package io.strata.common.exception;

import io.grpc.Status;

/**
 * The wire error codes, each bound to a gRPC status code and to the exception that represents it on the
 * caller's side. The code travels in a trailer ({@code strata-error}) so callers never parse messages.
 */
public enum ErrorCode {
  NOT_FOUND(Status.Code.NOT_FOUND),
  ALREADY_EXISTS(Status.Code.ALREADY_EXISTS),
  INVALID_ARGUMENT(Status.Code.INVALID_ARGUMENT),
  INVALID_PATH(Status.Code.INVALID_ARGUMENT),
  DIRECTORY_NOT_EMPTY(Status.Code.FAILED_PRECONDITION),
  FAILED_PRECONDITION(Status.Code.FAILED_PRECONDITION),
  OUT_OF_RANGE(Status.Code.OUT_OF_RANGE),
  PERMISSION_DENIED(Status.Code.PERMISSION_DENIED),
  RESOURCE_EXHAUSTED(Status.Code.RESOURCE_EXHAUSTED),
  UNAVAILABLE(Status.Code.UNAVAILABLE),
  DEADLINE_EXCEEDED(Status.Code.DEADLINE_EXCEEDED),
  CANCELLED(Status.Code.CANCELLED),
  DATA_LOSS(Status.Code.DATA_LOSS),
  INTERNAL(Status.Code.INTERNAL);

  private final Status.Code grpcCode;

  ErrorCode(Status.Code grpcCode) {
    this.grpcCode = grpcCode;
  }

  public Status.Code grpcCode() {
    return grpcCode;
  }

  /** The code for a bare gRPC status that carried no Strata trailer (transport errors, limits). */
  public static ErrorCode fromGrpc(Status.Code code) {
    switch (code) {
      case NOT_FOUND: return NOT_FOUND;
      case ALREADY_EXISTS: return ALREADY_EXISTS;
      case INVALID_ARGUMENT: return INVALID_ARGUMENT;
      case FAILED_PRECONDITION: return FAILED_PRECONDITION;
      case OUT_OF_RANGE: return OUT_OF_RANGE;
      case PERMISSION_DENIED: case UNAUTHENTICATED: return PERMISSION_DENIED;
      case RESOURCE_EXHAUSTED: return RESOURCE_EXHAUSTED;
      case UNAVAILABLE: return UNAVAILABLE;
      case DEADLINE_EXCEEDED: return DEADLINE_EXCEEDED;
      case CANCELLED: return CANCELLED;
      case DATA_LOSS: return DATA_LOSS;
      default: return INTERNAL;
    }
  }

  /** Builds the exception a caller sees for this code. */
  public StrataException toException(String message, Throwable cause) {
    switch (this) {
      case NOT_FOUND: return new NotFoundException(message, cause);
      case ALREADY_EXISTS: return new AlreadyExistsException(message, cause);
      case INVALID_ARGUMENT: return new InvalidArgumentException(message, cause);
      case INVALID_PATH: return new InvalidPathException(message, cause);
      case DIRECTORY_NOT_EMPTY: return new DirectoryNotEmptyException(message, cause);
      case FAILED_PRECONDITION: return new FailedPreconditionException(message, cause);
      case OUT_OF_RANGE: return new OutOfRangeException(message, cause);
      case PERMISSION_DENIED: return new PermissionDeniedException(message, cause);
      case RESOURCE_EXHAUSTED: return new ResourceExhaustedException(message, cause);
      case UNAVAILABLE: return new UnavailableException(message, cause);
      case DEADLINE_EXCEEDED: return new DeadlineExceededException(message, cause);
      case CANCELLED: return new CancelledException(message, cause);
      case DATA_LOSS: return new DataLossException(message, cause);
      default: return new InternalException(message, cause);
    }
  }
}
