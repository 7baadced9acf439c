package io.strata.cli;

import io.grpc.ManagedChannel;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.common.conf.CommonKeys;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.grpc.ServerTiming;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.ListStatusRequest;
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
 * beside baselines measured in the same run ({@link MetaBaselines}): the rate of a bare grpc-java unary
 * server (one trivial method on the transport thread, in a JVM of its own on a free loopback port) called
 * with as many threads, and the cost of one fsync in the master's journal dir (or a temp dir, said on
 * stderr). Each op is measured paired with the bare call ({@link #runPaired}): every client thread alternates
 * one bare call and one op, so both see the same machine load, JIT state and wake-up costs, and each line's
 * two rates are medians over {@code --rounds} rounds (this machine's speed drifts by 2x within a run, so a
 * bare figure taken before or after the op is not comparable). Both servers are warmed the same way, paired,
 * before the first line. One line per measurement:
 * {@code bench op=<op> threads=<n> entries=<n> ops_per_s=<x> p99_ms=<y> bare_unary_ops_per_s=<z>
 * ratio_to_bare=<x/z>}, create lines also {@code fsync_ms=<f> floor_ms=<g> ratio_to_floor=<r>} (see
 * {@link #floor}); create, getStatus and listStatus lines also
 * {@code master_ms=<m>}: the mean time one such op spends on the master (its calls' server times from the
 * {@link ServerTiming} trailers, measured in a second pass with raw stubs, so client and wire are left
 * out). {@code ping} is a Ping to the master: its RPC stack with no namespace work.
 *
 * <p>{@code create} is createFile plus close (an empty file: two round trips, create and complete,
 * as in HDFS, each waiting for one journal sync). Built per run; not thread-safe.
 */
@Command(name = "meta", description = "Metadata operation rates (create, getStatus, listStatus, rename, delete) "
    + "against a running master, with a bare-unary-RPC baseline.")
final class MetaBench implements Callable<Integer> {
  private final CliContext ctx;

  @Option(names = "--threads", defaultValue = "1,4,16", split = ",", description = "Client thread counts.")
  List<Integer> threads;

  @Option(names = "--files", defaultValue = "2000", description = "Files per measurement (default ${DEFAULT-VALUE}).")
  int files;

  @Option(names = "--warmup", defaultValue = "5000", description = "Creates made before the create measurement, "
      + "on files of their own, split over the threads (default ${DEFAULT-VALUE}).")
  int warmup;

  @Option(names = "--list-sizes", defaultValue = "10,1000,100000", split = ",",
      description = "Directory sizes for listStatus.")
  List<Integer> listSizes;

  @Option(names = "--journal-dir", description = "Dir of the fsync baseline (default: the master's journal dir "
      + "when it is on this host, else a temp dir).")
  java.nio.file.Path journalDir;

  @Option(names = "--rounds", defaultValue = "5", description = "Rounds per measurement; each line's rates are "
      + "the medians over them (default ${DEFAULT-VALUE}).")
  int rounds;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean helpRequested;

  /** Server times of the calls made through the timed stub (see {@link ServerTiming}). */
  private final java.util.concurrent.atomic.LongAdder masterNanos = new java.util.concurrent.atomic.LongAdder();

  MetaBench(CliContext ctx) {
    this.ctx = ctx;
  }

  /** One timed operation of thread {@code t}, number {@code i}. */
  @FunctionalInterface
  interface Op {
    void run(int t, int i) throws Exception;
  }

  private record Result(double opsPerSec, double p99Ms) {}

  /** An op's result and that of the bare calls interleaved with it. */
  private record Paired(Result op, Result bare) {}

  @Override
  public Integer call() throws Exception {
    if (files < 1 || rounds < 1 || threads.stream().anyMatch(t -> t < 1)) {
      ctx.err().println("bench: --files, --rounds and --threads must be positive");
      return 1;
    }
    FileSystem fs = ctx.fs();
    String root = "/.strata-bench-meta-" + ProcessHandle.current().pid();
    ManagedChannel ch = GrpcChannels.forAddress(ctx.conf().get(CommonKeys.MASTER_HOSTNAME),
        ctx.conf().get(CommonKeys.MASTER_RPC_PORT), 8 << 20);
    PrintStream out = ctx.out();
    java.nio.file.Path fsyncDir = fsyncDir();
    boolean temp = fsyncDir == null;
    if (temp) {
      fsyncDir = java.nio.file.Files.createTempDirectory("strata-bench-fsync");
    }
    ctx.err().println("bench: fsync baseline in " + fsyncDir + (temp ? " (a temp dir: the master's journal dir "
        + "is not on this host)" : " (the master's journal dir)"));
    double fsyncMs = MetaBaselines.fsyncMs(fsyncDir, 20);
    if (temp) {
      java.nio.file.Files.deleteIfExists(fsyncDir);
    }
    MetaBaselines bare = MetaBaselines.start();
    ctx.err().println("bench: bare unary server (pid " + bare.pid() + ") on 127.0.0.1:" + bare.port());
    ctx.err().println("bench: each op alternates with a bare call on every thread; each line's rates are medians "
        + "over " + rounds + " rounds");
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
        FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub timedStub =
            FileSystemMasterServiceGrpc.newBlockingStub(io.grpc.ClientInterceptors.intercept(ch,
                ServerTiming.clientInterceptor(masterNanos::add)));
        Op bareOp = (t, i) -> bare.bareCall();
        Op ping = (t, i) -> stub.ping(PingRequest.getDefaultInstance());
        // Warm up both servers' JITs the same way (the bare one starts cold in its own JVM, the master has
        // served only the set-up): 20,000 paired calls at least, then the namespace ops' own warm-ups below.
        runPaired(n, Math.max(per * 2, 20_000 / n), 1, bareOp, ping);
        print(out, "ping", n, 0, runPaired(n, per * 2, rounds, bareOp, ping), -1, -1);
        // MUST_CACHE: the figures are the namespace's own, without background persistence beside them.
        io.strata.client.options.CreateFileOptions mustCache = io.strata.client.options.CreateFileOptions
            .defaults().withWriteType(io.strata.client.options.WriteType.MUST_CACHE);
        // Creates warm up on files of their own first (the client's write path and the master's journal
        // writer are cold until here); a cold first pass measured the JIT, at a quarter of the warm rate.
        for (int t = 0; t < n; t++) {
          fs.createDirectory(base + "/warm" + t);
        }
        runPaired(n, Math.max(1, warmup / n), 1, bareOp,
            (t, i) -> fs.createFile(base + "/warm" + t + "/f" + i, mustCache).close());
        Paired create = runPaired(n, per, rounds, bareOp,
            (t, i) -> fs.createFile(base + "/w" + t + "/f" + i, mustCache).close());
        double createMaster = masterMs(n, per, (t, i) -> {
          String path = base + "/w" + t + "/m" + i;
          long id = timedStub.createFile(CreateFileRequest.newBuilder().setPath(path).setBlockSize(64L << 20)
              .setWriteType("MUST_CACHE").build()).getFile().getId();
          timedStub.completeFile(CompleteFileRequest.newBuilder().setPath(path).setFileId(id).build());
        });
        print(out, "create", n, 0, create, fsyncMs, createMaster);
        // Reads repeat freely: a warm-up pass, then twice as many as there are files.
        Op stat = (t, i) -> fs.getStatus(base + "/w" + t + "/f" + (i % per));
        runPaired(n, per, 1, bareOp, stat);
        Paired stats = runPaired(n, per * 2, rounds, bareOp, stat);
        double statMaster = masterMs(n, per, (t, i) -> timedStub.getStatus(GetStatusRequest.newBuilder()
            .setPath(base + "/w" + t + "/f" + i).setSyncIntervalMs(-1).build()));
        print(out, "getStatus", n, 0, stats, -1, statMaster);
        print(out, "rename", n, 0, runPaired(n, per, rounds, bareOp,
            (t, i) -> fs.rename(base + "/w" + t + "/f" + i, base + "/w" + t + "/g" + i)), -1, -1);
        print(out, "delete", n, 0, runPaired(n, per, rounds, bareOp,
            (t, i) -> fs.delete(base + "/w" + t + "/g" + i)), -1, -1);
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
          Paired list = runPaired(n, reps, rounds, bareOp, (t, i) -> {
            int[] count = {0};
            fs.iterateStatus(dir, io.strata.client.options.ListStatusOptions.defaults(), s -> count[0]++);
            if (count[0] != size) {
              throw new IllegalStateException("listed " + count[0] + " of " + size + " entries");
            }
          });
          ListStatusRequest listReq = ListStatusRequest.newBuilder().setPath(dir).setBatchSize(1000)
              .setSyncIntervalMs(-1).build();
          double listMaster = masterMs(n, reps, (t, i) -> timedStub.listStatus(listReq).forEachRemaining(r -> { }));
          print(out, "listStatus", n, size, list, -1, listMaster);
        }
      }
    } finally {
      bare.close();
      GrpcChannels.close(ch);
      if (fs.exists(root)) {
        fs.delete(root, DeleteOptions.defaults().withRecursive(true));
      }
    }
    return 0;
  }

  /** The master's journal dir when the configuration names one that exists on this host, else null. */
  private java.nio.file.Path fsyncDir() {
    if (journalDir != null) {
      return journalDir;
    }
    // The master's own keys (strata.master.journal.dir, strata.data.dir) resolved as the master does; the
    // client cannot import them (layering), so by name.
    java.nio.file.Path home = java.nio.file.Path.of(ctx.conf().get(CommonKeys.HOME));
    String set = ctx.conf().getRaw("strata.master.journal.dir");
    String data = ctx.conf().getRaw("strata.data.dir");
    java.nio.file.Path dir = set != null ? home.resolve(set) : home.resolve(data == null ? "data" : data)
        .resolve("journal");
    return java.nio.file.Files.isDirectory(dir) ? dir : null;
  }

  /**
   * The mean time on the master of one {@code op} (the sum of its calls' times, from the trailers
   * {@link ServerTiming} adds), over {@code perThread} ops on each of {@code n} threads.
   */
  private double masterMs(int n, int perThread, Op op) throws Exception {
    masterNanos.reset();
    run(n, perThread, op);
    return masterNanos.sum() / 1e6 / ((double) n * perThread);
  }

  private static void print(PrintStream out, String op, int threads, int entries, Paired p, double fsyncMs,
      double masterMs) {
    Result r = p.op();
    Result unary = p.bare();
    // Rounded once; the ratio is the quotient of the printed figures, so a reader can check it.
    double rate = round(r.opsPerSec(), r.opsPerSec() < 10 ? 4 : 1);
    double bare = round(unary.opsPerSec(), 1);
    // Listings of huge directories run well under one per second: keep their digits.
    String rateText = r.opsPerSec() < 10 ? String.format(Locale.ROOT, "%.4f", rate)
        : String.format(Locale.ROOT, "%.1f", rate);
    out.println(String.format(Locale.ROOT,
        "bench op=%s threads=%d entries=%d ops_per_s=%s p99_ms=%.3f bare_unary_ops_per_s=%.1f ratio_to_bare=%.5f%s",
        op, threads, entries, rateText, r.p99Ms(), bare, rate / bare,
        (fsyncMs < 0 ? "" : String.format(Locale.ROOT, " fsync_ms=%.3f", fsyncMs))
            + (masterMs < 0 ? "" : String.format(Locale.ROOT, " master_ms=%.3f", masterMs))
            + (fsyncMs < 0 ? "" : floor(threads, rate, bare, fsyncMs))));
    out.flush();
  }

  /**
   * A create's floor and the ratio to it: {@code floor_ms=<f> ratio_to_floor=<op_ms/f>}. The floor is two
   * bare round trips (create and complete, each at the bare rate of as many threads) plus two journal
   * syncs; {@code op_ms} is the mean time of one create on one thread ({@code threads / ops_per_s}). With
   * more threads than one the floor gives no credit for syncs shared by group commit, so it is only the
   * single-threaded line that measures the target.
   */
  private static String floor(int threads, double rate, double bare, double fsyncMs) {
    double floorMs = round(2 * threads * 1000.0 / bare + 2 * fsyncMs, 3);
    double opMs = threads * 1000.0 / rate;
    return String.format(Locale.ROOT, " floor_ms=%.3f ratio_to_floor=%.3f", floorMs, opMs / floorMs);
  }

  private static double round(double v, int digits) {
    return java.math.BigDecimal.valueOf(v).setScale(digits, java.math.RoundingMode.HALF_UP).doubleValue();
  }

  /**
   * Runs {@code perThread} ops on each of {@code n} threads, each thread alternating one {@code bare} call
   * and one op (which goes first alternates too), in {@code rounds} rounds (op numbers 0 to perThread - 1
   * split between them in order). A round's rate of each is the sum over threads of calls over the time
   * spent in them (so the other's calls do not count); the result is each one's median round rate and the
   * p99 of all its latencies.
   */
  private static Paired runPaired(int n, int perThread, int rounds, Op bare, Op op) throws Exception {
    int r = Math.max(1, Math.min(rounds, perThread));
    List<Double> opRates = new ArrayList<>();
    List<Double> bareRates = new ArrayList<>();
    long[] opAll = new long[n * perThread];
    long[] bareAll = new long[n * perThread];
    int k = 0;
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      for (int round = 0; round < r; round++) {
        int from = (int) ((long) perThread * round / r);
        int to = (int) ((long) perThread * (round + 1) / r);
        List<Future<long[][]>> futures = new ArrayList<>();
        for (int t = 0; t < n; t++) {
          int thread = t;
          futures.add(pool.submit(() -> {
            long[] o = new long[to - from];
            long[] b = new long[to - from];
            for (int i = from; i < to; i++) {
              if ((i & 1) == 0) {
                b[i - from] = timed(bare, thread, i);
                o[i - from] = timed(op, thread, i);
              } else {
                o[i - from] = timed(op, thread, i);
                b[i - from] = timed(bare, thread, i);
              }
            }
            return new long[][] {o, b};
          }));
        }
        double opRate = 0;
        double bareRate = 0;
        for (Future<long[][]> f : futures) {
          long[][] lat = f.get();
          opRate += lat[0].length * 1e9 / Math.max(1, Arrays.stream(lat[0]).sum());
          bareRate += lat[1].length * 1e9 / Math.max(1, Arrays.stream(lat[1]).sum());
          System.arraycopy(lat[0], 0, opAll, k, lat[0].length);
          System.arraycopy(lat[1], 0, bareAll, k, lat[1].length);
          k += lat[0].length;
        }
        opRates.add(opRate);
        bareRates.add(bareRate);
      }
    } finally {
      pool.shutdownNow();
    }
    return new Paired(new Result(BenchCommand.Io.median(opRates), p99Ms(opAll)),
        new Result(BenchCommand.Io.median(bareRates), p99Ms(bareAll)));
  }

  private static long timed(Op op, int t, int i) throws Exception {
    long s = System.nanoTime();
    op.run(t, i);
    return System.nanoTime() - s;
  }

  private static double p99Ms(long[] lat) {
    long[] sorted = lat.clone();
    Arrays.sort(sorted);
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(sorted.length * 0.99) - 1)] / 1e6;
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
      return new Result(all.length / secs, p99Ms(all));
    } finally {
      pool.shutdownNow();
    }
  }
}
