package io.strata.cli;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.common.conf.ValueParser;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code strata bench io}: sequential write and read throughput of one file through a running cluster,
 * each printed beside baselines measured in the same run on the same machine: a raw file written and
 * read with FileChannel in the benchmark dir (the worker's tmpfs by default), and a loopback TCP stream.
 * The machine is shared and noisy, so the ratio to the baseline is the figure that means something.
 * Each figure is the median of {@code --iterations} runs. The cost of checksums is measured by reading the
 * same file short-circuit and over TCP with verification off too ({@code bench checksums} lines).
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
    return cl;
  }

  @Override
  public Integer call() {
    throw new CommandLine.ParameterException(new CommandLine(this), "Missing benchmark: strata bench io");
  }

  @Command(name = "io", description = "Sequential write and read of one file, with raw-file and loopback-socket baselines.")
  static final class Io implements Callable<Integer> {
    private static final int BUF = 1 << 20;
    private final CliContext ctx;

    @Option(names = "--size", defaultValue = "512MB", description = "Bytes per file (default ${DEFAULT-VALUE}).")
    String size;

    @Option(names = "--block-size", defaultValue = "64MB", description = "Block size (default ${DEFAULT-VALUE}).")
    String blockSize;

    @Option(names = "--iterations", defaultValue = "3", description = "Runs per figure; the median is printed.")
    int iterations;

    @Option(names = "--dir", defaultValue = "/dev/shm", description = "Dir of the raw-file baseline.")
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
      if (bytes <= 0 || block <= 0 || iterations < 1) {
        ctx.err().println("bench: --size, --block-size and --iterations must be positive");
        return 1;
      }
      byte[] buf = new byte[BUF];
      new Random(1).nextBytes(buf);
      FileSystem fs = ctx.fs();
      Path raw = dir.resolve("strata-bench-raw-" + ProcessHandle.current().pid());
      List<Double> rawW = new ArrayList<>();
      List<Double> rawR = new ArrayList<>();
      List<Double> sock = new ArrayList<>();
      List<Double> sW = new ArrayList<>();
      List<Double> sR = new ArrayList<>();
      List<Double> scR = new ArrayList<>();
      List<Double> tcpR = new ArrayList<>();
      FileSystem tcp = FileSystem.create(ctx.conf().withAll(java.util.Map.of("strata.user.shortcircuit.mode", "off")));
      FileSystem sc = FileSystem.create(ctx.conf().withAll(java.util.Map.of("strata.user.shortcircuit.mode", "fd")));
      FileSystem tcpNoSums = FileSystem.create(ctx.conf().withAll(java.util.Map.of("strata.user.shortcircuit.mode",
          "off", "strata.user.read.checksum.verify", "false")));
      FileSystem scNoSums = FileSystem.create(ctx.conf().withAll(java.util.Map.of("strata.user.shortcircuit.mode",
          "fd", "strata.user.shortcircuit.checksum.verify", "false")));
      List<Double> scNoR = new ArrayList<>();
      List<Double> tcpNoR = new ArrayList<>();
      long scOpens = 0;
      String path = "/.strata-bench/io-" + ProcessHandle.current().pid();
      try {
        for (int i = 0; i < iterations; i++) {
          rawW.add(rate(bytes, () -> rawWrite(raw, buf, bytes)));
          rawR.add(rate(bytes, () -> rawRead(raw)));
          Files.deleteIfExists(raw);
          sock.add(rate(bytes, () -> socketStream(buf, bytes)));
          sW.add(rate(bytes, () -> strataWrite(fs, path, block, buf, bytes)));
          sR.add(rate(bytes, () -> strataRead(fs, path)));
          scR.add(rate(bytes, () -> strataRead(sc, path)));
          tcpR.add(rate(bytes, () -> strataRead(tcp, path)));
          scNoR.add(rate(bytes, () -> strataRead(scNoSums, path)));
          tcpNoR.add(rate(bytes, () -> strataRead(tcpNoSums, path)));
          fs.delete(path);
        }
        scOpens = shortCircuitOpens(sc);
      } finally {
        tcp.close();
        sc.close();
        tcpNoSums.close();
        scNoSums.close();
        Files.deleteIfExists(raw);
        if (fs.exists("/.strata-bench")) {
          fs.delete("/.strata-bench", DeleteOptions.defaults().withRecursive(true));
        }
      }
      PrintStream out = ctx.out();
      print(out, "write", bytes, block, median(sW), "raw_file_write", median(rawW));
      print(out, "write", bytes, block, median(sW), "loopback_socket", median(sock));
      print(out, "read", bytes, block, median(sR), "raw_file_read", median(rawR));
      print(out, "read", bytes, block, median(sR), "loopback_socket", median(sock));
      // The format: one line per path. short-circuit only counts when blocks were opened that way
      // (a worker on this host); otherwise the reads streamed and the line says so.
      pathLine(out, scOpens > 0 ? "short-circuit" : "short-circuit-unavailable", "read", median(scR),
          "raw_file_read", median(rawR));
      pathLine(out, "tcp", "read", median(tcpR), "loopback_socket", median(sock));
      checksumLine(out, scOpens > 0 ? "short-circuit" : "short-circuit-unavailable", median(scR), median(scNoR));
      checksumLine(out, "tcp", median(tcpR), median(tcpNoR));
      return 0;
    }

    private static void print(PrintStream out, String op, long bytes, long block, double strata, String baseline,
        double base) {
      out.println(String.format(Locale.ROOT,
          "bench op=%s bytes=%d block_size=%d strata_MBps=%.1f baseline=%s baseline_MBps=%.1f ratio=%.3f",
          op, bytes, block, strata, baseline, base, strata / base));
    }

    private static void pathLine(PrintStream out, String path, String op, double mbps, String baseline,
        double baseMbps) {
      out.println(String.format(Locale.ROOT,
          "bench path=%s op=%s threads=1 GBps=%.3f baseline=%s baseline_GBps=%.3f ratio=%.3f",
          path, op, mbps / 1000, baseline, baseMbps / 1000, mbps / baseMbps));
    }

    /** Reads with CRC32C verification against the same reads without: the cost of checksums. */
    private static void checksumLine(PrintStream out, String path, double verified, double unverified) {
      out.println(String.format(Locale.ROOT,
          "bench checksums path=%s op=read verified_GBps=%.3f unverified_GBps=%.3f cost_pct=%.1f",
          path, verified / 1000, unverified / 1000, 100 * (1 - verified / unverified)));
    }

    /** Blocks the client opened short-circuit (a zero-length stat-only open reads none). */
    private static long shortCircuitOpens(FileSystem fs) throws IOException {
      String probe = "/.strata-bench/probe-" + ProcessHandle.current().pid();
      try (FileOutStream out = fs.createFile(probe, CreateFileOptions.defaults()
          .withWriteType(io.strata.client.options.WriteType.MUST_CACHE))) {
        out.write(1);
      }
      try (FileInStream in = fs.openFile(probe)) {
        in.read();
        return in.shortCircuit().opens();
      }
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

    private static void socketStream(byte[] buf, long bytes) throws Exception {
      try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
        Thread reader = new Thread(() -> {
          try (Socket s = server.accept(); InputStream in = s.getInputStream()) {
            byte[] r = new byte[BUF];
            while (in.read(r) >= 0) {
              // discard
            }
          } catch (IOException ignored) {
            // the writer reports
          }
        }, "bench-socket-reader");
        reader.start();
        try (Socket s = new Socket(InetAddress.getByName("127.0.0.1"), server.getLocalPort());
            OutputStream out = s.getOutputStream()) {
          long left = bytes;
          while (left > 0) {
            int n = (int) Math.min(buf.length, left);
            out.write(buf, 0, n);
            left -= n;
          }
        }
        reader.join();
      }
    }

    private static void strataWrite(FileSystem fs, String path, long block, byte[] buf, long bytes)
        throws IOException {
      // MUST_CACHE: the figure is the cache's own path, without a background persist competing with it.
      try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(block)
          .withWriteType(io.strata.client.options.WriteType.MUST_CACHE))) {
        long left = bytes;
        while (left > 0) {
          int n = (int) Math.min(buf.length, left);
          out.write(buf, 0, n);
          left -= n;
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
