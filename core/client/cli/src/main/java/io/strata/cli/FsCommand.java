package io.strata.cli;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Function;
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

  /** Every subcommand by name, in the order help lists them. */
  private static final Map<String, Function<CliContext, FsSubcommand>> COMMANDS = commands();

  private static Map<String, Function<CliContext, FsSubcommand>> commands() {
    Map<String, Function<CliContext, FsSubcommand>> c = new LinkedHashMap<>();
    c.put("ls", ListCommands.Ls::new);
    c.put("stat", ListCommands.Stat::new);
    c.put("location", ListCommands.Location::new);
    c.put("du", ListCommands.Du::new);
    c.put("test", ListCommands.Test::new);
    c.put("count", SummaryCommands.Count::new);
    c.put("df", SummaryCommands.Df::new);
    c.put("find", SummaryCommands.Find::new);
    c.put("mkdir", NamespaceCommands.Mkdir::new);
    c.put("touch", NamespaceCommands.Touch::new);
    c.put("touchz", NamespaceCommands.Touchz::new);
    c.put("rm", NamespaceCommands.Rm::new);
    c.put("rmdir", NamespaceCommands.Rmdir::new);
    c.put("mv", NamespaceCommands.Mv::new);
    c.put("cp", MergeCommands.Cp::new);
    c.put("cat", ReadCommands.Cat::new);
    c.put("text", ReadCommands.Text::new);
    c.put("head", ReadCommands.Head::new);
    c.put("tail", ReadCommands.Tail::new);
    c.put("put", CopyCommands.Put::new);
    c.put("copyFromLocal", CopyCommands.Put::new);
    c.put("get", CopyCommands.Get::new);
    c.put("copyToLocal", CopyCommands.Get::new);
    c.put("moveFromLocal", CopyCommands.MoveFromLocal::new);
    c.put("getmerge", MergeCommands.GetMerge::new);
    c.put("setrep", AttributeCommands.SetRep::new);
    c.put("chmod", AttributeCommands.Chmod::new);
    c.put("chown", AttributeCommands.Chown::new);
    c.put("chgrp", AttributeCommands.Chgrp::new);
    c.put("mount", UfsCommands.Mount::new);
    c.put("unmount", UfsCommands.Unmount::new);
    c.put("loadMetadata", UfsCommands.LoadMetadata::new);
    c.put("persist", UfsCommands.Persist::new);
    c.put("free", CacheCommands.Free::new);
    c.put("load", CacheCommands.Load::new);
    c.put("pin", CacheCommands.Pin::new);
    c.put("unpin", CacheCommands.Unpin::new);
    c.put("setTtl", CacheCommands.SetTtl::new);
    c.put("unsetTtl", CacheCommands.UnsetTtl::new);
    c.put("checksum", CacheCommands.Checksum::new);
    return Collections.unmodifiableMap(c);
  }

  static CommandLine commandLine(CliContext ctx) {
    return commandLine(ctx, null);
  }

  /**
   * The shell with only the subcommand {@code only} when that names one, since a run of it needs no other
   * (building the models of all 40 costs a short command a fifth of its time); with every subcommand
   * otherwise (help, an unknown name, none).
   */
  static CommandLine commandLine(CliContext ctx, String only) {
    CommandLine cl = new CommandLine(new FsCommand());
    if (only != null && COMMANDS.containsKey(only)) {
      add(cl, only, COMMANDS.get(only).apply(ctx));
      return cl;
    }
    for (Map.Entry<String, Function<CliContext, FsSubcommand>> e : COMMANDS.entrySet()) {
      add(cl, e.getKey(), e.getValue().apply(ctx));
    }
    return cl;
  }

  /**
   * {@code args} with hdfs's dash form of an {@code fs} command ({@code fs -ls}, {@code fs -help},
   * {@code fs -usage}) turned into the command's name; anything else is returned as it is. The name the
   * command reports errors under stays the plain one ({@code ls: ...}), as hdfs prints it.
   */
  static String[] undash(String[] args) {
    if (args.length < 2 || !args[0].equals("fs") || !args[1].startsWith("-") || args[1].startsWith("--")) {
      return args;
    }
    String name = args[1].substring(1);
    if (name.equals("usage")) {
      name = "help";
    }
    if (!COMMANDS.containsKey(name) && !name.equals("help")) {
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
