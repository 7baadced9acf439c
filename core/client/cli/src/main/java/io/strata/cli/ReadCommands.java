package io.strata.cli;

import io.strata.cli.Failures.PathFailure;
import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.ReadType;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.NotFoundException;
import java.io.IOException;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The {@code strata fs} commands that print file contents to stdout: {@code cat} (raw bytes), {@code text}
 * (gzip decompressed), {@code head} (the first KiB) and {@code tail} (the last KiB). Each is a picocli
 * command object used for one run, on one thread.
 */
final class ReadCommands {
  static final int HEAD_TAIL_BYTES = 1024;

  private ReadCommands() {}

  /**
   * Opens a file for reading; a directory is refused as {@code Is a directory} (openFile says only
   * "failed precondition", which also stands for an incomplete file).
   */
  static FileInStream openForRead(FileSystem fs, String path, ReadType readType) throws IOException, PathFailure {
    try {
      return fs.openFile(path, readType == null ? OpenFileOptions.defaults()
          : OpenFileOptions.defaults().withReadType(readType));
    } catch (FailedPreconditionException e) {
      URIStatus status;
      try {
        status = fs.getStatus(path);
      } catch (NotFoundException gone) {
        throw e;
      }
      if (status.directory()) {
        throw new PathFailure(path, Failures.IS_A_DIRECTORY);
      }
      throw e;
    }
  }

  /** Prints up to {@code bytes} bytes of {@code path}, its first or its last; false when stdout is closed. */
  static boolean print(CliContext ctx, String path, boolean fromEnd, long bytes, ReadType readType)
      throws IOException, PathFailure {
    try (FileInStream in = openForRead(ctx.fs(), path, readType)) {
      if (fromEnd) {
        long start = Math.max(0, in.length() - bytes);
        try {
          in.seek(start);
        } catch (IOException e) {
          throw new Failures.TransferException(e);
        }
      }
      return Streams.download(in, ctx.out(), bytes);
    }
  }

  /** {@code --read-type}, shared by the commands that read file contents. */
  static final class ReadTypeOption {
    @Option(names = "--read-type", paramLabel = "TYPE", converter = TypeOptions.ReadTypeConverter.class,
        description = "NO_CACHE, CACHE or CACHE_PROMOTE (default: strata.user.file.readtype.default).")
    ReadType readType;
  }

  @Command(name = "cat", description = "Print files to stdout.")
  static final class Cat extends FsSubcommand {
    @Mixin
    ReadTypeOption read;

    @Parameters(paramLabel = "PATH", arity = "1..*")
    List<String> paths;

    Cat(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      boolean[] stdoutOpen = {true};
      forEach(expand(paths), path -> {
        if (stdoutOpen[0] && !print(ctx, path, false, Long.MAX_VALUE, read.readType)) {
          stdoutOpen[0] = false;
          markFailed();
        }
      });
    }
  }

  @Command(name = "text", description = {
      "Print files to stdout, decompressing gzip files.",
      "A gzip file (known by its magic bytes) is decompressed, anything else is printed as it is.",
      "SequenceFile, Avro and other Hadoop codecs are not decoded (their bytes are printed)."})
  static final class Text extends FsSubcommand {
    @Mixin
    ReadTypeOption read;

    @Parameters(paramLabel = "PATH", arity = "1..*")
    List<String> paths;

    Text(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      boolean[] stdoutOpen = {true};
      forEach(expand(paths), path -> {
        if (!stdoutOpen[0]) {
          return;
        }
        try (FileInStream file = openForRead(ctx.fs(), path, read.readType)) {
          java.io.InputStream in = new java.io.BufferedInputStream(file);
          try {
            in.mark(2);
            int b0 = in.read();
            int b1 = in.read();
            in.reset();
            if (b0 == 0x1f && b1 == 0x8b) {
              in = new java.util.zip.GZIPInputStream(in, Streams.BUFFER_BYTES);
            }
          } catch (IOException e) {
            throw new Failures.TransferException(e);
          }
          if (!Streams.download(in, ctx.out(), Long.MAX_VALUE)) {
            stdoutOpen[0] = false;
            markFailed();
          }
        }
      });
    }
  }

  @Command(name = "head", description = "Print the first kilobyte of a file.")
  static final class Head extends FsSubcommand {
    @Mixin
    ReadTypeOption read;

    @Parameters(paramLabel = "PATH", arity = "1")
    String path;

    Head(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expand(List.of(path)), p -> {
        if (!print(ctx, p, false, HEAD_TAIL_BYTES, read.readType)) {
          markFailed();
        }
      });
    }
  }

  @Command(name = "tail", description = "Print the last kilobyte of a file.")
  static final class Tail extends FsSubcommand {
    @Mixin
    ReadTypeOption read;

    @Parameters(paramLabel = "PATH", arity = "1")
    String path;

    Tail(CliContext ctx) {
      super(ctx);
    }

    @Override
    protected void execute() {
      forEach(expand(List.of(path)), p -> {
        if (!print(ctx, p, true, HEAD_TAIL_BYTES, read.readType)) {
          markFailed();
        }
      });
    }
  }
}
