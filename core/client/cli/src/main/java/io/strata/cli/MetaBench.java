package io.strata.cli;

import io.grpc.ManagedChannel;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.common.conf.CommonKeys;
import io.strata.common.grpc.GrpcChannels;
import io.strata.proto.FileSystemMasterServiceGrpc;
import io.strata.proto.PingRequest;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code strata bench meta}: metadata operation rates against a running master with its journal on,
 * beside the rate of a bare gRPC unary call (empty request and reply) to the same master from the same
 * process: the limit of our own RPC stack, measured in the same run. One line per measurement:
 * {@code bench op=<op> threads=<n> entries=<n> ops_per_s=<x> p99_ms=<y> baseline_unary_ops_per_s=<z> ratio=<x/z>}.
 *
 * <p>{@code create} is createFile plus close (an empty file: two round trips, create and complete,
 * as in HDFS). Built per run; not thread-safe.
 */
@Command(name = "meta", description = "Metadata operation rates (create, getStatus, listStatus, rename, delete) "
    + "against a running master, with a bare-unary-RPC baseline.")
final class MetaBench implements Callable<Integer> {
  private final CliContext ctx;

  @Option(names = "--threads", defaultValue = "1,4,16", split = ",", description = "Client thread counts.")
  List<Integer> threads;

  @Option(names = "--files", defaultValue = "2000", description = "Files per measurement (default ${DEFAULT-VALUE}).")
  int files;

  @Option(names = "--list-sizes", defaultValue = "10,1000,100000", split = ",",
      description = "Directory sizes for listStatus.")
  List<Integer> listSizes;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean helpRequested;

  MetaBench(CliContext ctx) {
    this.ctx = ctx;
  }

  /** One timed operation of thread {@code t}, number {@code i}. */
  @FunctionalInterface
  interface Op {
    void run(int t, int i) throws Exception;
  }

  private record Result(double opsPerSec, double p99Ms) {}

  @Override
  public Integer call() throws Exception {
    if (files < 1 || threads.stream().anyMatch(t -> t < 1)) {
      ctx.err().println("bench: --files and --threads must be positive");
      return 1;
    }
    FileSystem fs = ctx.fs();
    String root = "/.strata-bench-meta-" + ProcessHandle.current().pid();
    ManagedChannel ch = GrpcChannels.forAddress(ctx.conf().get(CommonKeys.MASTER_HOSTNAME),
        ctx.conf().get(CommonKeys.MASTER_RPC_PORT), 8 << 20);
    PrintStream out = ctx.out();
    try {
      fs.createDirectory(root, CreateDirectoryOptions.defaults().withRecursive(true));
      for (int n : threads) {
        int per = Math.max(1, files / n);
        String base = root + "/t" + n;
        for (int t = 0; t < n; t++) {
          fs.createDirectory(base + "/w" + t, CreateDirectoryOptions.defaults().withRecursive(true));
        }
        FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub stub =
            FileSystemMasterServiceGrpc.newBlockingStub(ch);
        run(n, Math.min(per * 2, 20_000), (t, i) -> stub.ping(PingRequest.getDefaultInstance())); // warm up
        Result unary = run(n, per * 2, (t, i) -> stub.ping(PingRequest.getDefaultInstance()));
        // MUST_CACHE: the figures are the namespace's own, without background persistence beside them.
        Result create = run(n, per, (t, i) -> fs.createFile(base + "/w" + t + "/f" + i,
            io.strata.client.options.CreateFileOptions.defaults()
                .withWriteType(io.strata.client.options.WriteType.MUST_CACHE)).close());
        Result stat = run(n, per, (t, i) -> fs.getStatus(base + "/w" + t + "/f" + i));
        Result rename = run(n, per, (t, i) -> fs.rename(base + "/w" + t + "/f" + i, base + "/w" + t + "/g" + i));
        Result delete = run(n, per, (t, i) -> fs.delete(base + "/w" + t + "/g" + i));
        print(out, "create", n, 0, create, unary);
        print(out, "getStatus", n, 0, stat, unary);
        print(out, "rename", n, 0, rename, unary);
        print(out, "delete", n, 0, delete, unary);
        for (int size : listSizes) {
          String dir = root + "/list" + size;
          if (!fs.exists(dir)) {
            fs.createDirectory(dir);
            int fill = Math.max(1, Math.min(16, size / 100));
            run(fill, (size + fill - 1) / fill, (t, i) -> {
              int k = t * ((size + fill - 1) / fill) + i;
              if (k < size) {
                fs.createDirectory(dir + "/e" + k);
              }
            });
          }
          int reps = Math.max(1, Math.min(200, 2_000_000 / Math.max(1, size)) / n);
          Result list = run(n, reps, (t, i) -> {
            int[] count = {0};
            fs.iterateStatus(dir, io.strata.client.options.ListStatusOptions.defaults(), s -> count[0]++);
            if (count[0] != size) {
              throw new IllegalStateException("listed " + count[0] + " of " + size + " entries");
            }
          });
          print(out, "listStatus", n, size, list, unary);
        }
      }
    } finally {
      GrpcChannels.close(ch);
      if (fs.exists(root)) {
        fs.delete(root, DeleteOptions.defaults().withRecursive(true));
      }
    }
    return 0;
  }

  private static void print(PrintStream out, String op, int threads, int entries, Result r, Result unary) {
    // Listings of huge directories run well under one per second: keep their digits.
    String rate = r.opsPerSec() < 10 ? String.format(Locale.ROOT, "%.4f", r.opsPerSec())
        : String.format(Locale.ROOT, "%.1f", r.opsPerSec());
    out.println(String.format(Locale.ROOT,
        "bench op=%s threads=%d entries=%d ops_per_s=%s p99_ms=%.3f baseline_unary_ops_per_s=%.1f ratio=%.5f",
        op, threads, entries, rate, r.p99Ms(), unary.opsPerSec(), r.opsPerSec() / unary.opsPerSec()));
    out.flush();
  }

  /** Runs {@code perThread} ops on each of {@code n} threads; returns the aggregate rate and p99 latency. */
  private static Result run(int n, int perThread, Op op) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      List<Future<long[]>> futures = new ArrayList<>();
      long t0 = System.nanoTime();
      for (int t = 0; t < n; t++) {
        int thread = t;
        futures.add(pool.submit(() -> {
          long[] lat = new long[perThread];
          for (int i = 0; i < perThread; i++) {
            long s = System.nanoTime();
            op.run(thread, i);
            lat[i] = System.nanoTime() - s;
          }
          return lat;
        }));
      }
      long[] all = new long[n * perThread];
      int k = 0;
      for (Future<long[]> f : futures) {
        long[] lat = f.get();
        System.arraycopy(lat, 0, all, k, lat.length);
        k += lat.length;
      }
      double secs = (System.nanoTime() - t0) / 1e9;
      Arrays.sort(all);
      double p99 = all[Math.min(all.length - 1, (int) Math.ceil(all.length * 0.99) - 1)] / 1e6;
      return new Result(all.length / secs, p99);
    } finally {
      pool.shutdownNow();
    }
  }
}
