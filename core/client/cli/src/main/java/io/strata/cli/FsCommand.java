package io.strata.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code strata fs}: the file system shell, a subcommand per operation, modelled on {@code hdfs dfs}: {@code
 * strata fs ls /} and, as hdfs users type it, {@code strata fs -ls /} ({@link #undash}). hdfs's alias pairs
 * ({@code put}/{@code copyFromLocal}, {@code get}/{@code copyToLocal}) are registered as separate instances
 * so that each reports errors under the name the user typed.
 *
 * <p>Built per run by {@link #commandLine}; not thread-safe.
 */
@Command(name = "fs", description = "Work with files and directories in Strata, like hdfs dfs.",
    synopsisSubcommandLabel = "COMMAND", subcommands = HelpCommand.class,
    footer = {"", "Every command also answers to its hdfs dfs form with a dash: -ls, -mkdir -p, -du -s -h, -help.",
        "A path is /a/b, a/b (under /), strata:///a/b or strata://host:port/a/b (that master, for the whole "
            + "command).",
        "Paths may hold glob patterns as in hdfs dfs (* ? [abc] [^a] {a,b}, \\ to escape): quote them from "
            + "the shell.",
        "Exit codes: 0 success, 1 a command failed, 2 a usage error."})
final class FsCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean helpRequested;

  private FsCommand() {}

  static CommandLine commandLine(CliContext ctx) {
    CommandLine cl = new CommandLine(new FsCommand());
    add(cl, "ls", new ListCommands.Ls(ctx));
    add(cl, "stat", new ListCommands.Stat(ctx));
    add(cl, "location", new ListCommands.Location(ctx));
    add(cl, "du", new ListCommands.Du(ctx));
    add(cl, "test", new ListCommands.Test(ctx));
    add(cl, "count", new SummaryCommands.Count(ctx));
    add(cl, "df", new SummaryCommands.Df(ctx));
    add(cl, "find", new SummaryCommands.Find(ctx));
    add(cl, "mkdir", new NamespaceCommands.Mkdir(ctx));
    add(cl, "touch", new NamespaceCommands.Touch(ctx));
    add(cl, "touchz", new NamespaceCommands.Touchz(ctx));
    add(cl, "rm", new NamespaceCommands.Rm(ctx));
    add(cl, "rmdir", new NamespaceCommands.Rmdir(ctx));
    add(cl, "mv", new NamespaceCommands.Mv(ctx));
    add(cl, "cp", new MergeCommands.Cp(ctx));
    add(cl, "cat", new ReadCommands.Cat(ctx));
    add(cl, "text", new ReadCommands.Text(ctx));
    add(cl, "head", new ReadCommands.Head(ctx));
    add(cl, "tail", new ReadCommands.Tail(ctx));
    add(cl, "put", new CopyCommands.Put(ctx));
    add(cl, "copyFromLocal", new CopyCommands.Put(ctx));
    add(cl, "get", new CopyCommands.Get(ctx));
    add(cl, "copyToLocal", new CopyCommands.Get(ctx));
    add(cl, "moveFromLocal", new CopyCommands.MoveFromLocal(ctx));
    add(cl, "getmerge", new MergeCommands.GetMerge(ctx));
    add(cl, "setrep", new AttributeCommands.SetRep(ctx));
    add(cl, "chmod", new AttributeCommands.Chmod(ctx));
    add(cl, "chown", new AttributeCommands.Chown(ctx));
    add(cl, "chgrp", new AttributeCommands.Chgrp(ctx));
    add(cl, "mount", new UfsCommands.Mount(ctx));
    add(cl, "unmount", new UfsCommands.Unmount(ctx));
    add(cl, "loadMetadata", new UfsCommands.LoadMetadata(ctx));
    add(cl, "persist", new UfsCommands.Persist(ctx));
    add(cl, "free", new CacheCommands.Free(ctx));
    add(cl, "load", new CacheCommands.Load(ctx));
    add(cl, "pin", new CacheCommands.Pin(ctx));
    add(cl, "unpin", new CacheCommands.Unpin(ctx));
    add(cl, "setTtl", new CacheCommands.SetTtl(ctx));
    add(cl, "unsetTtl", new CacheCommands.UnsetTtl(ctx));
    add(cl, "checksum", new CacheCommands.Checksum(ctx));
    return cl;
  }

  /**
   * {@code args} with hdfs's dash form of an {@code fs} command ({@code fs -ls}, {@code fs -help},
   * {@code fs -usage}) turned into the command's name; anything else is returned as it is. The name the
   * command reports errors under stays the plain one ({@code ls: ...}), as hdfs prints it.
   */
  static String[] undash(CommandLine fs, String[] args) {
    if (args.length < 2 || !args[0].equals("fs") || !args[1].startsWith("-") || args[1].startsWith("--")) {
      return args;
    }
    String name = args[1].substring(1);
    if (name.equals("usage")) {
      name = "help";
    }
    if (!fs.getSubcommands().containsKey(name)) {
      return args;
    }
    String[] out = args.clone();
    out[1] = name;
    return out;
  }

  /** Registers {@code command} as {@code name}, which is also the name it reports errors under. */
  private static void add(CommandLine parent, String name, FsSubcommand command) {
    CommandLine sub = new CommandLine(command);
    sub.getCommandSpec().name(name);
    parent.addSubcommand(name, sub);
  }

  @Override
  public Integer call() {
    throw new ParameterException(spec.commandLine(), "Missing command: strata fs COMMAND (see strata fs --help)");
  }
}
