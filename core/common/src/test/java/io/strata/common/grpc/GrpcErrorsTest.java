package io.strata.common.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.CancelledException;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.DeadlineExceededException;
import io.strata.common.exception.DirectoryNotEmptyException;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InternalException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.InvalidPathException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.OutOfRangeException;
import io.strata.common.exception.PermissionDeniedException;
import io.strata.common.exception.ReplicaUnavailableException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import java.io.IOException;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class GrpcErrorsTest {
  private static final Map<ErrorCode, Class<? extends StrataException>> EXPECTED_CLASS =
      new EnumMap<>(ErrorCode.class);
  private static final Set<ErrorCode> RETRYABLE =
      EnumSet.of(ErrorCode.UNAVAILABLE, ErrorCode.DEADLINE_EXCEEDED, ErrorCode.RESOURCE_EXHAUSTED);

  static {
    EXPECTED_CLASS.put(ErrorCode.NOT_FOUND, NotFoundException.class);
    EXPECTED_CLASS.put(ErrorCode.ALREADY_EXISTS, AlreadyExistsException.class);
    EXPECTED_CLASS.put(ErrorCode.INVALID_ARGUMENT, InvalidArgumentException.class);
    EXPECTED_CLASS.put(ErrorCode.INVALID_PATH, InvalidPathException.class);
    EXPECTED_CLASS.put(ErrorCode.DIRECTORY_NOT_EMPTY, DirectoryNotEmptyException.class);
    EXPECTED_CLASS.put(ErrorCode.FAILED_PRECONDITION, FailedPreconditionException.class);
    EXPECTED_CLASS.put(ErrorCode.OUT_OF_RANGE, OutOfRangeException.class);
    EXPECTED_CLASS.put(ErrorCode.PERMISSION_DENIED, PermissionDeniedException.class);
    EXPECTED_CLASS.put(ErrorCode.RESOURCE_EXHAUSTED, ResourceExhaustedException.class);
    EXPECTED_CLASS.put(ErrorCode.UNAVAILABLE, UnavailableException.class);
    EXPECTED_CLASS.put(ErrorCode.DEADLINE_EXCEEDED, DeadlineExceededException.class);
    EXPECTED_CLASS.put(ErrorCode.CANCELLED, CancelledException.class);
    EXPECTED_CLASS.put(ErrorCode.DATA_LOSS, DataLossException.class);
    EXPECTED_CLASS.put(ErrorCode.INTERNAL, InternalException.class);
  }

  private static StatusRuntimeException onTheWire(StatusException server) {
    return new StatusRuntimeException(server.getStatus(), server.getTrailers());
  }

  private static Metadata trailer(String codeName) {
    Metadata m = new Metadata();
    m.put(GrpcErrors.ERROR_CODE_KEY, codeName);
    return m;
  }

  @Test
  void expectationTable_coversEveryErrorCode() {
    assertThat(EXPECTED_CLASS.keySet()).containsExactlyInAnyOrder(ErrorCode.values());
  }

  @ParameterizedTest
  @EnumSource(ErrorCode.class)
  void toException_buildsTheExactClassWhoseCodeIsThisCode(ErrorCode code) {
    IOException cause = new IOException("root");
    StrataException e = code.toException("m-" + code, cause);
    assertThat(e).isExactlyInstanceOf(EXPECTED_CLASS.get(code));
    assertThat(e.code()).isEqualTo(code);
    assertThat(e.getMessage()).isEqualTo("m-" + code);
    assertThat(e.getCause()).isSameAs(cause);
    assertThat(e.isRetryable()).isEqualTo(RETRYABLE.contains(code));
  }

  @ParameterizedTest
  @EnumSource(ErrorCode.class)
  void toStatus_thenFromThrowable_givesBackTheSameClassCodeAndMessage(ErrorCode code) {
    StrataException original = code.toException("message for " + code, null);

    StatusException server = GrpcErrors.toStatus(original);
    assertThat(server.getStatus().getCode()).isEqualTo(code.grpcCode());
    assertThat(server.getStatus().getDescription()).isEqualTo("message for " + code);
    assertThat(server.getTrailers().get(GrpcErrors.ERROR_CODE_KEY)).isEqualTo(code.name());

    StatusRuntimeException wire = onTheWire(server);
    StrataException back = GrpcErrors.fromThrowable(wire);

    assertThat(back).isExactlyInstanceOf(original.getClass());
    assertThat(back.code()).isEqualTo(code);
    assertThat(back.getMessage()).isEqualTo("message for " + code);
    assertThat(back.isRetryable()).isEqualTo(original.isRetryable());
    assertThat(back.getCause()).isSameAs(wire);
  }

  @Test
  void toStatus_ofIllegalArgument_isInvalidArgument_andComesBackAsInvalidArgumentException() {
    StatusException server = GrpcErrors.toStatus(new IllegalArgumentException("bad block size 3"));
    assertThat(server.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(server.getStatus().getDescription()).isEqualTo("bad block size 3");
    assertThat(server.getTrailers().get(GrpcErrors.ERROR_CODE_KEY)).isEqualTo("INVALID_ARGUMENT");

    StrataException back = GrpcErrors.fromThrowable(onTheWire(server));
    assertThat(back).isExactlyInstanceOf(InvalidArgumentException.class);
    assertThat(back.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(back.getMessage()).isEqualTo("bad block size 3");
  }

  @Test
  void toStatus_ofRuntimeException_isInternal_namingTheExceptionClassAndMessage() {
    StatusException server = GrpcErrors.toStatus(new IllegalStateException("boom"));
    assertThat(server.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(server.getStatus().getDescription()).isEqualTo("IllegalStateException: boom");
    assertThat(server.getTrailers().get(GrpcErrors.ERROR_CODE_KEY)).isEqualTo("INTERNAL");

    StrataException back = GrpcErrors.fromThrowable(onTheWire(server));
    assertThat(back).isExactlyInstanceOf(InternalException.class);
    assertThat(back.getMessage()).isEqualTo("IllegalStateException: boom");
    assertThat(back.isRetryable()).isFalse();
  }

  @Test
  void toStatus_ofPlainRuntimeException_isInternal() {
    StatusException server = GrpcErrors.toStatus(new RuntimeException("oops"));
    assertThat(server.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(server.getStatus().getDescription()).contains("RuntimeException").contains("oops");
  }

  @Test
  void toStatus_passesStatusExceptionsThrough() {
    StatusException se = Status.ABORTED.withDescription("x").asException();
    assertThat(GrpcErrors.toStatus(se)).isSameAs(se);

    Metadata trailers = trailer("NOT_FOUND");
    StatusException converted =
        GrpcErrors.toStatus(Status.NOT_FOUND.withDescription("gone").asRuntimeException(trailers));
    assertThat(converted.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(converted.getStatus().getDescription()).isEqualTo("gone");
    assertThat(converted.getTrailers().get(GrpcErrors.ERROR_CODE_KEY)).isEqualTo("NOT_FOUND");
  }

  @Test
  void fromThrowable_bareUnavailable_isRetryableUnavailableException() {
    StrataException e = GrpcErrors.fromThrowable(Status.UNAVAILABLE.asRuntimeException());
    assertThat(e).isExactlyInstanceOf(UnavailableException.class);
    assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(e.isRetryable()).isTrue();
    assertThat(e.getMessage()).isEqualTo("UNAVAILABLE");
  }

  @Test
  void fromThrowable_bareUnavailableWithCause_mentionsTheCause() {
    StrataException e = GrpcErrors.fromThrowable(
        Status.UNAVAILABLE.withCause(new IOException("Connection refused")).asRuntimeException());
    assertThat(e).isExactlyInstanceOf(UnavailableException.class);
    assertThat(e.getMessage()).isEqualTo("UNAVAILABLE: Connection refused");
  }

  @Test
  void fromThrowable_bareNotFound_isNotFoundException_withTheDescription() {
    StrataException e = GrpcErrors.fromThrowable(
        Status.NOT_FOUND.withDescription("no such method").asRuntimeException());
    assertThat(e).isExactlyInstanceOf(NotFoundException.class);
    assertThat(e.getMessage()).isEqualTo("no such method");
    assertThat(e.isRetryable()).isFalse();
  }

  @Test
  void fromThrowable_checkedStatusException_isHandledLikeTheRuntimeOne() {
    StrataException e = GrpcErrors.fromThrowable(
        Status.FAILED_PRECONDITION.withDescription("dir not empty").asException(trailer("DIRECTORY_NOT_EMPTY")));
    assertThat(e).isExactlyInstanceOf(DirectoryNotEmptyException.class);
    assertThat(e.getMessage()).isEqualTo("dir not empty");
  }

  @Test
  void fromThrowable_trailerRefinesTheGrpcCode() {
    StrataException e = GrpcErrors.fromThrowable(
        Status.INVALID_ARGUMENT.withDescription("bad path").asRuntimeException(trailer("INVALID_PATH")));
    assertThat(e).isExactlyInstanceOf(InvalidPathException.class);
    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PATH);
  }

  @Test
  void fromThrowable_unknownTrailerValue_fallsBackToTheGrpcCode() {
    StrataException e = GrpcErrors.fromThrowable(
        Status.NOT_FOUND.withDescription("x").asRuntimeException(trailer("NO_SUCH_CODE")));
    assertThat(e).isExactlyInstanceOf(NotFoundException.class);
  }

  @Test
  void fromThrowable_bareCodesWithoutAStrataEquivalent() {
    assertThat(GrpcErrors.fromThrowable(Status.UNAUTHENTICATED.asRuntimeException()))
        .isExactlyInstanceOf(PermissionDeniedException.class);
    assertThat(GrpcErrors.fromThrowable(Status.UNKNOWN.asRuntimeException()))
        .isExactlyInstanceOf(InternalException.class);
    assertThat(GrpcErrors.fromThrowable(Status.UNIMPLEMENTED.asRuntimeException()))
        .isExactlyInstanceOf(InternalException.class);
    StrataException deadline = GrpcErrors.fromThrowable(Status.DEADLINE_EXCEEDED.asRuntimeException());
    assertThat(deadline).isExactlyInstanceOf(DeadlineExceededException.class);
    assertThat(deadline.isRetryable()).isTrue();
    StrataException exhausted = GrpcErrors.fromThrowable(Status.RESOURCE_EXHAUSTED.asRuntimeException());
    assertThat(exhausted).isExactlyInstanceOf(ResourceExhaustedException.class);
    assertThat(exhausted.isRetryable()).isTrue();
  }

  @Test
  void fromThrowable_passesStrataExceptionsThrough() {
    NotFoundException e = new NotFoundException("/a");
    assertThat(GrpcErrors.fromThrowable(e)).isSameAs(e);
  }

  @Test
  void fromThrowable_otherThrowable_isInternalWithTheCause() {
    IOException io = new IOException("disk on fire");
    StrataException e = GrpcErrors.fromThrowable(io);
    assertThat(e).isExactlyInstanceOf(InternalException.class);
    assertThat(e.getCause()).isSameAs(io);
    assertThat(e.getMessage()).contains("disk on fire");
  }

  @Test
  void roundTrip_ofStrataExceptionWithoutMessage_usesTheGrpcCodeName() {
    StatusException server = GrpcErrors.toStatus(ErrorCode.ALREADY_EXISTS.toException(null, null));
    StrataException back = GrpcErrors.fromThrowable(onTheWire(server));
    assertThat(back).isExactlyInstanceOf(AlreadyExistsException.class);
    assertThat(back.getMessage()).isEqualTo("ALREADY_EXISTS");
  }

  @Test
  void replicaUnavailable_crossesTheWire_namingTheReplica() {
    StrataException back = GrpcErrors.fromThrowable(onTheWire(GrpcErrors.toStatus(
        new ReplicaUnavailableException("forwarding failed", "127.0.0.1:43111", null))));

    assertThat(back).isInstanceOf(ReplicaUnavailableException.class);
    assertThat(((ReplicaUnavailableException) back).replica()).isEqualTo("127.0.0.1:43111");
    assertThat(back.code()).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(back.isRetryable()).isTrue();
    assertThat(back.getMessage()).contains("forwarding failed");
    // A plain UNAVAILABLE names no replica.
    assertThat(GrpcErrors.fromThrowable(onTheWire(GrpcErrors.toStatus(new UnavailableException("down")))))
        .isNotInstanceOf(ReplicaUnavailableException.class);
  }
}
