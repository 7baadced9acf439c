package io.strata.cli;

import java.io.IOException;
import java.util.List;
import picocli.CommandLine.Parameters;

/**
 * A {@code strata fs} command that does one thing to each path argument and prints one line for it
 * ({@code Pinned /a}); failures are reported per path as every {@link FsSubcommand} does.
 *
 * <p>A picocli command object used for one run, on one thread.
 */
abstract class PerPathCommand extends FsSubcommand {
  @Parameters(paramLabel = "PATH", arity = "1..*")
  List<String> paths;

  PerPathCommand(CliContext ctx) {
    super(ctx);
  }

  /** Does the command's work on one normalised path; returns the line to print. */
  protected abstract String apply(String path) throws IOException;

  @Override
  protected final void execute() {
    forEach(expand(paths), path -> ctx.out().println(apply(path)));
  }
}
