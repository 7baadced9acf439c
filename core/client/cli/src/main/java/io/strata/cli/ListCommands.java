package io.strata.cli;

import io.strata.client.URIStatus;
import io.strata.client.options.ListStatusOptions;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The {@code strata fs} commands that only read metadata: {@code ls}, {@code stat}, {@code du} and
 * {@code test}. Each is a picocli command object used for one run, on one thread.
 */
final class ListCommands {
  private ListCommands() {}

  @Command(name = "ls", description = "List the contents of directories, or files themselves, like hdfs dfs -ls.")
  static final class Ls extends FsSubcommand {
    @Option(names = "-R", description = "List subdirectories recursively.")
    boolean recursive;

    @Option(names = "-d", description = "List directories as plain files, not their contents.")
    boolean directoriesAsFiles;

    @Option(names = "-h", description = "Print sizes in human readable form (1.5 G).")
    boolean human;

    @Option(names = "-l", description = "Also show each entry's persistence state, in a column before the path.")
    boolean longFormat;

    @Option(names = "-C", description = "Print the paths only.")
    boolean pathsOnly;

    @Option(names = "-t", description = "Sort by modification time, newest first (within each directory).")
    boolean byTime;

    @Option(names = "-S", description = "Sort by size, largest first (within each directory).")
    boolean bySize;

    @Option(names = "-r", description = "Reverse the order of the sort.")
    boolean reverse;

    @Parameters(paramLabel = "PATH", arity = "0..*", description = "Paths to list (default /).")
    List<String> paths;

    Ls(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expandOrRoot(paths), this::list);
    }

    private void list(String path) throws IOException {
      URIStatus status = fs().getStatus(path);
      if (status.isFile() || directoriesAsFiles) {
        print(List.of(status));
        return;
      }
      List<URIStatus> entries = treeOrder(path,
          fs().listStatus(path, ListStatusOptions.defaults().withRecursive(recursive)), siblingOrder());
      if (!recursive && !entries.isEmpty()) {
        // hdfs's wording, including "1 items".
        ctx.out().println("Found " + entries.size() + " items");
      }
      print(entries);
    }

    /** hdfs's orders: by name, or newest first (-t), or largest first (-S), ties by name; -r reverses. */
    private Comparator<URIStatus> siblingOrder() {
      Comparator<URIStatus> byName = Comparator.comparing(URIStatus::name);
      Comparator<URIStatus> order = byTime
          ? Comparator.comparingLong(URIStatus::modificationTimeMs).reversed().thenComparing(byName)
          : bySize ? Comparator.comparingLong(URIStatus::length).reversed().thenComparing(byName) : byName;
      return reverse ? order.reversed() : order;
    }

