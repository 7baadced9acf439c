package io.strata.cli;

import io.strata.client.WorkerInfo;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code strata logLevel}: reads or sets a logger's level in running servers, through each one's web port
 * ({@code /api/logLevel}, see the servers' LogLevels), like Alluxio's {@code logLevel}. Targets: the master
 * (its RPC port + 1), every live worker (the web port each registered: its RPC port + 1 unless that was taken), or
 * explicit {@code host:webPort}s. One line
 * per target: {@code <host:webPort> <logger>=<LEVEL>}, or {@code logLevel: <host:webPort>: <reason>} on stderr.
 *
 * <p>Not thread-safe: one run, one thread.
 */
@Command(name = "logLevel", description = {"Read or set the level of a logger in the running master and workers.",
    "The change lasts until the process restarts."})
final class LogLevelCommand implements Callable<Integer> {
  private final CliContext ctx;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean helpRequested;

  @Option(names = "--logName", required = true, paramLabel = "NAME",
      description = "The logger, e.g. io.strata.worker, or root.")
  String logName;

  @Option(names = "--level", paramLabel = "LEVEL",
      description = "The level to set (OFF, FATAL, ERROR, WARN, INFO, DEBUG, TRACE, ALL); without it the level is read.")
  String level;

  @Option(names = "--target", paramLabel = "TARGETS", split = ",", defaultValue = "master,workers",
      description = "Comma-separated: master, workers, or host:webPort (default: master,workers).")
  List<String> targets;

  LogLevelCommand(CliContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() {
    List<String> addresses = new ArrayList<>();
    try {
      for (String t : targets) {
        if (t.equals("master")) {
          addresses.add(ctx.masterWebAddress(null));
        } else if (t.equals("workers")) {
          for (WorkerInfo w : ctx.fs().getWorkers()) {
            // The web port the worker registered: its RPC port + 1 unless that was taken when it started.
            int web = w.address().webPort() > 0 ? w.address().webPort() : w.address().rpcPort() + 1;
            addresses.add(w.address().host() + ":" + web);
          }
        } else if (t.matches("[^:/\\s]+:\\d{1,5}")) {
          addresses.add(t);
        } else {
          ctx.err().println("logLevel: target '" + t + "' is not master, workers or host:webPort");
          return 2;
        }
      }
    } catch (IOException e) {
      ctx.debugTrace(e);
      ctx.err().println("logLevel: " + (Failures.isMasterUnavailable(e)
          ? Failures.masterUnreachable(ctx.masterAddress(), e) : Failures.message(e)));
      return 1;
    }
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    String query = "?logger=" + URLEncoder.encode(logName, StandardCharsets.UTF_8)
        + (level == null ? "" : "&level=" + URLEncoder.encode(level, StandardCharsets.UTF_8));
    int code = 0;
    for (String a : addresses) {
      HttpRequest.Builder req = HttpRequest.newBuilder(URI.create("http://" + a + "/api/logLevel" + query))
          .timeout(Duration.ofSeconds(10));
      req = level == null ? req.GET()
          // WebServer.CHANGE_HEADER: the servers take a change only with it (no cross-site form can send it).
          : req.header("X-Strata-Change", "1").POST(HttpRequest.BodyPublishers.noBody());
      try {
        HttpResponse<String> r = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          ctx.out().println(a + " " + r.body().strip());
        } else {
          ctx.err().println("logLevel: " + a + ": " + r.body().strip());
          code = 1;
        }
      } catch (IOException e) {
        ctx.err().println("logLevel: " + a + ": cannot reach its web port (" + e + ")");
        code = 1;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return 1;
      }
    }
    ctx.out().flush();
    return code;
  }
}
