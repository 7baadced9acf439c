package io.strata.cli;

import io.strata.cli.Failures.PathFailure;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.common.exception.NotFoundException;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Base of every {@code strata fs} subcommand: runs the command's action on each path argument, prints
 * each failure as {@code <cmd>: <path>: <reason>} on stderr and carries on with the next path, the way
 * {@code hdfs dfs} does; the exit code is 0 when every path succeeded and 1 otherwise. When the master
 * cannot be reached it says so once, naming the master's address, and stops.
 *
 * <p>The command name printed is the one the user typed ({@code put} or {@code copyFromLocal}): each
 * alias is registered as its own instance. Not thread-safe: picocli creates and runs it on one thread.
 */
@Command(sortOptions = false)
abstract class FsSubcommand implements Callable<Integer> {
  protected final CliContext ctx;

  @Spec
  protected CommandSpec spec;

  @Option(names = "--help", usageHelp = true, description = "Show this help and exit.")
  boolean helpRequested;

  private boolean failed;

  FsSubcommand(CliContext ctx) {
    this.ctx = ctx;
  }

  /** One step of a command that may fail for one path without ending the command. */
  @FunctionalInterface
  interface PathAction {
    void run(String arg) throws IOException, PathFailure;
  }

  /** The command's work; report per-path failures through {@link #forEach} or {@link #fail}. */
  protected abstract void execute() throws IOException, PathFailure;

  @Override
  public final Integer call() {
    try {
      execute();
    } catch (MasterUnreachable e) {
      return 1;
    } catch (PathFailure e) {
      try {
        report(e);
      } catch (MasterUnreachable reported) {
        return 1;
      }
    } catch (IOException e) {
      if (Failures.isMasterUnavailable(e)) {
        masterUnreachable(e);
        return 1;
      }
      ctx.debugTrace(e);
      ctx.err().println(name() + ": " + Failures.message(e));
      failed = true;
    }
    ctx.out().flush();
    return failed ? 1 : 0;
  }

  /** The name the command was invoked by. */
  protected final String name() {
    return spec.name();
  }

  protected final FileSystem fs() {
    return ctx.fs();
  }

  /**
   * Runs {@code action} on each argument; a failure is reported against the argument (or the path the
   * {@link PathFailure} names) and the loop goes on, except when the master is unreachable.
   */
  protected final void forEach(List<String> args, PathAction action) {
    for (String arg : args) {
      try {
        action.run(arg);
      } catch (PathFailure e) {
        report(e);
      } catch (IOException e) {
        report(PathFailure.of(arg, e));
      }
    }
  }

  /** Reports one failure; an unreachable master ends the command. */
  protected final void report(PathFailure e) {
    if (e.getCause() != null && Failures.isMasterUnavailable(e.getCause())) {
      masterUnreachable(e.getCause());
      throw new MasterUnreachable();
    }
    if (e.getCause() != null) {
      ctx.debugTrace(e.getCause());
    }
    fail(e.path(), e.reason());
  }

  /** Prints {@code <cmd>: <path>: <reason>} and marks the command failed. */
  protected final void fail(String path, String reason) {
    ctx.err().println(name() + ": " + path + ": " + reason);
    failed = true;
  }

  /** Marks the command failed without a message (a false {@code test}, a closed stdout). */
  protected final void markFailed() {
    failed = true;
  }

  private void masterUnreachable(Throwable e) {
    ctx.debugTrace(e);
    ctx.err().println(name() + ": " + Failures.masterUnreachable(ctx.masterAddress(), e));
    failed = true;
  }

  /**
   * The normalised path a destination-like argument stands for: a plain path or a {@code strata://} URI
   * (whose authority picks the master of the run); wildcards are not expanded. A wrong scheme or an
   * authority naming a second master is a failure against the argument.
   */
  protected final String resolve(String arg) throws PathFailure {
    try {
      CliPaths.Argument a = CliPaths.parse(arg);
      if (a.authority() != null) {
        ctx.selectMaster(a.authority());
      }
      return a.path();
    } catch (IllegalArgumentException e) {
      throw new PathFailure(arg, e.getMessage());
    }
  }

  /**
   * The paths the arguments stand for, in order: each resolved as {@link #resolve} does, and a pattern
   * ({@code /data/*.bin}) expanded over the master's listings into the paths it matches (sorted). An
   * argument that fails, or a pattern that matches nothing ({@code `/x*': No such file or directory}, as
   * hdfs says it), is reported and skipped; the others go on. Every argument is resolved before any is
   * expanded, so the master the URIs name is chosen before the client is opened.
   */
  protected final List<String> expand(List<String> args) {
    return expand(args, false);
  }

  /** As {@link #expand(List)}; with {@code quiet} a pattern that matches nothing is no failure (rm -f). */
  protected final List<String> expand(List<String> args, boolean quiet) {
    List<String> resolved = new java.util.ArrayList<>(args.size());
    List<String> shown = new java.util.ArrayList<>(args.size());
    for (String arg : args) {
      try {
        resolved.add(resolve(arg));
        shown.add(arg);
      } catch (PathFailure e) {
        report(e);
      }
    }
    List<String> out = new java.util.ArrayList<>();
    for (int i = 0; i < resolved.size(); i++) {
      String path = resolved.get(i);
      if (!GlobPattern.hasWildcard(path)) {
        out.add(path);
        continue;
      }
      try {
        List<String> matches = Globber.glob(fs(), path);
        if (matches.isEmpty() && !quiet) {
          fail("`" + shown.get(i) + "'", Failures.NO_SUCH_FILE);
        }
        out.addAll(matches);
      } catch (IllegalArgumentException e) {
        fail(shown.get(i), e.getMessage());
      } catch (IOException e) {
        report(PathFailure.of(shown.get(i), e));
      }
    }
    return out;
  }

  /** Each argument resolved as {@link #resolve} does (no wildcards), failures reported and skipped. */
  protected final List<String> resolveEach(List<String> args) {
    List<String> out = new java.util.ArrayList<>(args.size());
    for (String arg : args) {
      try {
        out.add(resolve(arg));
      } catch (PathFailure e) {
        report(e);
      }
    }
    return out;
  }

  /** As {@link #expand}, with {@code /} when there are no arguments. */
  protected final List<String> expandOrRoot(List<String> args) {
    return args == null || args.isEmpty() ? List.of("/") : expand(args);
  }

  /** The status of {@code path}, or null when nothing is there. */
  protected final URIStatus statusOrNull(String path) throws IOException {
    try {
      return fs().getStatus(path);
    } catch (NotFoundException e) {
      return null;
    }
  }

  /**
   * Ends the command once the master was found unreachable and that was reported: unchecked so that it
   * passes through nested {@link #forEach} loops and actions untouched.
   */
  static final class MasterUnreachable extends RuntimeException {
    MasterUnreachable() {
      super("the master is unreachable", null, false, false);
    }
  }
}
