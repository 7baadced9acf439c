package io.strata.cli;

import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.common.conf.ValueParser;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code strata bench}: benchmarks against a running cluster. {@code io} ({@link IoBench}) measures every
 * data path beside raw baselines measured in the same run on the same machine; the machine is shared
 * and noisy, so the ratio to the baseline is the figure that means something. {@link Io} also holds the
 * raw-file and timing helpers the other benchmarks share.
 *
 * <p>Built per run; not thread-safe.
 */
@Command(name = "bench", description = "Benchmarks against a running cluster.", subcommands = CommandLine.HelpCommand.class)
final class BenchCommand implements Callable<Integer> {
  private BenchCommand() {}

  static CommandLine commandLine(CliContext ctx) {
    CommandLine cl = new CommandLine(new BenchCommand());
    cl.addSubcommand("io", new Io(ctx));
    cl.addSubcommand("meta", new MetaBench(ctx));
    cl.addSubcommand("ufs", new UfsBench(ctx));
    cl.addSubcommand("memory", new MemoryBench(ctx));
    return cl;
  }

  @Override
  public Integer call() {
    throw new CommandLine.ParameterException(new CommandLine(this), "Missing benchmark: strata bench io");
  }

  @Command(name = "io", description = "Writes, reads and 1 MiB positioned reads through every data path "
      + "(short-circuit, domain-socket and TCP streaming, Hadoop's API over strata://) with 1..N threads, beside raw-file and raw-socket "
      + "baselines measured in the same run.")
  static final class Io implements Callable<Integer> {
    private static final int BUF = 1 << 20;
    private final CliContext ctx;

    @Option(names = "--size", defaultValue = "1GB", description = "Bytes per measurement, split among the "
        + "threads (default ${DEFAULT-VALUE}).")
    String size;

    @Option(names = "--threads", defaultValue = "1", description = "Measures with 1..N client threads "
        + "(default ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--paths", split = ",", description = "Only these data paths (default: all of "
        + "short-circuit, uds, tcp, tcp-plain, hadoop; also short-circuit-nocrc and tcp-nocrc: reads without "
        + "checksum checks, tcp-grpc and uds-grpc: reads streamed over gRPC, short-circuit-noahead: reads "
        + "without the next block opened ahead, short-circuit-channel: short-circuit reads of the block file's "
        + "channel instead of its memory mapping).")
    List<String> paths;

    @Option(names = "--block-size", defaultValue = "64MB", description = "Block size (default ${DEFAULT-VALUE}).")
    String blockSize;

    @Option(names = "--iterations", defaultValue = "3", description = "Runs per figure; the median is printed.")
    int iterations;

    @Option(names = "--dir", description = "Dir of the raw-file baselines (default: beside the top tier's dir "
        + "of the worker on this host, else /dev/shm).")
    Path dir;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean helpRequested;

    Io(CliContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public Integer call() throws Exception {
      long bytes = ValueParser.parseBytes(size);
      long block = ValueParser.parseBytes(blockSize);
      if (bytes <= 0 || block <= 0 || iterations < 1 || threads < 1) {
        ctx.err().println("bench: --size, --block-size, --iterations and --threads must be positive");
        return 1;
      }
      List<IoBench.DataPath> chosen = new ArrayList<>();
      List<IoBench.DataPath> known = new ArrayList<>(IoBench.PATHS);
      known.addAll(IoBench.OPTIONAL_PATHS);
      for (IoBench.DataPath p : known) {
        if (paths == null ? IoBench.PATHS.contains(p) : paths.contains(p.name())) {
          chosen.add(p);
        }
      }
      if (paths != null) {
        for (String p : paths) {
          if (known.stream().noneMatch(d -> d.name().equals(p))) {
            ctx.err().println("bench: unknown path '" + p + "' in --paths; the paths are "
                + known.stream().map(IoBench.DataPath::name).toList());
            return 1;
          }
        }
      }
      new IoBench(ctx.conf(), ctx.fs(), ctx.out(), ctx.err(), bytes, block, iterations).run(chosen, threads, dir);
      return 0;
    }

    @FunctionalInterface
    interface Run {
      void run() throws Exception;
    }

    /** MB/s of one run. */
    static double rate(long bytes, Run r) throws Exception {
      long t0 = System.nanoTime();
      r.run();
      double s = (System.nanoTime() - t0) / 1e9;
      return bytes / 1e6 / s;
    }

    static double median(List<Double> v) {
      List<Double> s = new ArrayList<>(v);
      Collections.sort(s);
      return s.get(s.size() / 2);
    }

    static void rawWrite(Path p, byte[] buf, long bytes) throws IOException {
      try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        long left = bytes;
        while (left > 0) {
          int n = (int) Math.min(buf.length, left);
          ByteBuffer b = ByteBuffer.wrap(buf, 0, n);
          while (b.hasRemaining()) {
            ch.write(b);
          }
          left -= n;
        }
      }
    }

    static void rawRead(Path p) throws IOException {
      ByteBuffer b = ByteBuffer.allocate(BUF);
      try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
        while (ch.read(b) >= 0) {
          b.clear();
        }
      }
    }

    static void strataRead(FileSystem fs, String path) throws IOException {
      strataRead(fs, path, io.strata.client.options.OpenFileOptions.defaults());
    }

    static void strataRead(FileSystem fs, String path, io.strata.client.options.OpenFileOptions options)
        throws IOException {
      byte[] r = new byte[BUF];
      try (FileInStream in = fs.openFile(path, options)) {
        while (in.read(r) >= 0) {
          // discard
        }
      }
    }
  }
}
