package io.strata.cli;

import io.strata.cli.Failures.PathFailure;
import io.strata.client.FileOutStream;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.NotFoundException;
import java.io.IOException;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The {@code strata fs} commands that change the namespace without moving data: {@code mkdir},
 * {@code touch}, {@code rm}, {@code rmdir} and {@code mv}. Each is a picocli command object used for one run, on one
 * thread.
 */
final class NamespaceCommands {
  private NamespaceCommands() {}

  @Command(name = "mkdir", description = "Create directories.")
  static final class Mkdir extends FsSubcommand {
    @Option(names = "-p", description = "Create missing parents; an existing directory is not an error.")
    boolean parents;

    @Option(names = "--write-type", paramLabel = "TYPE", converter = TypeOptions.WriteTypeConverter.class,
        description = "CACHE_THROUGH or THROUGH also create the directories in the under file system now "
            + "(default: strata.user.file.writetype.default).")
    WriteType writeType;

    @Parameters(paramLabel = "PATH", arity = "1..*")
    List<String> paths;

    Mkdir(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      CreateDirectoryOptions options = CreateDirectoryOptions.defaults()
          .withRecursive(parents).withAllowExists(parents).withWriteType(writeType);
      forEach(resolveEach(paths), path -> fs().createDirectory(path, options));
    }
  }

  @Command(name = "touch", description = {
      "Create empty files where nothing exists.",
      "An existing file is left as it is; the parent directory must exist."})
  static final class Touch extends FsSubcommand {
    @Parameters(paramLabel = "PATH", arity = "1..*")
    List<String> paths;

    Touch(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(resolveEach(paths), this::touch);
    }

    void touch(String path) throws IOException, PathFailure {
      URIStatus status = statusOrNull(path);
      if (status != null) {
        if (status.directory()) {
          throw new PathFailure(path, Failures.IS_A_DIRECTORY);
        }
        return;
      }
      FileOutStream out;
      try {
        out = fs().createFile(path, CreateFileOptions.defaults().withRecursive(false));
      } catch (AlreadyExistsException e) {
        // Created by someone else since the check: fine if it is a file.
        URIStatus now = statusOrNull(path);
        if (now != null && now.isFile()) {
          return;
        }
        throw e;
      }
      Streams.complete(out);
    }
  }

  @Command(name = "touchz", description = {
      "Create empty files, like hdfs dfs -touchz.",
      "An existing empty file is left as it is; one with bytes in it is an error (Not a zero-length file)."})
  static final class Touchz extends FsSubcommand {
    @Parameters(paramLabel = "PATH", arity = "1..*")
    List<String> paths;

    private final Touch touch;

    Touchz(CliContext ctx) {
      super(ctx);
      this.touch = new Touch(ctx);
    }

    @Override
    protected void execute() {
      forEach(resolveEach(paths), path -> {
        URIStatus status = statusOrNull(path);
        if (status != null && status.isFile() && status.length() > 0) {
          throw new PathFailure(path, "Not a zero-length file");
        }
        touch.touch(path);
      });
    }
  }

  @Command(name = "rm", description = "Delete files, and directories with -r. Prints Deleted PATH for each.")
  static final class Rm extends FsSubcommand {
    @Option(names = {"-r", "-R"}, description = "Delete directories and everything under them.")
    boolean recursive;

    @Option(names = "-f", description = "A missing path is not an error.")
    boolean force;

    @Option(names = {"-skipTrash", "--skipTrash"}, description = "Accepted for habit: there is no trash.")
    boolean skipTrash;

    @Parameters(paramLabel = "PATH", arity = "1..*")
    List<String> paths;

    Rm(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expand(paths, force), this::rm);
    }

    private void rm(String path) throws IOException, PathFailure {
      URIStatus status = statusOrNull(path);
      if (status == null) {
        if (!force) {
          throw new PathFailure(path, Failures.NO_SUCH_FILE);
        }
        return;
      }
      if (status.directory() && !recursive) {
        throw new PathFailure(path, Failures.IS_A_DIRECTORY);
      }
      try {
        fs().delete(path, DeleteOptions.defaults().withRecursive(recursive));
      } catch (NotFoundException e) {
        if (force) {
          return;
        }
        throw e;
      }
      ctx.out().println("Deleted " + path);
    }
  }

  @Command(name = "rmdir", description = "Delete empty directories (a directory with anything in it is kept).")
  static final class Rmdir extends FsSubcommand {
    @Option(names = "--ignore-fail-on-non-empty", description = "A directory that is not empty is not an error.")
    boolean ignoreNonEmpty;

    @Parameters(paramLabel = "DIR", arity = "1..*")
    List<String> paths;

    Rmdir(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expand(paths), path -> {
        if (!fs().getStatus(path).directory()) {
          throw new PathFailure(path, Failures.IS_NOT_A_DIRECTORY);
        }
        try {
          // Not recursive: the master refuses a directory that has children, even ones added just now.
          fs().delete(path, DeleteOptions.defaults().withRecursive(false));
        } catch (io.strata.common.exception.DirectoryNotEmptyException e) {
          if (!ignoreNonEmpty) {
            throw new PathFailure(path, Failures.DIRECTORY_NOT_EMPTY);
          }
        }
      });
    }
  }

  @Command(name = "mv", description = {
      "Move or rename files and directories.",
      "When DST is an existing directory the sources move into it (it must be one for several sources)."})
  static final class Mv extends FsSubcommand {
    @Parameters(paramLabel = "SRC... DST", arity = "2..*", hideParamSyntax = true,
        description = "Paths to move, then the destination.")
    List<String> args;

    Mv(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() throws PathFailure {
      String dst = resolve(args.get(args.size() - 1)); // first: its authority may pick the master
      List<String> srcs = expand(args.subList(0, args.size() - 1));
      URIStatus dstStatus;
      try {
        dstStatus = statusOrNull(dst);
      } catch (IOException e) {
        throw PathFailure.of(dst, e);
      }
      boolean intoDir = dstStatus != null && dstStatus.directory();
      if (srcs.size() > 1 && !intoDir) {
        throw new PathFailure(dst, dstStatus == null ? Failures.NO_SUCH_FILE : Failures.IS_NOT_A_DIRECTORY);
      }
      forEach(srcs, src -> {
        fs().getStatus(src); // a missing source is reported against the source, not the destination
        // The root has no name to move under dst; let the master refuse moving it.
        String target = intoDir && !src.equals("/") ? CliPaths.child(dst, CliPaths.name(src)) : dst;
        if (!intoDir && dstStatus != null) {
          throw new PathFailure(dst, Failures.FILE_EXISTS);
        }
        try {
          fs().rename(src, target);
        } catch (NotFoundException | AlreadyExistsException e) {
          throw PathFailure.of(target, e); // the target's parent is missing, or the target exists
        }
      });
    }
  }
}
