package io.strata.cli;

import com.sun.management.GarbageCollectionNotificationInfo;
import io.strata.client.ClientKeys;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.WriteType;
import io.strata.client.transfer.TransferClient;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.conf.ValueParser;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code strata bench memory}: the client's memory while it reads many files at once. It writes
 * {@code --files} files, opens them all, and reads them concurrently (one thread each, 64 KiB reads),
 * while it records the largest heap in use just after a garbage collection (the live heap: one collection
 * is forced while every stream is open and mid-file) and the largest direct memory in use (the JDK's
 * direct buffers and Netty's own). It prints one line:
 * {@code bench op=concurrent_read path=<p> files=<n> GBps=<x> heap_live_peak_MB=<h> direct_peak_MB=<d>
 * bound_MB=<b> within_bound=<true|false>}, where the bound ({@link #bound}) is what the client's
 * configuration lets the reads of that path hold, plus a fixed 64 MB for the client's own structures and
 * the bench's read buffers. Direct memory is the JDK's direct buffers plus what Netty's allocator holds
 * (pooled chunks included, in use or not).
 *
 * <p>Built per run; not thread-safe (it runs its own reader threads).
 */
@Command(name = "memory", description = "The client's live heap and direct memory while it reads many files at "
    + "once, against the bound its configuration allows.")
final class MemoryBench implements Callable<Integer> {
  private static final int READ_BYTES = 64 * 1024;
  private static final long FIXED_BYTES = 64L << 20;

  private final CliContext ctx;

  @Option(names = "--files", defaultValue = "100", description = "Files read at once (default ${DEFAULT-VALUE}).")
  int files;

  @Option(names = "--size", defaultValue = "16MB", description = "Bytes per file (default ${DEFAULT-VALUE}).")
  String size;

  @Option(names = "--path", defaultValue = "tcp", description = "Data path: tcp, uds (block transfers), tcp-grpc, "
      + "uds-grpc (streamed over gRPC) or short-circuit (default ${DEFAULT-VALUE}).")
  String path;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean helpRequested;

  MemoryBench(CliContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() throws Exception {
    long each = ValueParser.parseBytes(size);
    if (files < 1 || each < 1) {
      ctx.err().println("bench: --files and --size must be positive");
      return 1;
    }
    Map<String, String> overrides = switch (path) {
      case "tcp" -> Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "off",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "false");
      case "uds" -> Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "off",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "true");
      case "tcp-grpc" -> Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "off",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "false", ClientKeys.NETWORK_TRANSFER_ENABLED.name(), "false");
      case "uds-grpc" -> Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "off",
          ClientKeys.DATA_DOMAIN_SOCKET_ENABLED.name(), "true", ClientKeys.NETWORK_TRANSFER_ENABLED.name(), "false");
      case "short-circuit" -> Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "fd");
      default -> null;
    };
    if (overrides == null) {
      ctx.err().println("bench: --path must be tcp, uds, tcp-grpc, uds-grpc or short-circuit, not " + path);
      return 1;
    }
    StrataConf conf = ctx.conf().withAll(overrides);
    String root = "/.strata-bench-memory-" + ProcessHandle.current().pid();
    byte[] data = new byte[1 << 20];
    new Random(5).nextBytes(data);
    FileSystem fs = ctx.fs();
    try (FileSystem client = FileSystem.create(conf)) {
      for (int i = 0; i < files; i++) {
        try (FileOutStream out = client.createFile(root + "/f" + i, CreateFileOptions.defaults()
            .withWriteType(WriteType.MUST_CACHE))) {
          for (long left = each; left > 0; left -= data.length) {
            out.write(data, 0, (int) Math.min(data.length, left));
          }
        }
      }
      Peaks peaks = new Peaks();
      peaks.start();
      long t0 = System.nanoTime();
      try {
        readAll(client, root, each, peaks);
      } finally {
        peaks.stop();
      }
      double gbps = (double) files * each / 1e9 / ((System.nanoTime() - t0) / 1e9);
      long bound = bound(conf, path.equals("short-circuit"), files, fs.getWorkers().size());
      boolean within = peaks.heapLive.get() + peaks.direct.get() <= bound;
      ctx.out().println(String.format(Locale.ROOT, "bench op=concurrent_read path=%s files=%d GBps=%.4f "
          + "heap_live_peak_MB=%.1f direct_peak_MB=%.1f bound_MB=%.1f within_bound=%s", path, files, gbps,
          peaks.heapLive.get() / 1e6, peaks.direct.get() / 1e6, bound / 1e6, within));
      return 0;
    } finally {
      if (fs.exists(root)) {
        fs.delete(root, DeleteOptions.defaults().withRecursive(true));
      }
    }
  }

  /**
   * What the configuration lets the client hold while reading {@code streams} cached files at once from
   * {@code workers} workers, plus a fixed part; with the local page cache on, each stream also holds its page
   * buffer ({@code strata.user.client.cache.page.size}). Per way of reading:
   * <ul>
   *   <li>block transfers (tcp, uds: {@code strata.user.network.transfer.enabled}, the default): one
   *       connection per stream, each with its {@link TransferClient#BUFFER_BYTES} direct read buffer, and up
   *       to {@code strata.user.transfer.connections.idle.max} idle connections per worker keeping theirs;</li>
   *   <li>gRPC streams (transfers off): per stream its HTTP/2 flow-control window (bytes a worker may send
   *       before the stream asks for them; the transport holds them) and its prefetched chunks plus the one
   *       being consumed;</li>
   *   <li>short-circuit: per stream the JDK's temporary direct buffer of a heap {@code FileChannel} read (the
   *       size of the bench's reads), the bytes themselves stay in the page cache.</li>
   * </ul>
   * A closed transfer connection's buffer is freed by the garbage collector, not at close, so a client that
   * opens and closes connections all the time can pass the transfer bound until the next collection (the
   * JDK's {@code -XX:MaxDirectMemorySize} forces one); the bench's readers use one connection each.
   */
  static long bound(StrataConf conf, boolean shortCircuit, int streams, int workers) {
    long page = conf.get(ClientKeys.PAGE_CACHE_ENABLED) ? conf.get(ClientKeys.PAGE_CACHE_PAGE_SIZE) : 0;
    if (shortCircuit) {
      return streams * (READ_BYTES + page) + FIXED_BYTES;
    }
    if (conf.get(ClientKeys.NETWORK_TRANSFER_ENABLED)) {
      long idle = (long) conf.get(ClientKeys.TRANSFER_CONNECTIONS_IDLE_MAX) * workers;
      return (streams + idle) * TransferClient.BUFFER_BYTES + streams * page + FIXED_BYTES;
    }
    long chunk = conf.get(ClientKeys.STREAM_CHUNK_SIZE);
    long prefetch = conf.get(ClientKeys.READ_PREFETCH_CHUNKS);
    long window = conf.get(CommonKeys.NETWORK_FLOW_CONTROL_WINDOW);
    return streams * (window + (prefetch + 1) * chunk + page) + FIXED_BYTES;
  }

  /** Opens every file, reads a first piece of each (all streams open and mid-file), forces one GC, reads the rest. */
  private void readAll(FileSystem client, String root, long each, Peaks peaks) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(files);
    CountDownLatch started = new CountDownLatch(files);
    CountDownLatch measured = new CountDownLatch(1);
    try {
      List<Future<Long>> done = new ArrayList<>();
      for (int i = 0; i < files; i++) {
        String file = root + "/f" + i;
        done.add(pool.submit(() -> {
          byte[] buf = new byte[READ_BYTES];
          long got = 0;
          try (FileInStream in = client.openFile(file)) {
            long first = Math.min(each, 4L << 20);
            while (got < first) {
              int n = in.read(buf, 0, (int) Math.min(buf.length, first - got));
              if (n < 0) {
                break;
              }
              got += n;
            }
            started.countDown();
            measured.await(5, TimeUnit.MINUTES);
            for (int n; (n = in.read(buf)) > 0; ) {
              got += n;
            }
          } finally {
            started.countDown(); // a failed reader does not hold the others
          }
          return got;
        }));
      }
      if (!started.await(5, TimeUnit.MINUTES)) {
        throw new IllegalStateException("bench: the readers did not all start within 5 minutes");
      }
      System.gc(); // every stream open with its prefetch in flight: the live heap now
      // Read at once (a collection's notification comes later, on another thread, maybe after the run).
      peaks.heapLive.accumulateAndGet(ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(), Math::max);
      peaks.sample();
      measured.countDown();
      for (Future<Long> f : done) {
        long got = f.get(5, TimeUnit.MINUTES);
        if (got != each) {
          throw new IllegalStateException("bench: a reader got " + got + " bytes of " + each);
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** The largest live heap (after each collection) and direct memory seen; sampled every 10 ms. */
  private static final class Peaks {
    final AtomicLong heapLive = new AtomicLong();
    final AtomicLong direct = new AtomicLong();
    private final List<Runnable> unregister = new ArrayList<>();
    private final java.util.Set<String> heapPools = new java.util.HashSet<>();
    private volatile boolean running = true;
    private Thread sampler;

    void start() {
      for (java.lang.management.MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
        if (p.getType() == java.lang.management.MemoryType.HEAP) {
          heapPools.add(p.getName());
        }
      }
      NotificationListener l = (n, h) -> {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
          return;
        }
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
        long used = 0;
        // Non-heap pools (metaspace, code cache) are in the map too: count the heap's only.
        for (Map.Entry<String, MemoryUsage> u : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
          if (heapPools.contains(u.getKey())) {
            used += u.getValue().getUsed();
          }
        }
        heapLive.accumulateAndGet(used, Math::max);
      };
      for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
        if (gc instanceof NotificationEmitter e) {
          e.addNotificationListener(l, null, null);
          unregister.add(() -> {
            try {
              e.removeNotificationListener(l);
            } catch (javax.management.ListenerNotFoundException ignored) {
              // gone already
            }
          });
        }
      }
      sampler = new Thread(() -> {
        while (running) {
          sample();
          try {
            Thread.sleep(10);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "bench-memory-sampler");
      sampler.setDaemon(true);
      sampler.start();
    }

    void sample() {
      long d = 0;
      for (BufferPoolMXBean p : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
        if (p.getName().equals("direct")) {
          d += p.getMemoryUsed();
        }
      }
      long netty = io.netty.util.internal.PlatformDependent.usedDirectMemory();
      direct.accumulateAndGet(d + Math.max(0, netty), Math::max);
    }

    void stop() throws InterruptedException {
      running = false;
      sampler.join(1000);
      unregister.forEach(Runnable::run);
    }
  }
}
