package io.strata.server.metrics;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.exporter.httpserver.MetricsHandler;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.strata.server.web.WebServer;
import java.util.function.DoubleSupplier;

/**
 * The metrics of one server process (a master or a worker): its own {@link PrometheusRegistry} (never the
 * client library's global default, since tests run a master and several workers in one JVM), served at
 * {@code /metrics} on the process's web port in the Prometheus text format by the client library's
 * {@link MetricsHandler}.
 *
 * <p>Strata's own metrics are named {@code strata_...}; most read counters the process keeps anyway, through
 * callbacks run at scrape time (so the hot paths pay nothing for them). JVM and process metrics
 * ({@code jvm_...}, {@code process_...}, the client library's standard names, so stock JVM dashboards work)
 * are collected once per JVM into a shared registry that every process registry includes: the client
 * library keeps each registry it instruments for ever (it adds GC listeners), so a per-process one would
 * keep every stopped test worker reachable.
 *
 * <p>Thread-safe: metrics may be added while scrapes run; callbacks run on the web server's threads and
 * must not block.
 */
public final class ProcessMetrics {
  private static PrometheusRegistry jvm;

  private final PrometheusRegistry registry = new PrometheusRegistry();

  public ProcessMetrics() {
    PrometheusRegistry shared = jvmRegistry();
    registry.register(() -> shared.scrape());
  }

  private static synchronized PrometheusRegistry jvmRegistry() {
    if (jvm == null) {
      jvm = new PrometheusRegistry();
      JvmMetrics.builder().register(jvm);
    }
    return jvm;
  }

  /** This process's registry: register its metrics here. */
  public PrometheusRegistry registry() {
    return registry;
  }

  /** Serves this registry at {@code /metrics} on {@code web}; returns {@code this}. */
  public ProcessMetrics serveOn(WebServer web) {
    web.route("/metrics", new MetricsHandler(registry));
    return this;
  }

  /** Registers a gauge without labels read from {@code value} at scrape time. */
  public void gauge(String name, String help, DoubleSupplier value) {
    GaugeWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.getAsDouble())).register(registry);
  }

  /** Registers a counter without labels ({@code name} ends in {@code _total}) read from {@code value}. */
  public void counter(String name, String help, DoubleSupplier value) {
    CounterWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.getAsDouble()))
        .register(registry);
  }
}
