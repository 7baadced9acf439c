package io.strata.cli;

import io.strata.client.ClientKeys;
import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.client.StorageDirInfo;
import io.strata.client.WorkerInfo;
import io.strata.client.options.DeleteOptions;
import io.strata.common.conf.StrataConf;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * The measurements of {@code strata bench io}: every data path of {@link #PATHS} (a name and the client
 * settings that make a client take it), each op (sequential write, sequential read, 1 MiB random
 * positioned reads), for 1..N client threads, against baselines measured in the same run with the same
 * thread count ({@link IoBaselines}): a raw file write and read in the tier's dir for short-circuit, a raw
 * loopback stream over the same kind of socket for the streaming paths. With {@code t} threads every
 * measurement moves the file size in total: {@code t} files (or streams) of {@code size / t} bytes, one
 * per thread. One line per measurement:
 * {@code bench path=<p> op=<op> threads=<n> GBps=<x> baseline=<name> baseline_GBps=<y> ratio=<x/y>};
 * each figure is the median of the iterations. A path this client cannot take (no worker on this host,
 * no socket) is reported on stderr and left out, never printed under a name it did not measure.
 *
 * <p>Built per run; not thread-safe (it runs its own worker threads).
 */
final class IoBench {
  static final int CHUNK = 1 << 20;
  private static final long WARM_UP_BYTES = 128L << 20;

  /** An op a path is measured with. */
  enum Op { WRITE, READ, PREAD;

    String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** The file API a path is measured through. */
  enum Api { STRATA, HADOOP }

  /**
   * One data path: the client settings that make a client take it, the ops it is measured with, the
   * socket baseline of its streaming lines (null: its lines compare with the raw file baselines), and the
   * API its files are written and read through.
   */
  record DataPath(String name, Map<String, String> overrides, List<Op> ops, String socketBaseline, Api api) {
    DataPath(String name, Map<String, String> overrides, List<Op> ops, String socketBaseline) {
      this(name, overrides, ops, socketBaseline, Api.STRATA);
    }
  }

  /** The client settings of the short-circuit path (descriptor passing, domain-socket streaming off). */
  private static final Map<String, String> SHORT_CIRCUIT = Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "fd",
      ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "false");

