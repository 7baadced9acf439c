package io.strata.cli;

import io.strata.cli.Failures.PathFailure;
import io.strata.cli.Failures.TransferException;
import io.strata.client.FileInStream;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.common.exception.StrataException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The {@code strata fs} commands that read Strata files into a new copy: {@code cp} (inside Strata, files
 * and trees, each file written through {@code ._COPYING_} as put does) and {@code getmerge} (many files
 * into one local file). Each is a picocli command object used for one run, on one thread.
 */
final class MergeCommands {
  private MergeCommands() {}

  @Command(name = "cp", description = {
      "Copy files and directories (with everything under them) inside Strata.",
      "When DST is an existing directory the sources go under it (it must be one for several sources);",
      "existing files are kept unless -f. The copies get the default block size and write type."})
  static final class Cp extends FsSubcommand {
    @Option(names = "-f", description = "Overwrite existing files.")
    boolean force;

    @Option(names = "-p", description = "Accepted for habit; owner, group, mode and times are not copied.")
    boolean preserve;

    @Mixin
    ReadCommands.ReadTypeOption read;

    @Parameters(paramLabel = "SRC... DST", arity = "2..*", hideParamSyntax = true,
        description = "Strata files or directories, then the Strata destination.")
    List<String> args;

    private CopyCommands.TargetWriter writer;

    Cp(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() throws PathFailure {
      writer = new CopyCommands.TargetWriter(this, force, 0, null);
      String dst = resolve(args.get(args.size() - 1)); // first: its authority may pick the master
      List<String> srcs = expand(args.subList(0, args.size() - 1));
      if (srcs.isEmpty()) {
        return;
      }
      boolean intoDir = CopyCommands.intoDirectory(this, dst, srcs.size());
      forEach(srcs, src -> {
        URIStatus status = fs().getStatus(src);
        String target = intoDir && !src.equals("/") ? CliPaths.child(dst, CliPaths.name(src)) : dst;
        if (status.directory() && (target.equals(src) || target.startsWith(src.equals("/") ? "/" : src + "/"))) {
          throw new PathFailure(src, "cannot copy a directory into itself (" + target + ")");
        }
        copy(status, target);
      });
    }

    private void copy(URIStatus src, String target) throws IOException, PathFailure {
      if (src.isFile()) {
        try (FileInStream in = ReadCommands.openForRead(fs(), src.path(), read.readType)) {
          writer.write(new FailingAsTransfer(in), src.path(), target);
        }
        return;
      }
      try {
        URIStatus existing = statusOrNull(target);
        if (existing != null && existing.isFile()) {
          throw new PathFailure(target, Failures.IS_NOT_A_DIRECTORY);
        }
        if (existing == null) {
          fs().createDirectory(target, CreateDirectoryOptions.defaults());
        }
      } catch (IOException e) {
        throw PathFailure.of(target, e);
      }
      List<URIStatus> children = new ArrayList<>(fs().listStatus(src.path()));
      children.sort(Comparator.comparing(URIStatus::name));
      for (URIStatus child : children) {
        try {
          copy(child, CliPaths.child(target, child.name()));
        } catch (PathFailure e) {
          report(e);
        } catch (IOException e) {
          report(PathFailure.of(child.path(), e));
        }
      }
    }
  }

  /**
   * A Strata file read as the source of a copy: its read failures come out as {@link TransferException},
   * so the copy reports them with their own message against the file rather than as local I/O.
   */
  private static final class FailingAsTransfer extends java.io.FilterInputStream {
    FailingAsTransfer(FileInStream in) {
      super(in);
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      try {
        return super.read(b, off, len);
      } catch (IOException e) {
        throw new TransferException(e);
      }
    }
  }

  @Command(name = "getmerge", description = {
      "Concatenate files into one local file.",
      "Each SRC file, and the files directly in each SRC directory (by name), in order.",
      "LOCALDST is replaced once the merge is complete."})
  static final class GetMerge extends FsSubcommand {
    @Option(names = "-nl", description = "Add a newline after each file.")
    boolean newline;

    @Option(names = "-skip-empty-file", description = "Leave out empty files (and their newline).")
    boolean skipEmpty;

    @Mixin
    ReadCommands.ReadTypeOption read;

    @Parameters(paramLabel = "SRC... LOCALDST", arity = "2..*", hideParamSyntax = true,
        description = "Strata files or directories, then the local file to write.")
    List<String> args;

    GetMerge(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() throws PathFailure {
      String dstArg = args.get(args.size() - 1);
      Path dst = CopyCommands.localArg(dstArg);
      if (Files.isDirectory(dst)) {
        throw new PathFailure(dstArg, Failures.IS_A_DIRECTORY);
      }
      List<URIStatus> files = new ArrayList<>();
      forEach(expand(args.subList(0, args.size() - 1)), src -> {
        URIStatus status = fs().getStatus(src);
        if (status.isFile()) {
          files.add(status);
          return;
        }
        List<URIStatus> children = new ArrayList<>(fs().listStatus(src));
        children.removeIf(c -> c.directory() || c.path().equals(src));
        children.sort(Comparator.comparing(URIStatus::name));
        files.addAll(children);
      });
      Path tmp = dst.resolveSibling(dst.getFileName() + CopyCommands.COPYING_SUFFIX);
      boolean done = false;
      try {
        try (OutputStream out = Files.newOutputStream(tmp)) {
          for (URIStatus f : files) {
            if (skipEmpty && f.length() == 0) {
              continue;
            }
            try (FileInStream in = ReadCommands.openForRead(fs(), f.path(), read.readType)) {
              Streams.download(in, out, Long.MAX_VALUE);
            } catch (TransferException | StrataException e) {
              throw PathFailure.of(f.path(), e); // reading Strata failed, or the file went away
            }
            if (newline) {
              out.write('\n');
            }
          }
        }
        Files.move(tmp, dst, StandardCopyOption.REPLACE_EXISTING);
        done = true;
      } catch (IOException e) {
        throw PathFailure.of(dstArg, e); // writing the local file failed
      } finally {
        if (!done) {
          try {
            Files.deleteIfExists(tmp);
          } catch (IOException e) {
            ctx.debugTrace(e);
          }
        }
      }
    }
  }
}