    private void print(List<URIStatus> entries) {
      if (pathsOnly) {
        entries.forEach(e -> ctx.out().println(e.path()));
        return;
      }
      for (String line : Formats.lsLines(entries, ctx.zone(), human, longFormat)) {
        ctx.out().println(line);
      }
    }
  }

  /**
   * A listing of {@code root} laid out as a tree: each directory followed by its own entries, depth first,
   * the children of each directory in {@code siblings} order.
   */
  static List<URIStatus> treeOrder(String root, List<URIStatus> listing, Comparator<URIStatus> siblings) {
    Map<String, List<URIStatus>> children = new java.util.HashMap<>();
    for (URIStatus s : listing) {
      if (!s.path().equals(root)) {
        children.computeIfAbsent(CliPaths.parent(s.path()), k -> new ArrayList<>()).add(s);
      }
    }
    List<URIStatus> out = new ArrayList<>(listing.size());
    java.util.ArrayDeque<URIStatus> stack = new java.util.ArrayDeque<>();
    pushChildren(stack, children.get(root), siblings);
    while (!stack.isEmpty()) {
      URIStatus s = stack.pop();
      out.add(s);
      pushChildren(stack, children.get(s.path()), siblings);
    }
    return out;
  }

  private static void pushChildren(java.util.ArrayDeque<URIStatus> stack, List<URIStatus> kids,
      Comparator<URIStatus> siblings) {
    if (kids == null) {
      return;
    }
    kids.sort(siblings);
    for (int i = kids.size() - 1; i >= 0; i--) {
      stack.push(kids.get(i));
    }
  }

  @Command(name = "location", description = {
      "Print where each block of a file is cached.",
      "One line per block: block=<id> offset=<bytes> length=<bytes> workers=<host:port,...> tiers=<alias,...>",
      "(workers= and tiers= are empty for a block cached nowhere)."})
  static final class Location extends FsSubcommand {
    @Parameters(paramLabel = "PATH", arity = "1..*", description = "Files.")
    List<String> paths;

    Location(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expand(paths), path -> {
        if (fs().getStatus(path).directory()) {
          fail(path, "Is a directory");
          return;
        }
        for (io.strata.client.FileBlockInfo b : fs().getBlockLocations(path)) {
          StringBuilder workers = new StringBuilder();
          StringBuilder tiers = new StringBuilder();
          for (io.strata.client.BlockLocation l : b.locations()) {
            workers.append(workers.length() == 0 ? "" : ",").append(l.address());
            tiers.append(tiers.length() == 0 ? "" : ",").append(l.tier());
          }
          ctx.out().println("block=" + b.blockId() + " offset=" + b.offset() + " length=" + b.length()
              + " workers=" + workers + " tiers=" + tiers);
        }
      });
    }
  }

  @Command(name = "stat", description = {
      "Print the status of paths.",
      "key=value lines by default (with persistence=, pinned=, ttl_ms=, ttl_action=, ufs_path=),",
      "or FORMAT as hdfs dfs -stat reads it (%%a %%A %%b %%F %%g %%n %%o %%r %%u %%y %%Y)."})
  static final class Stat extends FsSubcommand {
    @Parameters(paramLabel = "[FORMAT] PATH...", arity = "1..*", hideParamSyntax = true,
        description = "An optional format (an argument with a %%, before at least one path), then paths.")
    List<String> args;

    Stat(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      String format = null;
      List<String> paths = args;
      if (args.size() > 1 && args.get(0).contains("%")) {
        format = args.get(0);
        paths = args.subList(1, args.size());
      }
      String fmt = format;
      boolean[] first = {true};
      forEach(expand(paths), path -> {
        URIStatus status = fs().getStatus(path);
        if (fmt != null) {
          ctx.out().println(Formats.formatStat(fmt, status));
          return;
        }
        if (!first[0]) {
          ctx.out().println();
        }
        first[0] = false;
        for (String line : Formats.statLines(status)) {
          ctx.out().println(line);
        }
      });
    }
  }

  @Command(name = "du", description = {
      "Show the bytes under paths.",
      "For a directory one line per entry (each entry's total), for a file the file itself."})
  static final class Du extends FsSubcommand {
    @Option(names = "-s", description = "One total per path argument instead of one line per entry.")
    boolean summary;

    @Option(names = "-h", description = "Print sizes in human readable form (1.5 G).")
    boolean human;

    @Parameters(paramLabel = "PATH", arity = "0..*", description = "Paths (default /).")
    List<String> paths;

    Du(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expandOrRoot(paths), this::du);
    }

    private void du(String path) throws IOException {
      URIStatus status = fs().getStatus(path);
      if (status.isFile()) {
        ctx.out().println(Formats.duLine(status.length(), path, human));
        return;
      }
      // One recursive listing, summed per direct child (or in total), instead of a listing per child.
      long[] total = {0};
      Map<String, Long> perChild = new TreeMap<>();
      fs().iterateStatus(path, ListStatusOptions.defaults().withRecursive(true), entry -> {
        long bytes = entry.isFile() ? entry.length() : 0;
        total[0] += bytes;
        if (!summary) {
          String child = CliPaths.firstComponentBelow(path, entry.path());
          if (child != null) {
            perChild.merge(child, bytes, Long::sum);
          }
        }
      });
      if (summary) {
        ctx.out().println(Formats.duLine(total[0], path, human));
        return;
      }
      for (Map.Entry<String, Long> e : perChild.entrySet()) {
        ctx.out().println(Formats.duLine(e.getValue(), CliPaths.child(path, e.getKey()), human));
      }
    }
  }

  @Command(name = "test", description = "Exit 0 when the check holds for PATH, 1 when it does not; prints nothing.")
  static final class Test extends FsSubcommand {
    @ArgGroup(exclusive = true, multiplicity = "1")
    Check check;

    @Parameters(paramLabel = "PATH", arity = "1")
    String path;

    Test(CliContext ctx) {
      super(ctx);
    }

    /** Exactly one check. */
    static final class Check {
      @Option(names = "-e", description = "PATH exists.")
      boolean exists;

      @Option(names = "-d", description = "PATH is a directory.")
      boolean directory;

      @Option(names = "-f", description = "PATH is a file.")
      boolean file;

      @Option(names = "-s", description = "PATH is a non-empty file.")
      boolean nonEmpty;

      @Option(names = "-z", description = "PATH is an empty file.")
      boolean empty;
    }

    @Override
    protected void execute() {
      forEach(resolveEach(List.of(path)), p -> {
        URIStatus s = statusOrNull(p);
        boolean holds;
        if (check.exists) {
          holds = s != null;
        } else if (check.directory) {
          holds = s != null && s.directory();
        } else if (check.file) {
          holds = s != null && s.isFile();
        } else if (check.nonEmpty) {
          holds = s != null && s.isFile() && s.length() > 0;
        } else {
          holds = s != null && s.isFile() && s.length() == 0;
        }
        if (!holds) {
          markFailed();
        }
      });
    }
  }
}
