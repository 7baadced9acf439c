package io.strata.cli;

import io.strata.cli.BenchCommand.Io;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.ReadType;
import io.strata.client.options.WriteType;
import io.strata.common.conf.ValueParser;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code strata bench ufs}: the under file system paths against a running cluster whose root mount is a
 * local dir, each beside a raw-file baseline measured in the same run on the same files: writes THROUGH
 * and CACHE_THROUGH against a raw write into the UFS dir; reads of a file only the UFS holds with
 * NO_CACHE (streamed through a worker), a first CACHE read (read-through: the worker caches while it
 * streams) and a second CACHE read (from the worker's tiers), against a raw read of the UFS file. Each
 * figure is the median of {@code --iterations} runs.
 *
 * <p>Built per run; not thread-safe.
 */
@Command(name = "ufs", description = "Under file system writes and reads (through, read-through, cached) "
    + "with raw-file baselines; the root mount must be a local dir.")
final class UfsBench implements Callable<Integer> {
  private static final int BUF = 1 << 20;
  private final CliContext ctx;

  @Option(names = "--size", defaultValue = "256MB", description = "Bytes per file (default ${DEFAULT-VALUE}).")
  String size;

  @Option(names = "--iterations", defaultValue = "3", description = "Runs per figure; the median is printed.")
  int iterations;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean helpRequested;

  UfsBench(CliContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() throws Exception {
    long bytes = ValueParser.parseBytes(size);
    if (bytes <= 0 || iterations < 1) {
      ctx.err().println("bench: --size and --iterations must be positive");
      return 1;
    }
    byte[] buf = new byte[BUF];
    new Random(2).nextBytes(buf);
    FileSystem fs = ctx.fs();
    String dir = "/.strata-bench-ufs-" + ProcessHandle.current().pid();
    List<Double> rawW = new ArrayList<>();
    List<Double> throughW = new ArrayList<>();
    List<Double> cacheThroughW = new ArrayList<>();
    List<Double> rawR = new ArrayList<>();
    List<Double> noCache = new ArrayList<>();
    List<Double> cold = new ArrayList<>();
    List<Double> warm = new ArrayList<>();
    try {
      for (int i = 0; i < iterations; i++) {
        String t = dir + "/through-" + i;
        String ct = dir + "/cache-through-" + i;
        throughW.add(Io.rate(bytes, () -> write(fs, t, WriteType.THROUGH, buf, bytes)));
        cacheThroughW.add(Io.rate(bytes, () -> write(fs, ct, WriteType.CACHE_THROUGH, buf, bytes)));
        String ufs = fs.getStatus(t).ufsPath();
        if (!ufs.startsWith("file:")) {
          ctx.err().println("bench: the root mount is " + ufs + "; this benchmark needs a local dir UFS");
          return 1;
        }
        Path local = Path.of(URI.create(ufs));
        Path raw = local.resolveSibling("raw-" + i);
        rawW.add(Io.rate(bytes, () -> Io.rawWrite(raw, buf, bytes)));
        Files.deleteIfExists(raw);
        rawR.add(Io.rate(bytes, () -> Io.rawRead(local)));
        noCache.add(Io.rate(bytes, () -> Io.strataRead(fs, t, OpenFileOptions.defaults().withReadType(ReadType.NO_CACHE))));
        cold.add(Io.rate(bytes, () -> Io.strataRead(fs, t, OpenFileOptions.defaults().withReadType(ReadType.CACHE))));
        awaitCached(fs, t);
        warm.add(Io.rate(bytes, () -> Io.strataRead(fs, t, OpenFileOptions.defaults().withReadType(ReadType.CACHE))));
        fs.delete(dir, DeleteOptions.defaults().withRecursive(true));
      }
    } finally {
      if (fs.exists(dir)) {
        fs.delete(dir, DeleteOptions.defaults().withRecursive(true));
      }
    }
    PrintStream out = ctx.out();
    print(out, "write_through", bytes, Io.median(throughW), "raw_file_write", Io.median(rawW));
    print(out, "write_cache_through", bytes, Io.median(cacheThroughW), "raw_file_write", Io.median(rawW));
    print(out, "read_no_cache", bytes, Io.median(noCache), "raw_file_read", Io.median(rawR));
    print(out, "read_through_cold", bytes, Io.median(cold), "raw_file_read", Io.median(rawR));
    print(out, "read_cached_warm", bytes, Io.median(warm), "raw_file_read", Io.median(rawR));
    return 0;
  }

  /** Worker commits of read-through blocks land just after the reader got its bytes. */
  private static void awaitCached(FileSystem fs, String path) throws Exception {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (fs.getBlockLocations(path).stream().anyMatch(b -> b.locations().isEmpty())) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(path + " was not cached within 30 s of being read");
      }
      Thread.sleep(10);
    }
  }

  private static void write(FileSystem fs, String path, WriteType type, byte[] buf, long bytes) throws Exception {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withWriteType(type))) {
      long left = bytes;
      while (left > 0) {
        int n = (int) Math.min(buf.length, left);
        out.write(buf, 0, n);
        left -= n;
      }
    }
  }

  private static void print(PrintStream out, String op, long bytes, double strata, String baseline, double base) {
    out.println(String.format(Locale.ROOT,
        "bench op=%s bytes=%d strata_MBps=%.1f baseline=%s baseline_MBps=%.1f ratio=%.3f",
        op, bytes, strata, baseline, base, strata / base));
  }
}
