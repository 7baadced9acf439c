package io.strata.cli;

import io.strata.cli.Failures.PathFailure;
import io.strata.cli.Failures.TransferException;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.conf.ValueParser;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code put} / {@code copyFromLocal} and {@code get} / {@code copyToLocal}: copies between the local file
 * system and Strata, files and (recursively) directories, with hdfs's rules: a destination that is an
 * existing directory receives the source under its own name, an existing file is refused unless
 * {@code -f}. Each file is written under {@code <target>._COPYING_} and renamed into place once complete,
 * so a failed copy never leaves a partial file at the target nor loses the file {@code -f} replaces.
 *
 * <p>Each is a picocli command object used for one run, on one thread.
 */
final class CopyCommands {
  static final String COPYING_SUFFIX = "._COPYING_";

  private CopyCommands() {}

  /** Parses {@code 64MB}-style sizes; a bad one is a usage error. */
  static final class SizeConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      long bytes = ValueParser.parseBytes(value);
      if (bytes <= 0) {
        throw new IllegalArgumentException("'" + value + "' is not a positive size");
      }
      return bytes;
    }
  }

  @Command(name = "put", description = {
      "Copy local files and directories (or stdin, as -) to Strata.",
      "When DST is an existing directory the sources go under it; existing files are kept unless -f."})
  static final class Put extends FsSubcommand {
    @Option(names = "-f", description = "Overwrite existing files.")
    boolean force;

    @Option(names = "--block-size", paramLabel = "SIZE", converter = SizeConverter.class,
        description = "Block size of the new files, like 64MB (default: strata.user.block.size.default).")
    long blockSize;

    @Option(names = "--write-type", paramLabel = "TYPE", converter = TypeOptions.WriteTypeConverter.class,
        description = "MUST_CACHE, CACHE_THROUGH, THROUGH or ASYNC_THROUGH "
            + "(default: strata.user.file.writetype.default).")
    WriteType writeType;

    @Parameters(paramLabel = "LOCALSRC... DST", arity = "2..*", hideParamSyntax = true,
        description = "Local files or directories (- for stdin), then the Strata destination.")
    List<String> args;

    Put(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() throws PathFailure {
      List<String> srcs = args.subList(0, args.size() - 1);
      String dst = CliPaths.normalise(args.get(args.size() - 1));
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
        if (src.equals("-")) {
          if (intoDir) {
            throw new PathFailure(dst, Failures.IS_A_DIRECTORY);
          }
          putStream(ctx.in(), "-", dst);
          return;
        }
        Path local = Path.of(src);
        if (!Files.exists(local)) {
          throw new PathFailure(src, Failures.NO_SUCH_FILE);
        }
        Path name = local.toAbsolutePath().normalize().getFileName();
        String target = intoDir && name != null ? CliPaths.child(dst, name.toString()) : dst;
        copy(local, src, target);
      });
    }

    private void copy(Path local, String shown, String target) throws IOException, PathFailure {
      if (Files.isRegularFile(local)) {
        try (InputStream in = open(local, shown)) {
          putStream(in, shown, target);
        }
        return;
      }
      if (!Files.isDirectory(local)) {
        throw new PathFailure(shown, "Not a regular file or directory");
      }
      try {
        URIStatus existing = statusOrNull(target);
        if (existing != null && existing.isFile()) {
          throw new PathFailure(target, Failures.IS_NOT_A_DIRECTORY);
        }
        if (existing == null) {
          fs().createDirectory(target, CreateDirectoryOptions.defaults().withWriteType(writeType));
        }
      } catch (IOException e) {
        throw PathFailure.of(target, e);
      }
      for (Path child : sortedChildren(local, shown)) {
        String childShown = child.toString();
        try {
          copy(child, childShown, CliPaths.child(target, child.getFileName().toString()));
        } catch (PathFailure e) {
          report(e);
        } catch (IOException e) {
          report(PathFailure.of(childShown, e));
        }
      }
    }

    private static InputStream open(Path local, String shown) throws PathFailure {
      try {
        return Files.newInputStream(local);
      } catch (IOException e) {
        throw PathFailure.of(shown, e);
      }
    }

    /** Writes {@code in} to {@code target} through a temporary name; local failures name {@code shown}. */
    private void putStream(InputStream in, String shown, String target) throws PathFailure {
      String tmp = target + COPYING_SUFFIX;
      URIStatus existing;
      FileOutStream out;
      try {
        existing = statusOrNull(target);
        if (existing != null && (existing.directory() || !force)) {
          throw new PathFailure(target, Failures.FILE_EXISTS);
        }
        URIStatus stale = statusOrNull(tmp); // left by a copy that died
        if (stale != null && stale.isFile()) {
          fs().delete(tmp);
        }
        CreateFileOptions options = CreateFileOptions.defaults().withRecursive(false);
        if (blockSize > 0) {
          options = options.withBlockSize(blockSize);
        }
        options = options.withWriteType(writeType); // null: the configured default
        out = fs().createFile(tmp, options);
      } catch (IOException e) {
        throw PathFailure.of(target, e);
      }
      boolean done = false;
      try {
        Streams.upload(in, out);
        Streams.complete(out);
        if (existing != null) {
          fs().delete(target);
        }
        fs().rename(tmp, target);
        done = true;
      } catch (TransferException e) {
        throw PathFailure.of(target, e);
      } catch (IOException e) {
        // Local read failures name the local source; master failures (delete, rename) the target.
        throw PathFailure.of(e instanceof StrataException ? target : shown, e);
      } finally {
        if (!done) {
          out.cancel();
          deleteQuietly(tmp);
        }
      }
    }

    private void deleteQuietly(String path) {
      try {
        fs().delete(path);
      } catch (IOException e) {
        ctx.debugTrace(e);
      }
    }

    private static List<Path> sortedChildren(Path dir, String shown) throws PathFailure {
      try (Stream<Path> s = Files.list(dir)) {
        List<Path> children = new ArrayList<>();
        s.sorted().forEach(children::add);
        return children;
      } catch (IOException e) {
        throw PathFailure.of(shown, e);
      }
    }
  }

  @Command(name = "get", description = {
      "Copy Strata files and directories to the local file system.",
      "When LOCALDST is an existing directory the sources go under it; existing files are kept unless -f."})
  static final class Get extends FsSubcommand {
    @Option(names = "-f", description = "Overwrite existing local files.")
    boolean force;

    @Mixin
    ReadCommands.ReadTypeOption read;

    @Parameters(paramLabel = "SRC... LOCALDST", arity = "2..*", hideParamSyntax = true,
        description = "Strata files or directories, then the local destination.")
    List<String> args;

    Get(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() throws PathFailure {
      List<String> srcs = ListCommands.normalise(args.subList(0, args.size() - 1));
      String dstArg = args.get(args.size() - 1);
      Path dst = Path.of(dstArg);
      boolean intoDir = Files.isDirectory(dst);
      if (srcs.size() > 1 && !intoDir) {
        throw new PathFailure(dstArg, Files.exists(dst) ? Failures.IS_NOT_A_DIRECTORY : Failures.NO_SUCH_FILE);
      }
      forEach(srcs, src -> {
        URIStatus status = fs().getStatus(src);
        String name = CliPaths.name(src);
        fetch(status, intoDir && !name.isEmpty() ? dst.resolve(name) : dst);
      });
    }

    private void fetch(URIStatus src, Path target) throws IOException, PathFailure {
      if (src.isFile()) {
        fetchFile(src, target);
        return;
      }
      if (Files.exists(target) && !Files.isDirectory(target)) {
        throw new PathFailure(target.toString(), Failures.IS_NOT_A_DIRECTORY);
      }
      if (!Files.isDirectory(target)) {
        try {
          Files.createDirectory(target);
        } catch (IOException e) {
          throw PathFailure.of(target.toString(), e);
        }
      }
      for (URIStatus child : fs().listStatus(src.path())) {
        try {
          fetch(child, target.resolve(child.name()));
        } catch (PathFailure e) {
          report(e);
        } catch (IOException e) {
          report(PathFailure.of(child.path(), e));
        }
      }
    }

    private void deleteQuietly(Path local) {
      try {
        Files.deleteIfExists(local);
      } catch (IOException e) {
        ctx.debugTrace(e);
      }
    }

    private void fetchFile(URIStatus src, Path target) throws IOException, PathFailure {
      if (Files.isDirectory(target)) {
        throw new PathFailure(target.toString(), Failures.IS_A_DIRECTORY);
      }
      if (Files.exists(target) && !force) {
        throw new PathFailure(target.toString(), Failures.FILE_EXISTS);
      }
      Path tmp = target.resolveSibling(target.getFileName() + COPYING_SUFFIX);
      boolean done = false;
      try (FileInStream in = ReadCommands.openForRead(fs(), src.path(), read.readType)) {
        try (OutputStream out = Files.newOutputStream(tmp)) {
          Streams.download(in, out, Long.MAX_VALUE);
        }
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
        done = true;
      } catch (TransferException | NotFoundException e) {
        throw PathFailure.of(src.path(), e); // reading Strata failed, or the file went away
      } catch (IOException e) {
        if (e instanceof StrataException) {
          throw PathFailure.of(src.path(), e);
        }
        throw PathFailure.of(target.toString(), e); // writing the local file failed
      } finally {
        if (!done) {
          deleteQuietly(tmp);
        }
      }
    }
  }
}