  /**
   * The paths, in print order. uds and tcp read over the block transfer protocol (the worker sends the
   * block file with sendfile) and write over gRPC; tcp-plain is the TCP path with every read and write over
   * gRPC with protobuf's own marshallers on the client and the worker's heap read path
   * (strata.user.network.transfer.enabled=false, strata.user.network.zerocopy.enabled=false), so the run
   * compares zero-copy with the plain marshaller. hadoop is the short-circuit path through Hadoop's
   * FileSystem API over strata:// ({@link HadoopIoClient}): compared with the short-circuit lines of the
   * same run it shows what the adapter costs.
   */
  static final List<DataPath> PATHS = List.of(
      new DataPath("short-circuit", SHORT_CIRCUIT, List.of(Op.WRITE, Op.READ, Op.PREAD), null),
      new DataPath("uds", Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "off",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "true"), List.of(Op.WRITE, Op.READ, Op.PREAD),
          IoBaselines.UDS_STREAM),
      new DataPath("tcp", Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "off",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "false"), List.of(Op.WRITE, Op.READ, Op.PREAD),
          IoBaselines.TCP_STREAM),
      new DataPath("tcp-plain", Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "off",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "false",
          ClientKeys.NETWORK_TRANSFER_ENABLED.name(), "false",
          ClientKeys.NETWORK_ZEROCOPY_ENABLED.name(), "false"), List.of(Op.WRITE, Op.READ, Op.PREAD),
          IoBaselines.TCP_STREAM),
      new DataPath("hadoop", SHORT_CIRCUIT, List.of(Op.WRITE, Op.READ, Op.PREAD), null, Api.HADOOP));

  /**
   * Paths measured only when named in {@code --paths}: reads with CRC32C verification off, to show what
   * checksums cost (compare with the short-circuit and tcp read lines of the same run), and reads streamed
   * over gRPC with the zero-copy marshallers instead of the block transfer protocol (tcp-grpc, uds-grpc), and
   * short-circuit reads without the next block opened ahead (short-circuit-noahead), and short-circuit reads
   * of the block file's channel (short-circuit-channel) or of its memory mapping (short-circuit-mmap) instead of
   * the way the client measured faster (strata.user.shortcircuit.read.mmap=auto).
   */
  static final List<DataPath> OPTIONAL_PATHS = List.of(
      new DataPath("tcp-grpc", Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "off",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "false",
          ClientKeys.NETWORK_TRANSFER_ENABLED.name(), "false"), List.of(Op.READ, Op.PREAD), IoBaselines.TCP_STREAM),
      new DataPath("uds-grpc", Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "off",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "true",
          ClientKeys.NETWORK_TRANSFER_ENABLED.name(), "false"), List.of(Op.READ, Op.PREAD), IoBaselines.UDS_STREAM),
      new DataPath("short-circuit-noahead", Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "fd",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "false",
          ClientKeys.SHORT_CIRCUIT_OPEN_AHEAD.name(), "false"), List.of(Op.READ), null),
      new DataPath("short-circuit-nocrc", Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "fd",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "false",
          ClientKeys.SHORT_CIRCUIT_CHECKSUM_VERIFY.name(), "false"), List.of(Op.READ), null),
      new DataPath("short-circuit-channel", Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "fd",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "false",
          ClientKeys.SHORT_CIRCUIT_READ_MMAP.name(), "false"), List.of(Op.READ, Op.PREAD), null),
      new DataPath("short-circuit-mmap", Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "fd",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "false",
          ClientKeys.SHORT_CIRCUIT_READ_MMAP.name(), "true"), List.of(Op.READ, Op.PREAD), null),
      new DataPath("tcp-nocrc", Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "off",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "false",
          ClientKeys.READ_CHECKSUM_VERIFY.name(), "false"), List.of(Op.READ), IoBaselines.TCP_STREAM));

  private final StrataConf conf;
  private final FileSystem fs;
  private final PrintStream out;
  private final PrintStream err;
  private final long bytes;
  private final long blockSize;
  private final int iterations;
  private final byte[] buf = new byte[CHUNK];
  private final String root = "/.strata-bench/io-" + ProcessHandle.current().pid();

  IoBench(StrataConf conf, FileSystem fs, PrintStream out, PrintStream err, long bytes, long blockSize,
      int iterations) {
    this.conf = conf;
    this.fs = fs;
    this.out = out;
    this.err = err;
    this.bytes = bytes;
    this.blockSize = blockSize;
    this.iterations = iterations;
    new Random(1).nextBytes(buf);
  }

  /** Runs these paths with 1..maxThreads threads; rawDir null picks the local worker's top tier's dir. */
  void run(List<DataPath> paths, int maxThreads, Path rawDir) throws Exception {
    Path dir = rawDir != null ? rawDir : defaultRawDir();
    List<DataPath> usable = new ArrayList<>();
    List<IoClient> clients = new ArrayList<>();
    try {
      for (DataPath p : paths) {
        IoClient client;
        try {
          client = p.api() == Api.HADOOP ? HadoopIoClient.open(conf, p.overrides())
              : IoClient.of(FileSystem.create(conf.withAll(p.overrides())));
        } catch (UnsupportedOperationException e) {
          err.println("bench: path " + p.name() + " left out: " + e.getMessage());
          continue;
        }
        String why = unavailable(p, client);
        if (why == null) {
          usable.add(p);
          clients.add(client);
        } else {
          err.println("bench: path " + p.name() + " left out: " + why);
          client.close();
        }
      }
      // One untimed pass per path first, so no path's figure pays for the JIT's first compile of its code.
      for (int i = 0; i < usable.size(); i++) {
        warmUp(clients.get(i), usable.get(i).name());
      }
      for (int t = 1; t <= maxThreads; t++) {
        // Baselines and paths take turns, iteration by iteration: on a shared machine the load changes
        // over seconds, and a ratio means most when both figures saw the same load.
        List<IoBaselines> bases = new ArrayList<>();
        List<Rates> rates = new ArrayList<>();
        for (int i = 0; i < usable.size(); i++) {
          rates.add(new Rates());
        }
        for (int it = 0; it < iterations; it++) {
          bases.add(IoBaselines.measure(dir, buf, bytes, t, 1));
          for (int i = 0; i < usable.size(); i++) {
            iteration(usable.get(i), clients.get(i), t, it, rates.get(i));
          }
        }
        IoBaselines base = IoBaselines.medianOf(bases);
        for (int i = 0; i < usable.size(); i++) {
          print(usable.get(i), t, rates.get(i), base);
        }
      }
    } finally {
      for (IoClient c : clients) {
        c.close();
      }
      if (fs.exists("/.strata-bench")) {
        fs.delete("/.strata-bench", DeleteOptions.defaults().withRecursive(true));
      }
    }
  }

  /** One path's figures of every iteration, per op. */
  private static final class Rates {
    final Map<Op, List<Double>> byOp = new java.util.EnumMap<>(Op.class);

    void add(Op op, double gbps) {
      byOp.computeIfAbsent(op, o -> new ArrayList<>()).add(gbps);
    }
  }

  private void iteration(DataPath p, IoClient client, int threads, int it, Rates rates) throws Exception {
    long each = Math.max(1, bytes / threads);
    long usedBefore = usedBytes();
    List<String> files = new ArrayList<>();
    for (int k = 0; k < threads; k++) {
      files.add(root + "/" + p.name() + "-t" + threads + "-i" + it + "-" + k);
    }
    // Paths without a write line still need the files: written by the same client, untimed.
    rates.add(Op.WRITE, parallel(threads, k -> write(client, files.get(k), each)));
    rates.add(Op.READ, parallel(threads, k -> read(client, files.get(k), each)));
    rates.add(Op.PREAD, parallel(threads, k -> pread(client, files.get(k), each, k)));
    fs.delete(root, DeleteOptions.defaults().withRecursive(true));
    awaitFreed(usedBefore + blockSize);
  }

  private void print(DataPath p, int threads, Rates rates, IoBaselines base) {
    for (Op op : p.ops()) {
      String baseline = p.socketBaseline() != null ? p.socketBaseline()
          : op == Op.WRITE ? IoBaselines.FILE_WRITE : IoBaselines.FILE_READ;
      line(out, p.name(), op.label(), threads, IoBaselines.median(rates.byOp.get(op)), baseline,
          base.gbps(baseline));
    }
  }

  private void warmUp(IoClient client, String name) throws IOException {
    String path = root + "/warm-up-" + name;
    long length = Math.min(bytes, WARM_UP_BYTES);
    write(client, path, length);
    read(client, path, length);
    pread(client, path, length, 0);
    fs.delete(path);
  }

  /** The line format; GB/s are 10^9 bytes a second. */
  static void line(PrintStream out, String path, String op, int threads, double gbps, String baseline,
      double baseGbps) {
    out.println(String.format(Locale.ROOT,
        "bench path=%s op=%s threads=%d GBps=%.4f baseline=%s baseline_GBps=%.4f ratio=%.3f",
        path, op, threads, gbps, baseline, baseGbps, gbps / baseGbps));
  }

  @FunctionalInterface
  interface Task {
    void run(int k) throws Exception;
  }

  /** GB/s of {@code threads} tasks of {@code bytes / threads} each, run at once. */
  private double parallel(int threads, Task task) throws Exception {
    long each = Math.max(1, bytes / threads);
    return IoBaselines.parallel(threads, each, task);
  }

  private void write(IoClient client, String path, long length) throws IOException {
    try (OutputStream o = client.create(path, blockSize)) {
      long left = length;
      while (left > 0) {
        int n = (int) Math.min(buf.length, left);
        o.write(buf, 0, n);
        left -= n;
      }
    }
  }

  private static void read(IoClient client, String path, long length) throws IOException {
    byte[] r = new byte[CHUNK];
    long got = 0;
    try (IoClient.Input in = client.open(path)) {
      for (int n; (n = in.read(r)) >= 0; ) {
        got += n;
      }
    }
    check(path, got, length);
  }

  /** As many random 1 MiB positioned reads as cover the file's length once. */
  private static void pread(IoClient client, String path, long length, int seed) throws IOException {
    byte[] r = new byte[CHUNK];
    Random random = new Random(seed);
    int len = (int) Math.min(CHUNK, length);
    long got = 0;
    try (IoClient.Input in = client.open(path)) {
      while (got < length) {
        long pos = length == len ? 0 : (long) (random.nextDouble() * (length - len));
        in.readFully(pos, r, 0, len);
        got += len;
      }
    }
  }

  private static void check(String path, long got, long want) throws IOException {
    if (got != want) {
      throw new IOException("bench: read " + got + " bytes of " + path + ", expected " + want);
    }
  }

  /** Why this client would not take the path, or null: a probe file must go the path's way. */
  private String unavailable(DataPath p, IoClient api) throws IOException {
    String probe = root + "/probe-" + p.name();
    FileSystem client = api.strata();
    write(api, probe, 1);
    boolean shortCircuit = "fd".equals(p.overrides().get(ClientKeys.SHORT_CIRCUIT_MODE.name()));
    try (FileInStream in = client.openFile(probe)) {
      in.read();
      if (shortCircuit && in.shortCircuit().opens() == 0) {
        return "no block was read short-circuit " + in.shortCircuit().fallbackReasons();
      }
      if (p.ops().contains(Op.WRITE) && shortCircuit
          && in.shortCircuit().writesCreated() == 0) {
        return "no block was written short-circuit " + in.shortCircuit().fallbackReasons();
      }
    } finally {
      fs.delete(probe);
    }
    boolean wantsSocket = "true".equals(p.overrides().get(ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name()));
    if (wantsSocket && !client.domainSocketFallbackReasons().isEmpty()) {
      return "the client streams over TCP: " + client.domainSocketFallbackReasons();
    }
    return null;
  }

  /** The parent of the top tier's first dir of a worker on this host (the same file system), else /dev/shm. */
  private Path defaultRawDir() throws IOException {
    String host = conf.get(ClientKeys.HOSTNAME);
    for (WorkerInfo w : fs.getWorkers()) {
      if (!w.address().host().equals(host)) {
        continue;
      }
      for (StorageDirInfo d : w.dirs()) {
        Path parent = Path.of(d.path()).toAbsolutePath().getParent();
        if (d.tierOrdinal() == 0 && parent != null && Files.isWritable(parent)) {
          return parent;
        }
      }
    }
    return Path.of("/dev/shm");
  }

  private long usedBytes() throws IOException {
    long used = 0;
    for (WorkerInfo w : fs.getWorkers()) {
      used += w.usedBytes();
    }
    return used;
  }

  /** Waits (bounded) until the workers freed a deleted iteration's blocks, so the next one has room. */
  private void awaitFreed(long target) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (usedBytes() > target && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
  }
}
