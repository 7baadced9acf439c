package io.strata.cli;

import io.strata.cli.Failures.PathFailure;
import io.strata.client.FreeResult;
import io.strata.client.URIStatus;
import io.strata.client.options.TtlAction;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The {@code strata fs} commands that manage what is cached: {@code free}, {@code load}, {@code pin},
 * {@code unpin}, {@code setTtl}, {@code unsetTtl}, and {@code checksum} (which reads through the cache).
 * Each is a picocli command object used for one run, on one thread.
 */
final class CacheCommands {
  private CacheCommands() {}

  @Command(name = "free", description = {
      "Remove the cached blocks of persisted files; the under file system keeps the data.",
      "Prints Freed PATH (<n> files, <m> blocks)."})
  static final class Free extends FsSubcommand {
    @Option(names = {"-R", "-r"}, description = "Free everything under directories.")
    boolean recursive;

    @Option(names = "-f", description = "Also free pinned files (and unpin them).")
    boolean force;

    @Parameters(paramLabel = "PATH", arity = "1..*")
    List<String> paths;

    Free(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expand(paths), path -> {
        FreeResult r = fs().free(path, recursive, force);
        ctx.out().println("Freed " + path + " (" + r.filesFreed() + " files, " + r.blocksFreed() + " blocks)");
      });
    }
  }

  @Command(name = "load", description = {
      "Cache every block of files, reading missing ones from the under file system.",
      "All files under directories. Prints Loaded PATH for each file."})
  static final class Load extends FsSubcommand {
    @Parameters(paramLabel = "PATH", arity = "1..*")
    List<String> paths;

    Load(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expand(paths), path -> {
        List<URIStatus> files = UfsCommands.filesUnder(this, path);
        Progress progress = UfsCommands.progressOver(ctx, path, files);
        try {
          for (URIStatus file : files) {
            try {
              fs().load(file.path(), progress::advance);
              progress.fileDone();
              progress.println(ctx.out(), "Loaded " + file.path());
            } catch (IOException e) {
              progress.aside(() -> report(PathFailure.of(file.path(), new Failures.TransferException(e))));
            }
          }
        } finally {
          progress.finish();
        }
      });
    }
  }

  @Command(name = "pin", description = "Pin files (directories: the files under them): their blocks are never evicted.")
  static final class Pin extends PerPathCommand {
    Pin(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected String apply(String path) throws IOException {
      fs().pin(path);
      return "Pinned " + path;
    }
  }


  @Command(name = "unpin", description = "Unpin files: their blocks may be evicted again.")
  static final class Unpin extends PerPathCommand {
    Unpin(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected String apply(String path) throws IOException {
      fs().unpin(path);
      return "Unpinned " + path;
    }
  }


  /** FREE or DELETE, case-insensitive; a bad one is a usage error naming both. */
  static final class TtlActionConverter implements ITypeConverter<TtlAction> {
    @Override
    public TtlAction convert(String value) {
      return TypeOptions.parse(TtlAction.class, "TTL action", value);
    }
  }

  @Command(name = "setTtl", description = {
      "Give a file or directory a time to live, counted from its creation.",
      "When it runs out the action happens (DELETE: the file goes; FREE: its cached blocks go).",
      "Prints the TTL set."})
  static final class SetTtl extends FsSubcommand {
    @Option(names = "--action", paramLabel = "FREE|DELETE", converter = TtlActionConverter.class,
        description = "What happens when the TTL runs out (default DELETE).")
    TtlAction action = TtlAction.DELETE;

    @Parameters(index = "0", paramLabel = "PATH")
    String path;

    @Parameters(index = "1", paramLabel = "TTL", converter = UfsCommands.DurationConverter.class,
        description = "A duration like 10s, 5min, 1h, or plain ms.")
    Duration ttl;

    SetTtl(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(resolveEach(List.of(path)), p -> {
        fs().setTtl(p, ttl.toMillis(), action);
        ctx.out().println("TTL of " + p + " set to " + ttl.toMillis() + " ms (action " + action + ")");
      });
    }
  }

  @Command(name = "unsetTtl", description = "Remove the time to live of files and directories.")
  static final class UnsetTtl extends PerPathCommand {
    UnsetTtl(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected String apply(String path) throws IOException {
      fs().unsetTtl(path);
      return "TTL of " + path + " removed";
    }
  }


  @Command(name = "checksum", description = "Print the MD5 of files as md5sum does: <md5hex>  <path>.")
  static final class Checksum extends FsSubcommand {
    @Parameters(paramLabel = "PATH", arity = "1..*")
    List<String> paths;

    Checksum(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expand(paths), path -> {
        if (fs().getStatus(path).directory()) {
          throw new PathFailure(path, Failures.IS_A_DIRECTORY);
        }
        String md5;
        try {
          md5 = fs().checksum(path);
        } catch (IOException e) {
          throw PathFailure.of(path, new Failures.TransferException(e));
        }
        ctx.out().println(Formats.checksumLine(md5, path));
      });
    }
  }
}
