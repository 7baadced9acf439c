package io.strata.cli;

import io.strata.cli.Failures.PathFailure;
import io.strata.cli.Failures.TransferException;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
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
 * {@code put} / {@code copyFromLocal}, {@code moveFromLocal} and {@code get} / {@code copyToLocal}: copies
 * between the local file system and Strata, files and (recursively) directories, with hdfs's rules: a
 * destination that is an existing directory receives the source under its own name, an existing file is
 * refused unless {@code -f}. Each file is written under {@code <target>._COPYING_} and renamed into place
 * once complete, so a failed copy never leaves a partial file at the target nor loses the file {@code -f}
 * replaces. {@code moveFromLocal} is {@code put} that deletes each local file once its copy is complete.
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

  /** A local path argument (a plain path or a {@code file:} URI); a malformed one fails against it. */
  static Path localArg(String arg) throws PathFailure {
    try {
      return CliPaths.local(arg);
    } catch (IllegalArgumentException e) {
      throw new PathFailure(arg, e.getMessage());
    }
  }

  /**
   * Whether the sources of a copy or move go under {@code dst} (an existing directory) or become it;
   * several sources need a directory, else the failure names {@code dst}.
   */
  static boolean intoDirectory(FsSubcommand cmd, String dst, int sources) throws PathFailure {
    URIStatus dstStatus;
    try {
      dstStatus = cmd.statusOrNull(dst);
    } catch (IOException e) {
      throw PathFailure.of(dst, e);
    }
    boolean intoDir = dstStatus != null && dstStatus.directory();
    if (sources > 1 && !intoDir) {
      throw new PathFailure(dst, dstStatus == null ? Failures.NO_SUCH_FILE : Failures.IS_NOT_A_DIRECTORY);
    }
    return intoDir;
  }

  /**
   * Writes a stream to a Strata file the safe way: under {@code <target>._COPYING_}, renamed into place
   * once complete; an existing target is refused ({@code File exists}) unless forced, and replaced only
   * after the new file is complete. Used by put, moveFromLocal and cp; on the calling command's thread.
   */
  static final class TargetWriter {
    private final FsSubcommand cmd;
    private final boolean force;
    private final long blockSize;
    private final WriteType writeType;

    /** {@code blockSize} 0 and {@code writeType} null: the configured defaults. */
    TargetWriter(FsSubcommand cmd, boolean force, long blockSize, WriteType writeType) {
      this.cmd = cmd;
      this.force = force;
      this.blockSize = blockSize;
      this.writeType = writeType;
    }

    /**
     * Writes {@code in} to {@code target}; a failure to read {@code in} that is not Strata's names
     * {@code shown}, every other failure names the target.
     */
    void write(InputStream in, String shown, String target) throws PathFailure {
      write(in, shown, target, Progress.NONE);
    }

    /** As {@link #write(InputStream, String, String)}, advancing {@code progress} as bytes go (the caller finishes it). */
    void write(InputStream in, String shown, String target, Progress progress) throws PathFailure {
      FileSystem fs = cmd.fs();
      String tmp = target + COPYING_SUFFIX;
      URIStatus existing;
      FileOutStream out;
      try {
        existing = cmd.statusOrNull(target);
        if (existing != null && (existing.directory() || !force)) {
          throw new PathFailure(target, Failures.FILE_EXISTS);
        }
        URIStatus stale = cmd.statusOrNull(tmp); // left by a copy that died
        if (stale != null && stale.isFile()) {
          fs.delete(tmp);
        }
        CreateFileOptions options = CreateFileOptions.defaults().withRecursive(false);
        if (blockSize > 0) {
          options = options.withBlockSize(blockSize);
        }
        options = options.withWriteType(writeType); // null: the configured default
        out = fs.createFile(tmp, options);
      } catch (IOException e) {
        throw PathFailure.of(target, e);
      }
      boolean done = false;
      try {
        Streams.upload(in, out, progress);
        Streams.complete(out);
        if (existing != null) {
          fs.delete(target);
        }
        fs.rename(tmp, target);
        done = true;
      } catch (TransferException e) {
        throw PathFailure.of(target, e);
      } catch (IOException e) {
        // Local read failures name the local source; master failures (delete, rename) the target.
        throw PathFailure.of(e instanceof StrataException ? target : shown, e);
      } finally {
        if (!done) {
          out.cancel();
          try {
            fs.delete(tmp);
          } catch (IOException e) {
            cmd.ctx.debugTrace(e);
          }
        }
      }
    }
  }

  @Command(name = "put", description = {
      "Copy local files and directories (or stdin, as -) to Strata.",
      "When DST is an existing directory the sources go under it; existing files are kept unless -f."})
  static class Put extends FsSubcommand {
    @Option(names = "-f", description = "Overwrite existing files.")
    boolean force;

    @Option(names = {"-p", "-l", "-d"}, description = "Accepted for hdfs dfs scripts and ignored: times, owner "
        + "and mode are not copied (-p), there is no lazy persist (-l), and the ._COPYING_ file is always used (-d).")
    boolean[] hdfsFlags;

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

    private TargetWriter writer;

    Put(CliContext ctx) {
      super(ctx);
    }

    /** True for moveFromLocal: each local file is deleted once its copy in Strata is complete. */
    boolean deletesSources() {
      return false;
    }

    @Override
    protected void execute() throws PathFailure {
      writer = new TargetWriter(this, force, blockSize, writeType);
      List<String> srcs = args.subList(0, args.size() - 1);
      String dst = resolve(args.get(args.size() - 1));
      boolean intoDir = intoDirectory(this, dst, srcs.size());
      forEach(srcs, src -> {
        if (src.equals("-")) {
          if (deletesSources()) {
            throw new PathFailure(src, "stdin cannot be moved; use put");
          }
          if (intoDir) {
            throw new PathFailure(dst, Failures.IS_A_DIRECTORY);
          }
          Progress progress = Progress.start(ctx, dst, -1);
          try {
            writer.write(ctx.in(), "-", dst, progress);
          } finally {
            progress.finish();
          }
          return;
        }
        Path local = localArg(src);
        if (!Files.exists(local)) {
          throw new PathFailure(src, Failures.NO_SUCH_FILE);
        }
        Path name = local.toAbsolutePath().normalize().getFileName();
        String target = intoDir && name != null ? CliPaths.child(dst, name.toString()) : dst;
        if (!Files.isDirectory(local)) {
          copy(local, src, target, null);
          return;
        }
        Progress tree = Progress.startTree(ctx, target, local); // one bar over the whole tree
        try {
          copy(local, src, target, tree);
        } finally {
          tree.finish();
        }
      });
    }

    /**
     * Copies a local file or tree; returns true when all of it was copied (and, moving, deleted). {@code tree}:
     * the bar of the tree being copied, or null for a file on its own (which gets its own bar).
     */
    private boolean copy(Path local, String shown, String target, Progress tree) throws IOException, PathFailure {
      if (Files.isRegularFile(local)) {
        Progress progress = tree != null ? tree : Progress.start(ctx, target, Files.size(local));
        try (InputStream in = open(local, shown)) {
          writer.write(in, shown, target, progress);
        } finally {
          if (tree == null) {
            progress.finish();
          }
        }
        progress.fileDone();
        deleteSource(local, shown);
        return true;
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
      boolean all = true;
      for (Path child : sortedChildren(local, shown)) {
        String childShown = child.toString();
        try {
          all &= copy(child, childShown, CliPaths.child(target, child.getFileName().toString()), tree);
        } catch (PathFailure e) {
          all = false;
          tree.aside(() -> report(e));
        } catch (IOException e) {
          all = false;
          tree.aside(() -> report(PathFailure.of(childShown, e)));
        }
      }
      if (all) {
        deleteSource(local, shown); // moving: a directory goes only when everything in it went
      }
      return all;
    }

    /** Moving: deletes a local file or (emptied) directory whose copy is complete in Strata. */
    private void deleteSource(Path local, String shown) throws PathFailure {
      if (!deletesSources()) {
        return;
      }
      try {
        Files.delete(local);
      } catch (IOException e) {
        throw PathFailure.of(shown, e);
      }
    }

    private static InputStream open(Path local, String shown) throws PathFailure {
      try {
        return Files.newInputStream(local);
      } catch (IOException e) {
        throw PathFailure.of(shown, e);
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

  @Command(name = "moveFromLocal", description = {
      "Move local files and directories to Strata.",
      "As put, then each local file is deleted once its copy in Strata is complete "
          + "(a directory once all of it moved).",
      "A file that failed to copy stays."})
  static final class MoveFromLocal extends Put {
    MoveFromLocal(CliContext ctx) {
      super(ctx);
    }

    @Override
    boolean deletesSources() {
      return true;
    }
  }

  @Command(name = "get", description = {
      "Copy Strata files and directories to the local file system.",
      "When LOCALDST is an existing directory the sources go under it; existing files are kept unless -f."})
  static final class Get extends FsSubcommand {
    @Option(names = "-f", description = "Overwrite existing local files.")
    boolean force;

    @Option(names = {"-p", "-ignoreCrc", "-crc"}, description = "Accepted for hdfs dfs scripts and ignored: times "
        + "and modes are not copied (-p); blocks are always checked and no .crc files are written.")
    boolean[] hdfsFlags;

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
      List<String> srcs = expand(args.subList(0, args.size() - 1));
      String dstArg = args.get(args.size() - 1);
      Path dst = localArg(dstArg);
      boolean intoDir = Files.isDirectory(dst);
      if (srcs.size() > 1 && !intoDir) {
        throw new PathFailure(dstArg, Files.exists(dst) ? Failures.IS_NOT_A_DIRECTORY : Failures.NO_SUCH_FILE);
      }
      forEach(srcs, src -> {
        URIStatus status = fs().getStatus(src);
        String name = CliPaths.name(src);
        Path target = intoDir && !name.isEmpty() ? dst.resolve(name) : dst;
        if (status.isFile()) {
          fetch(status, target, null);
          return;
        }
        Progress tree = treeProgress(status, target); // one bar over the whole tree
        try {
          fetch(status, target, tree);
        } finally {
          tree.finish();
        }
      });
    }

    /** One bar over the files under the Strata directory {@code dir} (listed only when the bar is shown). */
    private Progress treeProgress(URIStatus dir, Path target) throws IOException {
      if (!ctx.showProgress()) {
        return Progress.NONE;
      }
      long[] totals = new long[2];
      fs().iterateStatus(dir.path(), io.strata.client.options.ListStatusOptions.defaults().withRecursive(true), s -> {
        if (s.isFile()) {
          totals[0] += s.length();
          totals[1]++;
        }
      });
      return Progress.start(ctx, target.toString(), totals[0], (int) totals[1]);
    }

    /** {@code tree}: the bar of the tree being fetched, or null for a file on its own (which gets its own bar). */
    private void fetch(URIStatus src, Path target, Progress tree) throws IOException, PathFailure {
      if (src.isFile()) {
        fetchFile(src, target, tree);
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
          fetch(child, target.resolve(child.name()), tree);
        } catch (PathFailure e) {
          tree.aside(() -> report(e));
        } catch (IOException e) {
          tree.aside(() -> report(PathFailure.of(child.path(), e)));
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

    private void fetchFile(URIStatus src, Path target, Progress tree) throws IOException, PathFailure {
      if (Files.isDirectory(target)) {
        throw new PathFailure(target.toString(), Failures.IS_A_DIRECTORY);
      }
      if (Files.exists(target) && !force) {
        throw new PathFailure(target.toString(), Failures.FILE_EXISTS);
      }
      Path tmp = target.resolveSibling(target.getFileName() + COPYING_SUFFIX);
      boolean done = false;
      try (FileInStream in = ReadCommands.openForRead(fs(), src.path(), read.readType)) {
        Progress progress = tree != null ? tree : Progress.start(ctx, target.toString(), src.length());
        try (OutputStream out = Files.newOutputStream(tmp)) {
          Streams.download(in, out, Long.MAX_VALUE, progress);
        } finally {
          if (tree == null) {
            progress.finish();
          }
        }
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
        progress.fileDone();
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
