package io.strata.common.grpc;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.InternalException;
import io.strata.common.exception.ReplicaUnavailableException;
import io.strata.common.exception.StrataException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where exceptions become gRPC statuses and back. A {@link StrataException} travels as
 * its gRPC code plus a {@code strata-error} trailer naming the {@link ErrorCode}; anything else a server
 * throws becomes INTERNAL (and is logged, since it is a bug). Stateless and thread-safe.
 */
public final class GrpcErrors {
  private static final Logger LOG = LoggerFactory.getLogger(GrpcErrors.class);
  public static final Metadata.Key<String> ERROR_CODE_KEY =
      Metadata.Key.of("strata-error", Metadata.ASCII_STRING_MARSHALLER);
  /** With UNAVAILABLE: the replica (host:port) whose hop failed ({@link ReplicaUnavailableException}). */
  public static final Metadata.Key<String> FAILED_REPLICA_KEY =
      Metadata.Key.of("strata-failed-replica", Metadata.ASCII_STRING_MARSHALLER);

  private GrpcErrors() {}

  /** Server side: the status to close a call with. */
  public static StatusException toStatus(Throwable t) {
    if (t instanceof StatusException) {
      return (StatusException) t;
    }
    if (t instanceof StatusRuntimeException) {
      StatusRuntimeException s = (StatusRuntimeException) t;
      return new StatusException(s.getStatus(), s.getTrailers());
    }
    ErrorCode code;
    String message;
    if (t instanceof StrataException) {
      code = ((StrataException) t).code();
      message = t.getMessage();
    } else if (t instanceof IllegalArgumentException) {
      code = ErrorCode.INVALID_ARGUMENT;
      message = t.getMessage();
    } else {
      LOG.error("Unexpected server error", t);
      code = ErrorCode.INTERNAL;
      message = t.getClass().getSimpleName() + ": " + t.getMessage();
    }
    Metadata trailers = new Metadata();
    trailers.put(ERROR_CODE_KEY, code.name());
    if (t instanceof ReplicaUnavailableException r) {
      trailers.put(FAILED_REPLICA_KEY, r.replica());
    }
    return Status.fromCode(code.grpcCode()).withDescription(message).asException(trailers);
  }

  /** Client side: the exception a failed call stands for. */
  public static StrataException fromThrowable(Throwable t) {
    if (t instanceof StrataException) {
      return (StrataException) t;
    }
    Status status;
    Metadata trailers;
    if (t instanceof StatusRuntimeException) {
      status = ((StatusRuntimeException) t).getStatus();
      trailers = ((StatusRuntimeException) t).getTrailers();
    } else if (t instanceof StatusException) {
      status = ((StatusException) t).getStatus();
      trailers = ((StatusException) t).getTrailers();
    } else {
      return new InternalException(String.valueOf(t), t);
    }
    ErrorCode code = null;
    if (trailers != null) {
      String name = trailers.get(ERROR_CODE_KEY);
      if (name != null) {
        try {
          code = ErrorCode.valueOf(name);
        } catch (IllegalArgumentException ignored) {
          code = null;
        }
      }
    }
    if (code == null) {
      code = ErrorCode.fromGrpc(status.getCode());
    }
    String message = status.getDescription();
    if (message == null) {
      message = status.getCode().name();
    }
    // Transport failures say only "io exception"; the reason (connection refused, reset) is in the cause.
    if (status.getCause() != null && status.getCause().getMessage() != null
        && !message.contains(status.getCause().getMessage())) {
      message += ": " + status.getCause().getMessage();
    }
    String replica = trailers == null ? null : trailers.get(FAILED_REPLICA_KEY);
    if (code == ErrorCode.UNAVAILABLE && replica != null && !replica.isEmpty()) {
      return new ReplicaUnavailableException(message, replica, t);
    }
    return code.toException(message, t);
  }
}
