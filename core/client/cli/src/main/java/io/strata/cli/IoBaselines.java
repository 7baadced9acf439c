package io.strata.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The baselines of {@code strata bench io} for one thread count, measured without Strata in the same
 * run: {@code threads} raw files of {@code size / threads} bytes written and read with FileChannel in one
 * dir (the tier's file system), and {@code threads} loopback streams of as many bytes over TCP and over a
 * Unix domain socket (SocketChannel, 1 MiB direct buffers on both ends: the most a socket gives a Java
 * program). Each figure is the median of the iterations, in GB/s (10^9 bytes a second).
 *
 * <p>Immutable once measured; {@link #measure} runs its own threads.
 */
final class IoBaselines {
  static final String FILE_READ = "raw_file_read";
  static final String FILE_WRITE = "raw_file_write";
  static final String TCP_STREAM = "raw_tcp_stream";
  static final String UDS_STREAM = "raw_uds_stream";

  private final Map<String, Double> gbps;

  private IoBaselines(Map<String, Double> gbps) {
    this.gbps = gbps;
  }

  double gbps(String baseline) {
    Double v = gbps.get(baseline);
    if (v == null) {
      throw new IllegalArgumentException("No baseline named " + baseline);
    }
    return v;
  }

  static IoBaselines measure(Path dir, byte[] buf, long bytes, int threads, int iterations) throws Exception {
    long each = Math.max(1, bytes / threads);
    List<Double> fw = new ArrayList<>();
    List<Double> fr = new ArrayList<>();
    List<Double> tcp = new ArrayList<>();
    List<Double> uds = new ArrayList<>();
    String prefix = "strata-bench-raw-" + ProcessHandle.current().pid() + "-";
    try {
      for (int i = 0; i < iterations; i++) {
        fw.add(parallel(threads, each, k -> BenchCommand.Io.rawWrite(dir.resolve(prefix + k), buf, each)));
        fr.add(parallel(threads, each, k -> BenchCommand.Io.rawRead(dir.resolve(prefix + k))));
        for (int k = 0; k < threads; k++) {
          Files.deleteIfExists(dir.resolve(prefix + k));
        }
        tcp.add(socketStreams(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0),
            StandardProtocolFamily.INET, threads, each));
        Path sock = dir.resolve(prefix + "uds.sock");
        Files.deleteIfExists(sock);
        try {
          uds.add(socketStreams(UnixDomainSocketAddress.of(sock), StandardProtocolFamily.UNIX, threads, each));
        } finally {
          Files.deleteIfExists(sock);
        }
      }
    } finally {
      for (int k = 0; k < threads; k++) {
        Files.deleteIfExists(dir.resolve(prefix + k));
      }
    }
    return new IoBaselines(Map.of(FILE_WRITE, median(fw), FILE_READ, median(fr), TCP_STREAM, median(tcp),
        UDS_STREAM, median(uds)));
  }

  /** Each baseline's median over several measurements. */
  static IoBaselines medianOf(List<IoBaselines> runs) {
    Map<String, Double> m = new java.util.HashMap<>();
    for (String name : runs.get(0).gbps.keySet()) {
      m.put(name, median(runs.stream().map(r -> r.gbps.get(name)).toList()));
    }
    return new IoBaselines(Map.copyOf(m));
  }

  static double median(List<Double> v) {
    return BenchCommand.Io.median(v);
  }

  /** GB/s of {@code threads} tasks moving {@code each} bytes apiece, started together. */
  static double parallel(int threads, long each, IoBench.Task task) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "bench-io");
      t.setDaemon(true);
      return t;
    });
    try {
      CountDownLatch go = new CountDownLatch(1);
      CountDownLatch ready = new CountDownLatch(threads);
      List<Future<?>> done = new ArrayList<>();
      for (int k = 0; k < threads; k++) {
        int n = k;
        done.add(pool.submit(() -> {
          ready.countDown();
          go.await();
          task.run(n);
          return null;
        }));
      }
      ready.await();
      long t0 = System.nanoTime();
      go.countDown();
      for (Future<?> f : done) {
        f.get();
      }
      double s = (System.nanoTime() - t0) / 1e9;
      return threads * (double) each / 1e9 / s;
    } finally {
      pool.shutdownNow();
    }
  }

  /** GB/s of {@code threads} loopback streams of {@code each} bytes over one kind of socket. */
  private static double socketStreams(SocketAddress bindTo, StandardProtocolFamily family, int threads, long each)
      throws Exception {
    try (ServerSocketChannel server = ServerSocketChannel.open(family)) {
      server.bind(bindTo, threads);
      SocketAddress at = server.getLocalAddress();
      ExecutorService readers = Executors.newFixedThreadPool(threads, r -> {
        Thread t = new Thread(r, "bench-socket-reader");
        t.setDaemon(true);
        return t;
      });
      try {
        List<Future<?>> drained = new ArrayList<>();
        for (int k = 0; k < threads; k++) {
          drained.add(readers.submit(() -> {
            ByteBuffer b = ByteBuffer.allocateDirect(IoBench.CHUNK);
            try (SocketChannel s = server.accept()) {
              while (s.read(b) >= 0) {
                b.clear();
              }
            }
            return null;
          }));
        }
        // Timed until the readers have drained every byte, not just until the writers handed them over.
        long t0 = System.nanoTime();
        parallel(threads, each, k -> {
          ByteBuffer b = ByteBuffer.allocateDirect(IoBench.CHUNK);
          try (SocketChannel s = SocketChannel.open(family)) {
            s.connect(at);
            long left = each;
            while (left > 0) {
              b.clear().limit((int) Math.min(b.capacity(), left));
              while (b.hasRemaining()) {
                left -= s.write(b);
              }
            }
          }
        });
        for (Future<?> f : drained) {
          f.get();
        }
        return threads * (double) each / 1e9 / ((System.nanoTime() - t0) / 1e9);
      } finally {
        readers.shutdownNow();
      }
    }
  }
}
