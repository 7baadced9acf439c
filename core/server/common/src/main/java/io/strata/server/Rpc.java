package io.strata.server;

import io.grpc.stub.StreamObserver;
import io.strata.common.grpc.GrpcErrors;

/**
 * Keeps gRPC services thin: run the domain call, send its reply, and map any failure through
 * {@link GrpcErrors}, so no exception a client provokes escapes into gRPC as an unknown error.
 * Stateless.
 */
public final class Rpc {
  private Rpc() {}

  /** A domain call that may throw. */
  @FunctionalInterface
  public interface Call<T> {
    T call() throws Exception;
  }

  public static <T> void unary(StreamObserver<T> observer, Call<T> call) {
    if (!tryUnary(observer, call)) {
      // A service bug: never leave the call open.
      observer.onError(GrpcErrors.toStatus(new IllegalStateException("The call returned no reply")));
    }
  }

  /**
   * As {@link #unary}, except that a null reply sends nothing and returns false: the call could not be
   * answered here (an inline fast path), and the caller answers it elsewhere. True when a reply or an
   * error was sent.
   */
  public static <T> boolean tryUnary(StreamObserver<T> observer, Call<T> call) {
    T reply;
    try {
      reply = call.call();
    } catch (Throwable t) {
      if (t instanceof Error && !(t instanceof OutOfMemoryError) && !(t instanceof StackOverflowError)) {
        throw (Error) t;
      }
      observer.onError(GrpcErrors.toStatus(t));
      return true;
    }
    if (reply == null) {
      return false;
    }
    observer.onNext(reply);
    observer.onCompleted();
    return true;
  }
}
