package io.strata.cli;

import io.strata.client.ClusterInfo;
import io.strata.client.URIStatus;
import io.strata.client.options.ListStatusOptions;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The {@code strata fs} commands that sum up a tree or the cluster, with {@code hdfs dfs}'s output:
 * {@code count}, {@code df} and {@code find}. Each is a picocli command object used for one run, on one
 * thread.
 */
final class SummaryCommands {
  /** hdfs's {@code count} columns: DIR_COUNT FILE_COUNT CONTENT_SIZE, then the path. */
  static final String COUNT_FORMAT = "%12s %12s %18s ";
  /** hdfs's {@code count -q} columns before those: QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA. */
  static final String QUOTA_FORMAT = "%12s %15s %15s %15s ";

  private SummaryCommands() {}

  @Command(name = "count", description = {
      "Count the directories, files and bytes under paths, like hdfs dfs -count.",
      "Columns DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME (a directory counts itself).",
      "Strata has no quotas: with -q the quota columns say none and inf."})
  static final class Count extends FsSubcommand {
    @Option(names = "-q", description = "Also print the quota columns: QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA.")
    boolean quotas;

    @Option(names = "-h", description = "Print counts and sizes in human readable form (1.5 K).")
    boolean human;

    @Option(names = "-v", description = "Print a header line first.")
    boolean header;

    @Parameters(paramLabel = "PATH", arity = "1..*")
    List<String> paths;

    Count(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      List<String> expanded = expand(paths);
      if (header) {
        String head = String.format(Locale.ROOT, COUNT_FORMAT, "DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE")
            + "PATHNAME";
        if (quotas) {
          head = String.format(Locale.ROOT, QUOTA_FORMAT, "QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA")
              + head;
        }
        ctx.out().println(head);
      }
      forEach(expanded, path -> {
        URIStatus status = fs().getStatus(path);
        long[] counts = {status.directory() ? 1 : 0, status.isFile() ? 1 : 0, status.isFile() ? status.length() : 0};
        if (status.directory()) {
          fs().iterateStatus(path, ListStatusOptions.defaults().withRecursive(true), entry -> {
            if (entry.path().equals(path)) {
              return;
            }
            counts[entry.directory() ? 0 : 1]++;
            counts[2] += entry.isFile() ? entry.length() : 0;
          });
        }
        ctx.out().println(countLine(counts[0], counts[1], counts[2], path, quotas, human));
      });
    }
  }

  /** One {@code count} line, as hdfs formats it (trailing space before the path included). */
  static String countLine(long dirs, long files, long bytes, String path, boolean quotas, boolean human) {
    String line = String.format(Locale.ROOT, COUNT_FORMAT, size(dirs, human), size(files, human), size(bytes, human))
        + path;
    return quotas ? String.format(Locale.ROOT, QUOTA_FORMAT, "none", "inf", "none", "inf") + line : line;
  }

  private static String size(long n, boolean human) {
    return human ? Formats.humanSize(n) : Long.toString(n);
  }

  @Command(name = "df", description = {
      "Show the cluster's capacity and usage, like hdfs dfs -df.",
      "Columns Filesystem Size Used Available Use%%.",
      "Size and Used are the workers' cache capacity and usage, as fsadmin report counts them.",
      "A PATH only has to exist: every path shares the one cluster."})
  static final class Df extends FsSubcommand {
    @Option(names = "-h", description = "Print sizes in human readable form (1.5 G).")
    boolean human;

    @Parameters(paramLabel = "PATH", arity = "0..*")
    List<String> paths;

    Df(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() throws IOException {
      List<String> expanded = expandOrRoot(paths);
      List<String> checked = new ArrayList<>();
      forEach(expanded, path -> {
        fs().getStatus(path);
        checked.add(path);
      });
      if (checked.isEmpty()) {
        return;
      }
      ClusterInfo info = fs().getClusterInfo();
      for (String line : dfLines("strata://" + ctx.masterAddress(), info.capacityBytes(), info.usedBytes(), human)) {
        ctx.out().println(line);
      }
    }
  }

  /**
   * {@code df}'s table as hdfs prints it: a header and one row, columns one space apart, the first
   * left-aligned and the others right-aligned, each as wide as its widest cell; Use% rounded to a whole
   * percent (0% for a cluster with no capacity).
   */
  static List<String> dfLines(String filesystem, long capacity, long used, boolean human) {
    long available = Math.max(0, capacity - used);
    String percent = capacity <= 0 ? "0%"
        : String.format(Locale.ROOT, "%.0f%%", 100.0 * used / capacity);
    String[] head = {"Filesystem", "Size", "Used", "Available", "Use%"};
    String[] row = {filesystem, size(capacity, human), size(used, human), size(available, human), percent};
    StringBuilder h = new StringBuilder();
    StringBuilder r = new StringBuilder();
    for (int i = 0; i < head.length; i++) {
      int width = Math.max(head[i].length(), row[i].length());
      String format = (i == 0 ? "%-" : "%") + width + "s";
      if (i > 0) {
        h.append(' ');
        r.append(' ');
      }
      h.append(String.format(Locale.ROOT, format, head[i]));
      r.append(String.format(Locale.ROOT, format, row[i]));
    }
    return List.of(h.toString(), r.toString());
  }

  @Command(name = "find", description = {
      "Print the paths under PATH whose name matches, like hdfs dfs -find.",
      "PATH itself is included, then what is under it depth first.",
      "PATTERN is a glob (* ? [abc] {a,b}) over the last path component."})
  static final class Find extends FsSubcommand {
    @Option(names = "-name", paramLabel = "PATTERN", description = "Names matching PATTERN.")
    String name;

    @Option(names = "-iname", paramLabel = "PATTERN", description = "Names matching PATTERN, ignoring case.")
    String iname;

    @Option(names = "-print", description = "Print each matching path (the default action).")
    boolean print;

    @Parameters(paramLabel = "PATH", arity = "0..*", description = "Where to look (default /).")
    List<String> paths;

    Find(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() throws Failures.PathFailure {
      if (name != null && iname != null) {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "Give -name or -iname, not both");
      }
      GlobPattern pattern;
      try {
        pattern = name != null ? GlobPattern.compile(name, false)
            : iname != null ? GlobPattern.compile(iname, true) : null;
      } catch (IllegalArgumentException e) {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
      }
      forEach(expandOrRoot(paths), path -> {
        URIStatus root = fs().getStatus(path);
        List<URIStatus> all = new ArrayList<>();
        all.add(root);
        if (root.directory()) {
          all.addAll(fs().listStatus(path, ListStatusOptions.defaults().withRecursive(true)));
          all.removeIf(s -> s != root && s.path().equals(path));
          all.sort(Comparator.comparing(URIStatus::path, CliPaths.TREE_ORDER));
        }
        for (URIStatus s : all) {
          if (pattern == null || pattern.matches(CliPaths.name(s.path()))) {
            ctx.out().println(s.path());
          }
        }
      });
    }
  }
}
