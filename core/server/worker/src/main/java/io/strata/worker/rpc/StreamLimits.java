package io.strata.worker.rpc;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.grpc.GrpcErrors;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.worker.WorkerKeys;
import java.net.SocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Bounds the data streams a worker has open, each of which holds a file descriptor (a block file, a temp
 * block, an under file system stream) and a block lock or quota: at most {@code perClient} per client
 * connection and {@code total} in all, over ReadBlock, WriteBlock and WriteUfsFile. A stream past either
 * bound is refused at once with RESOURCE_EXHAUSTED naming the key; a stream counts until the worker
 * closes it or the client cancels it. Clients keep one connection per worker, so "per client" is per connection.
 *
 * <p>Thread-safe: the counters are guarded by this object's monitor (no I/O inside).
 */
public final class StreamLimits implements ServerInterceptor {
  private static final Set<String> STREAMS = Set.of(
      BlockWorkerServiceGrpc.getReadBlockMethod().getFullMethodName(),
      BlockWorkerServiceGrpc.getWriteBlockMethod().getFullMethodName(),
      BlockWorkerServiceGrpc.getWriteUfsFileMethod().getFullMethodName());

  private final int total;
  private final int perClient;
  private final Map<SocketAddress, Integer> byClient = new HashMap<>();
  private int open;

  public StreamLimits(int total, int perClient) {
    this.total = total;
    this.perClient = perClient;
  }

  /** Streams open now. */
  public synchronized int open() {
    return open;
  }

  /** Null when admitted (and counted), else why not. */
  private synchronized String admit(SocketAddress client) {
    int mine = byClient.getOrDefault(client, 0);
    if (open >= total) {
      return "This worker has " + open + " data streams open, the most " + WorkerKeys.STREAMS_MAX.name()
          + " allows; retry later";
    }
    if (mine >= perClient) {
      return "Client " + client + " has " + mine + " data streams open on this worker, the most "
          + WorkerKeys.STREAMS_PER_CLIENT_MAX.name() + " allows; close some first";
    }
    open++;
    byClient.put(client, mine + 1);
    return null;
  }

  private synchronized void release(SocketAddress client) {
    open--;
    byClient.computeIfPresent(client, (k, n) -> n <= 1 ? null : n - 1);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    if (!STREAMS.contains(call.getMethodDescriptor().getFullMethodName())) {
      return next.startCall(call, headers);
    }
    SocketAddress client = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    String refusal = admit(client);
    if (refusal != null) {
      StatusException s = GrpcErrors.toStatus(new ResourceExhaustedException(refusal));
      call.close(s.getStatus(), s.getTrailers());
      return new ServerCall.Listener<>() {};
    }
    AtomicBoolean released = new AtomicBoolean();
    Runnable done = () -> {
      if (released.compareAndSet(false, true)) {
        release(client);
      }
    };
    // The stream stops counting once the worker has closed it (its file and lock are released then),
    // even while the status still waits behind data a stalled client never reads.
    ServerCall<Q, R> counted = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
      @Override
      public void close(Status status, Metadata trailers) {
        try {
          super.close(status, trailers);
        } finally {
          done.run();
        }
      }
    };
    ServerCall.Listener<Q> inner;
    try {
      inner = next.startCall(counted, headers);
    } catch (RuntimeException | Error e) {
      done.run();
      throw e;
    }
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(inner) {
      @Override
      public void onComplete() {
        try {
          super.onComplete();
        } finally {
          done.run();
        }
      }

      @Override
      public void onCancel() {
        try {
          super.onCancel();
        } finally {
          done.run();
        }
      }
    };
  }
}
