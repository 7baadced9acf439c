package io.strata.common.grpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * A call's time on the server, sent back in its trailers ({@value #TRAILER_NAME}: nanoseconds from the
 * call's headers reaching the service to its close, thread hand-offs and journal syncs included; the wire
 * and the client are not). The server side is {@link #serverInterceptor()}; a benchmark reads it with
 * {@link #clientInterceptor}, so a figure measured at the client can be split into the server's share
 * and the rest. Only calls that ask for it (the client interceptor sends the {@value #REQUEST_NAME}
 * header) get the trailer: a fresh number in every trailer is a new HPACK literal each call on both ends,
 * which ordinary calls should not pay for.
 *
 * <p>Stateless and thread-safe; the cost per call is one header lookup, and for calls that asked two clock
 * reads and one trailer.
 */
public final class ServerTiming {
  public static final String TRAILER_NAME = "strata-server-nanos";
  static final Metadata.Key<String> TRAILER = Metadata.Key.of(TRAILER_NAME, Metadata.ASCII_STRING_MARSHALLER);
  public static final String REQUEST_NAME = "strata-server-timing";
  static final Metadata.Key<String> REQUEST = Metadata.Key.of(REQUEST_NAME, Metadata.ASCII_STRING_MARSHALLER);

  private ServerTiming() {}

  /** Adds the trailer to every call of the services it wraps whose headers ask for it. */
  public static ServerInterceptor serverInterceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        if (!headers.containsKey(REQUEST)) {
          return next.startCall(call, headers);
        }
        long start = System.nanoTime();
        return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            trailers.put(TRAILER, Long.toString(System.nanoTime() - start));
            super.close(status, trailers);
          }
        }, headers);
      }
    };
  }

  /**
   * Asks the server for its time on every call and hands each one reported to {@code sink} (on the call's
   * thread).
   */
  public static ClientInterceptor clientInterceptor(LongConsumer sink) {
    return trailers(true, t -> {
      String v = t.get(TRAILER);
      if (v != null) {
        try {
          sink.accept(Long.parseLong(v));
        } catch (NumberFormatException e) {
          // not a timing this code wrote: ignored
        }
      }
    });
  }

  /**
   * Hands every call's trailers to {@code sink} (on the call's thread, before the caller sees the close);
   * with {@code ask}, the call's headers ask the server for its time.
   */
  static ClientInterceptor trailers(boolean ask, Consumer<Metadata> sink) {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
          @Override
          public void start(Listener<R> listener, Metadata headers) {
            if (ask) {
              headers.put(REQUEST, "1");
            }
            super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
              @Override
              public void onClose(Status status, Metadata trailers) {
                sink.accept(trailers);
                super.onClose(status, trailers);
              }
            }, headers);
          }
        };
      }
    };
  }
}
