package io.strata.cli;

import io.strata.cli.Failures.PathFailure;
import io.strata.client.MountInfo;
import io.strata.client.URIStatus;
import io.strata.client.options.GetStatusOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.client.options.MountOptions;
import io.strata.common.conf.ValueParser;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

/**
 * The {@code strata fs} commands about under file systems: {@code mount}, {@code unmount},
 * {@code loadMetadata} and {@code persist}. Each is a picocli command object used for one run, on one
 * thread.
 */
final class UfsCommands {
  private UfsCommands() {}

  /** A duration such as {@code 10s}, {@code 5min} or plain ms; a bad one is a usage error. */
  static final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      try {
        return ValueParser.parseDuration(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  /** The files at or under {@code path} (recursively), or the file itself; in listing order. */
  /** One bar over {@code files} (the files under {@code path}): their bytes and count. */
  static Progress progressOver(CliContext ctx, String path, List<URIStatus> files) {
    long bytes = 0;
    for (URIStatus f : files) {
      bytes += f.length();
    }
    return Progress.start(ctx, path, bytes, files.size());
  }

  static List<URIStatus> filesUnder(FsSubcommand cmd, String path) throws IOException {
    URIStatus status = cmd.fs().getStatus(path);
    if (status.isFile()) {
      return List.of(status);
    }
    List<URIStatus> files = new ArrayList<>();
    cmd.fs().iterateStatus(path, ListStatusOptions.defaults().withRecursive(true), s -> {
      if (s.isFile()) {
        files.add(s);
      }
    });
    files.sort(java.util.Comparator.comparing(URIStatus::path, CliPaths.TREE_ORDER));
    return files;
  }

  @Command(name = "mount", description = {
      "Mount an under file system directory at a new Strata path, or print the mount table.",
      "Without arguments, one line per mount: <ufs_uri> on <path> (readonly=<true|false>, shared=<true|false>)."})
  static final class Mount extends FsSubcommand {
    @Option(names = "--readonly", description = "Strata never writes to the under file system.")
    boolean readOnly;

    @Option(names = "--shared", description = "Other systems also change the under file system.")
    boolean shared;

    @Option(names = "--option", paramLabel = "KEY=VALUE",
        description = "Hadoop configuration for this mount (fs.s3a.access.key=..., dfs.client.*); repeatable.")
    Map<String, String> options = new LinkedHashMap<>();

    @Parameters(paramLabel = "PATH UFS_URI", arity = "0..2", hideParamSyntax = true,
        description = "The Strata path to create (its parent must exist), then the under file system URI.")
    List<String> args = new ArrayList<>();

    Mount(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() throws IOException, PathFailure {
      if (args.isEmpty()) {
        for (MountInfo m : fs().getMountTable()) {
          ctx.out().println(Formats.mountLine(m));
        }
        return;
      }
      if (args.size() != 2) {
        throw new ParameterException(spec.commandLine(), "Missing UFS_URI: strata fs mount PATH UFS_URI");
      }
      String path = resolve(args.get(0));
      String ufsUri = args.get(1);
      MountOptions mountOptions = MountOptions.defaults().withReadOnly(readOnly).withShared(shared)
          .withProperties(options);
      try {
        fs().mount(path, ufsUri, mountOptions);
      } catch (IOException e) {
        throw PathFailure.of(path, e);
      }
      ctx.out().println("Mounted " + ufsUri + " at " + path);
    }
  }

  @Command(name = "unmount", description = "Remove mounts; the under file system keeps its data. Prints Unmounted PATH.")
  static final class Unmount extends PerPathCommand {
    Unmount(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected String apply(String path) throws IOException {
      fs().unmount(path);
      return "Unmounted " + path;
    }
  }


  @Command(name = "loadMetadata", description = {
      "Re-check paths against the under file system now.",
      "As with a metadata sync interval of 0: new files appear, deleted ones go, changed ones are reloaded.",
      "Directories: their entries, all levels with -R."})
  static final class LoadMetadata extends FsSubcommand {
    @Option(names = "-R", description = "Every level under directories.")
    boolean recursive;

    @Parameters(paramLabel = "PATH", arity = "1..*")
    List<String> paths;

    LoadMetadata(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expand(paths), path -> {
        URIStatus status = fs().getStatus(path, GetStatusOptions.defaults().withSyncIntervalMs(0));
        if (status.directory()) {
          fs().iterateStatus(path, ListStatusOptions.defaults().withRecursive(recursive).withSyncIntervalMs(0),
              s -> { });
        }
      });
    }
  }

  @Command(name = "persist", description = {
      "Write files to the under file system now and wait until they are PERSISTED.",
      "All files under directories. Prints Persisted PATH for each file."})
  static final class Persist extends FsSubcommand {
    @Option(names = "--timeout", paramLabel = "DURATION", converter = DurationConverter.class,
        description = "How long to wait for each file, like 30s or 10min (default 10min).")
    Duration timeout = Duration.ofMinutes(10);

    @Parameters(paramLabel = "PATH", arity = "1..*")
    List<String> paths;

    Persist(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expand(paths), path -> {
        List<URIStatus> files = filesUnder(this, path);
        Progress progress = progressOver(ctx, path, files);
        try {
          for (URIStatus file : files) {
            try {
              fs().persist(file.path(), timeout);
              progress.advance(file.length()); // the master persists it: known only once it is done
              progress.fileDone();
              progress.println(ctx.out(), "Persisted " + file.path());
            } catch (IOException e) {
              progress.aside(() -> report(PathFailure.of(file.path(), e)));
            }
          }
        } finally {
          progress.finish();
        }
      });
    }
  }
}
