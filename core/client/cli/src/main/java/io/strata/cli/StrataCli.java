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
      try {
        CdsTraining.run();
      } catch (Exception e) {
        // The archive is then made from what loaded so far; the CLI works without any.
        System.err.println("strata: the class-data training run failed: " + Failures.message(e));
      }
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
      return forLine(ctx, line).execute(line);
    }
  }

  static CommandLine commandLine(CliContext ctx) {
    return commandLine(ctx, null);
  }

  /** The command line with every command; {@code fsCommand}: the one {@code fs} subcommand to build (null: all). */
  static CommandLine commandLine(CliContext ctx, String fsCommand) {
    return commandLine(ctx, null, fsCommand);
  }

  /**
   * The command line a run of {@code line} needs: only the command it names ({@code fs}, {@code version},
   * ...) and, under {@code fs}, only the subcommand it names (see {@link FsCommand#commandLine}), since
   * picocli builds each model by reflection and a short command would pay for all of them; every command when
   * the line names none (help, an unknown name), so help and picocli's errors list them all.
   */
  static CommandLine forLine(CliContext ctx, String[] line) {
    String command = line.length >= 1 && COMMANDS.contains(line[0]) ? line[0] : null;
    return commandLine(ctx, command, "fs".equals(command) && line.length >= 2 ? line[1] : null);
  }

  /** The top-level commands, in the order help lists them. */
  private static final java.util.List<String> COMMANDS = java.util.List.of("fs", "fsadmin", "bench", "version",
      "logLevel");

  /** {@code command}: the one top-level command to build (null: all); {@code fsCommand} as above. */
  private static CommandLine commandLine(CliContext ctx, String command, String fsCommand) {
    CommandLine cl = new CommandLine(new StrataCli());
    for (String name : COMMANDS) {
      if (command == null || command.equals(name)) {
        cl.addSubcommand(name, switch (name) {
          case "fs" -> FsCommand.commandLine(ctx, fsCommand);
          case "fsadmin" -> FsAdminCommand.commandLine(ctx);
          case "bench" -> BenchCommand.commandLine(ctx);
          case "version" -> new CommandLine(new VersionCommand(ctx));
          default -> new CommandLine(new LogLevelCommand(ctx));
        });
      }
    }
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
