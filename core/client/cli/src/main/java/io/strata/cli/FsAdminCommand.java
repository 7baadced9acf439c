package io.strata.cli;

import io.strata.client.ClusterInfo;
import io.strata.client.FileSystem;
import io.strata.client.WorkerInfo;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code strata fsadmin}: cluster administration: {@code report} (the cluster summary and one line per
 * worker, like {@code hdfs dfsadmin -report}), {@code metrics} (the leading master's {@code /metrics}) and
 * {@code getConf} (this command line's configuration, credentials masked). Errors are printed as
 * {@code fsadmin: <reason>}.
 *
 * <p>Built per run by {@link #commandLine}; not thread-safe.
 */
@Command(name = "fsadmin", description = "Administer the Strata cluster.",
    synopsisSubcommandLabel = "COMMAND", subcommands = HelpCommand.class)
final class FsAdminCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean helpRequested;

  private FsAdminCommand() {}

  static CommandLine commandLine(CliContext ctx) {
    CommandLine cl = new CommandLine(new FsAdminCommand());
    cl.addSubcommand("report", new Report(ctx));
    cl.addSubcommand("getConf", new GetConf(ctx));
    cl.addSubcommand("metrics", new Metrics(ctx));
    return cl;
  }

  @Override
  public Integer call() {
    throw new ParameterException(spec.commandLine(),
        "Missing command: strata fsadmin COMMAND (see strata fsadmin --help)");
  }

  @Command(name = "report", description = {
      "Print the cluster's state: master address, worker counts, capacity, namespace counts.",
      "Then one line per live and per lost worker."})
  static final class Report implements Callable<Integer> {
    private final CliContext ctx;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean helpRequested;

    Report(CliContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public Integer call() {
      try {
        FileSystem fs = ctx.fs();
        ClusterInfo info = fs.getClusterInfo();
        List<WorkerInfo> live = new ArrayList<>(fs.getWorkers());
        live.sort(Comparator.comparingLong(WorkerInfo::id));
        String master = info.masterAddress().isEmpty() ? ctx.masterAddress() : info.masterAddress();
        for (String line : Formats.report(info, live, master, ctx.clock().millis())) {
          ctx.out().println(line);
        }
        ctx.out().flush();
        return 0;
      } catch (IOException e) {
        ctx.debugTrace(e);
        String reason = Failures.isMasterUnavailable(e)
            ? Failures.masterUnreachable(ctx.masterAddress(), e) : Failures.message(e);
        ctx.err().println("fsadmin: " + reason);
        return 1;
      }
    }
  }

  @Command(name = "metrics", description = {
      "Print the leading master's Prometheus metrics.",
      "They come from its /metrics page, by default on its RPC port + 1. With --strata-only, only Strata's own",
      "metrics (no jvm_ and process_ ones)."})
  static final class Metrics implements Callable<Integer> {
    private final CliContext ctx;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean helpRequested;

    @Option(names = "--web-port", description = "The master's web port (default: its RPC port + 1).")
    Integer webPort;

    @Option(names = "--strata-only", description = "Print only the strata_ metrics.")
    boolean strataOnly;

    Metrics(CliContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public Integer call() {
      String url = null;
      try {
        url = "http://" + ctx.masterWebAddress(webPort) + "/metrics";
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newBuilder()
            .connectTimeout(java.time.Duration.ofSeconds(5)).build()
            .send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(url))
                .timeout(java.time.Duration.ofSeconds(30)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
          ctx.err().println("fsadmin: " + url + " answered HTTP " + r.statusCode());
          return 1;
        }
        for (String line : r.body().split("\n")) {
          if (!strataOnly || line.startsWith("strata_") || line.startsWith("# HELP strata_")
              || line.startsWith("# TYPE strata_")) {
            ctx.out().println(line);
          }
        }
        ctx.out().flush();
        return 0;
      } catch (IOException e) {
        ctx.debugTrace(e);
        String reason = url != null ? "cannot read " + url + " (" + e + "; is the master's web port another? "
            + "pass --web-port)" : Failures.isMasterUnavailable(e)
            ? Failures.masterUnreachable(ctx.masterAddress(), e) : Failures.message(e);
        ctx.err().println("fsadmin: " + reason);
        return 1;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        ctx.err().println("fsadmin: interrupted while reading " + url);
        return 1;
      } catch (RuntimeException e) {
        ctx.err().println("fsadmin: cannot tell the master's web address from '" + url + "': " + e.getMessage());
        return 1;
      }
    }
  }

  @Command(name = "getConf", description = {
      "Print the configuration this command line runs with.",
      "Every client and common key, its value and whether it was set (site file, STRATA_* environment, -D) or",
      "is the default; credentials are masked."})
  static final class GetConf implements Callable<Integer> {
    private final CliContext ctx;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean helpRequested;

    @picocli.CommandLine.Parameters(paramLabel = "KEY", arity = "0..*",
        description = "Only these keys (default: all of them).")
    List<String> only = new ArrayList<>();

    GetConf(CliContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public Integer call() {
      java.util.Map<String, io.strata.common.conf.PropertyKey<?>> keys = new java.util.TreeMap<>();
      for (Class<?> c : List.of(io.strata.common.conf.CommonKeys.class, io.strata.client.ClientKeys.class)) {
        for (java.lang.reflect.Field f : c.getFields()) {
          if (java.lang.reflect.Modifier.isStatic(f.getModifiers()) && f.getType() == io.strata.common.conf.PropertyKey.class) {
            try {
              io.strata.common.conf.PropertyKey<?> k = (io.strata.common.conf.PropertyKey<?>) f.get(null);
              keys.put(k.name(), k);
            } catch (IllegalAccessException e) {
              throw new IllegalStateException(e);
            }
          }
        }
      }
      int code = 0;
      for (String name : only) {
        if (!keys.containsKey(name)) {
          ctx.err().println("fsadmin getConf: " + name + " is not a client or common key");
          code = 1;
        }
      }
      io.strata.common.conf.StrataConf conf = ctx.conf();
      for (io.strata.common.conf.PropertyKey<?> k : keys.values()) {
        if (!only.isEmpty() && !only.contains(k.name())) {
          continue;
        }
        boolean set = conf.isSet(k);
        String value = set ? conf.getRaw(k.name()) : k.defaultValue();
        ctx.out().println(k.name() + "=" + io.strata.common.conf.Secrets.setting(k.name(), value == null ? "" : value)
            + (set ? "  (set)" : "  (default)"));
      }
      ctx.out().flush();
      return code;
    }
  }
}
