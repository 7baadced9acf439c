package io.strata.cli;

import io.strata.client.FileSystem;
import io.strata.common.conf.StrataConf;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.ZoneId;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code strata} command line: {@code strata fs ...} (the file system shell, see {@link FsCommand})
 * and {@code strata fsadmin ...} (see {@link FsAdminCommand}).
 *
 * <p>Exit codes: 0 success, 1 when a command failed (each failure is printed on stderr as
 * {@code <cmd>: <path>: <reason>}), 2 for a usage error (unknown command or option, missing argument).
 * No stack trace is printed unless the environment variable {@code STRATA_DEBUG} (or the key
 * {@code strata.debug}) is set.
 *
 * <p>{@link #run} is the in-process entry (tests, embedding): it never calls {@code System.exit}, opens a
 * client only when a command needs one and closes it before returning. Each call is independent, so
 * calls may run on different threads at once; one call uses one thread.
 */
@Command(name = "strata", description = "The Strata command line.", synopsisSubcommandLabel = "COMMAND")
public final class StrataCli implements Callable<Integer> {
  /** The configuration key set from the STRATA_DEBUG environment variable. */
  static final String DEBUG_KEY = "strata.debug";
  /** Set by bin/strata when stderr is a terminal: long copies draw a progress bar ({@link Progress}). */
  static final String PROGRESS_PROPERTY = "strata.cli.progress";

  @Spec
  CommandSpec spec;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean helpRequested;

  private StrataCli() {}

  /** Runs the command line with the standard configuration and streams, and exits with its code. */
  public static void main(String[] args) {
    int code;
    try {
      code = run(StrataConf.load(), System.in, System.out, System.err, args);
    } catch (RuntimeException e) {
      // A configuration that cannot be loaded (an unreadable site file).
      System.err.println("strata: " + Failures.message(e));
      if (System.getenv("STRATA_DEBUG") != null) {
        e.printStackTrace(System.err);
      }
      code = 1;
    }
    if (Boolean.getBoolean(CdsTraining.KEY)) {
      CdsTraining.run();
    }
    System.exit(code);
  }

  /**
   * Runs one command line against the master named by {@code conf}, reading stdin from
   * {@code System.in}; returns the exit code.
   */
  public static int run(StrataConf conf, PrintStream out, PrintStream err, String... args) {
    return run(conf, System.in, out, err, args);
  }

  /** As {@link #run(StrataConf, PrintStream, PrintStream, String...)}, with stdin for {@code put -}. */
  public static int run(StrataConf conf, InputStream in, PrintStream out, PrintStream err, String... args) {
    boolean debug = System.getenv("STRATA_DEBUG") != null || conf.getRaw(DEBUG_KEY) != null;
    return run(new CliContext(conf, in, out, err, Clock.systemUTC(), ZoneId.systemDefault(), debug,
        FileSystem::create).showProgress(Boolean.getBoolean(PROGRESS_PROPERTY)), args);
  }

  /** Runs with a prepared context (tests pass a fake client factory, a fixed clock and zone). */
  static int run(CliContext ctx, String... args) {
    try (ctx) {
      String[] line = FsCommand.undash(args);
      return commandLine(ctx, line.length >= 2 && line[0].equals("fs") ? line[1] : null).execute(line);
    }
  }

  static CommandLine commandLine(CliContext ctx) {
    return commandLine(ctx, null);
  }

  /** The command line; {@code fsCommand}: the one {@code fs} subcommand to build (null: all of them). */
  static CommandLine commandLine(CliContext ctx, String fsCommand) {
    CommandLine cl = new CommandLine(new StrataCli());
    cl.addSubcommand("fs", FsCommand.commandLine(ctx, fsCommand));
    cl.addSubcommand("fsadmin", FsAdminCommand.commandLine(ctx));
    cl.addSubcommand("bench", BenchCommand.commandLine(ctx));
    cl.addSubcommand("version", new CommandLine(new VersionCommand(ctx)));
    cl.addSubcommand("logLevel", new CommandLine(new LogLevelCommand(ctx)));
    cl.setOut(writer(ctx.out()));
    cl.setErr(writer(ctx.err()));
    cl.setExecutionExceptionHandler((e, line, parseResult) -> {
      // Commands report their own failures; this is for the unexpected (a bad configuration value).
      ctx.debugTrace(e);
      line.getErr().println(line.getCommandName() + ": " + Failures.message(e));
      line.getErr().flush();
      return 1;
    });
    return cl;
  }

  private static PrintWriter writer(PrintStream stream) {
    return new PrintWriter(stream, true);
  }

  @Override
  public Integer call() {
    throw new ParameterException(spec.commandLine(), "Missing command: strata COMMAND (see strata --help)");
  }

  /** {@code strata version}: this client's Strata version and the JVM it runs on. */
  @Command(name = "version", description = "Print the version of Strata this command line is and the Java it runs on.")
  static final class VersionCommand implements Callable<Integer> {
    private final CliContext ctx;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean helpRequested;

    VersionCommand(CliContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public Integer call() {
      ctx.out().println("Strata " + io.strata.common.Version.VERSION);
      ctx.out().println("Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")");
      ctx.out().flush();
      return 0;
    }
  }
}
