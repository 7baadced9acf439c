package io.strata.server.metrics;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Times every call a gRPC server receives, per method (its bare name): {@code strata_rpc_duration_seconds}
 * (a histogram, from the call reaching the server to its close, so a streaming call counts its whole
 * stream) and {@code strata_rpc_failures_total} (calls closed with a status other than OK, by code). One per
 * server, shared by its listeners; the metrics exist from the start and are scraped once {@link #register}
 * put them in a process's registry.
 *
 * <p>Thread-safe; per call it costs two clock reads, one map lookup and one histogram observation.
 */
public final class RpcMetrics implements ServerInterceptor {
  /** Bucket bounds in seconds: 100 us to 30 s. */
  static final double[] BUCKETS = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
      0.5, 1, 2.5, 5, 10, 30};

  private final Histogram latency = Histogram.builder().name("strata_rpc_duration_seconds")
      .help("Time of RPCs received, from arrival to close (whole streams for streaming calls), per method")
      .labelNames("method").classicOnly().classicUpperBounds(BUCKETS).build();
  private final Counter failures = Counter.builder().name("strata_rpc_failures_total")
      .help("RPCs received that closed with a status other than OK, per method and status code")
      .labelNames("method", "code").build();
  private final Map<String, DistributionDataPoint> byMethod = new ConcurrentHashMap<>();

  /** Adds this server's RPC metrics to {@code registry}. */
  public void register(PrometheusRegistry registry) {
    registry.register(latency);
    registry.register(failures);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    long start = System.nanoTime();
    String method = call.getMethodDescriptor().getBareMethodName();
    DistributionDataPoint point = byMethod.computeIfAbsent(method, latency::labelValues);
    java.util.concurrent.atomic.AtomicBoolean observed = new java.util.concurrent.atomic.AtomicBoolean();
    ServerCall.Listener<Q> listener = next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
      @Override
      public void close(Status status, Metadata trailers) {
        if (observed.compareAndSet(false, true)) {
          point.observe((System.nanoTime() - start) / 1e9);
          if (!status.isOk()) {
            failures.labelValues(method, status.getCode().name()).inc();
          }
        }
        super.close(status, trailers);
      }
    }, headers);
    // A call the client cancels (a stream it closes before the end) may never be closed by its handler:
    // it is observed when the cancel arrives, as a CANCELLED failure.
    return new io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
      @Override
      public void onCancel() {
        if (observed.compareAndSet(false, true)) {
          point.observe((System.nanoTime() - start) / 1e9);
          failures.labelValues(method, Status.Code.CANCELLED.name()).inc();
        }
        super.onCancel();
      }
    };
  }
}
