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
 * {@code strata fsadmin}: cluster administration, for now {@code report} (the cluster summary and one
 * line per worker, like {@code hdfs dfsadmin -report}). Errors are printed as {@code fsadmin: <reason>}.
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
    return cl;
  }

  @Override
  public Integer call() {
    throw new ParameterException(spec.commandLine(),
        "Missing command: strata fsadmin COMMAND (see strata fsadmin --help)");
  }

  @Command(name = "report", description = {
      "Print the master address, worker counts, capacity and namespace counts,",
      "then a line per live and per lost worker."})
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
}
