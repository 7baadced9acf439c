package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.BlockLocation;
import io.strata.client.ClientKeys;
import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.FileSystemContext;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The client's bounded pool of worker channels on a real cluster of four workers: files whose blocks are
 * spread round robin over all four are read by clients allowed fewer channels. The bound holds, evicted
 * channels are reopened, idle ones close, and a stream in flight on a channel is never cut by eviction.
 */
class WorkerChannelPoolIntegrationTest {
  private static final int BLOCK = 256 * 1024;
  private static final int FILES = 4;
  private static final byte[][] DATA = new byte[FILES][4 * BLOCK];
  private static LocalStrataCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(4).build().start();
    cluster.waitForWorkers(4, 30_000);
    Random random = new Random(5);
    StrataConf conf = readerConf(64, "10min").with(ClientKeys.WRITE_LOCATION_POLICY, "ROUND_ROBIN");
    try (FileSystem writer = FileSystem.create(conf)) {
      for (int f = 0; f < FILES; f++) {
        random.nextBytes(DATA[f]);
        try (FileOutStream out = writer.createFile("/pool-" + f, CreateFileOptions.defaults().withBlockSize(BLOCK)
            .withWriteType(WriteType.MUST_CACHE))) {
          out.write(DATA[f]);
        }
      }
      Set<Integer> workers = new HashSet<>();
      for (int f = 0; f < FILES; f++) {
        for (FileBlockInfo b : writer.getBlockLocations("/pool-" + f)) {
          for (BlockLocation l : b.locations()) {
            workers.add(l.address().rpcPort());
          }
        }
      }
      assertThat(workers).as("blocks spread over every worker").hasSize(4);
    }
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  /** Streams over gRPC only (no short-circuit), in small chunks one at a time, so a block read stays open. */
  private static StrataConf readerConf(int maxChannels, String idle) {
    return cluster.clientConf().withAll(Map.of(ClientKeys.SHORT_CIRCUIT_MODE.name(), "off",
        ClientKeys.NETWORK_TRANSFER_ENABLED.name(), "false", // reads over gRPC: the channel pool is what is tested
        ClientKeys.PASSIVE_CACHE_ENABLED.name(), "false",
        ClientKeys.STREAM_CHUNK_SIZE.name(), "4KB",
        ClientKeys.READ_PREFETCH_CHUNKS.name(), "1",
        ClientKeys.WORKER_CHANNELS_MAX.name(), Integer.toString(maxChannels),
        ClientKeys.WORKER_CHANNEL_IDLE_TIMEOUT.name(), idle));
  }

  private static byte[] readAll(FileSystem fs, String path, int length) throws IOException {
    byte[] got = new byte[length];
    try (FileInStream in = fs.openFile(path)) {
      in.readFully(0, got, 0, length);
    }
    return got;
  }

  /** Fills {@code buf} with sequential reads (the stream's own position, not positioned reads). */
  private static void readSequentially(FileInStream in, byte[] buf) throws IOException {
    int off = 0;
    while (off < buf.length) {
      int n = in.read(buf, off, buf.length - off);
      assertThat(n).as("bytes before the end").isPositive();
      off += n;
    }
  }

  /**
   * A worker that refused a connection (stopped) and is back on its port is read from at once: the pooled
   * channel whose connect failed, which gRPC would keep failing calls on for its reconnect backoff (a second,
   * growing to minutes), is replaced at the next call. The block lives on that worker alone (MUST_CACHE),
   * kept in its tier dir across the restart.
   */
  @Test
  void workerBackOnItsPort_isReadFromAtOnce() throws IOException {
    int victim = 3;
    int port = cluster.worker(victim).rpcPort();
    String path = null;
    long offset = 0;
    for (int f = 0; f < FILES && path == null; f++) {
      for (FileBlockInfo b : cluster.client().getBlockLocations("/pool-" + f)) {
        if (b.locations().size() == 1 && b.locations().get(0).address().rpcPort() == port) {
          path = "/pool-" + f;
          offset = b.offset();
          break;
        }
      }
    }
    assertThat(path).as("a block held by worker " + victim + " only").isNotNull();
    byte[] expected = java.util.Arrays.copyOfRange(DATA[path.charAt(6) - '0'], (int) offset, (int) offset + BLOCK);
    // No retry: the read that finds the worker down fails at once, well within the channel's backoff.
    FileSystemContext context = new FileSystemContext(readerConf(64, "10min")
        .with(ClientKeys.BLOCK_READ_RETRY_MAX, 0));
    try (FileSystem fs = FileSystem.create(context)) {
      byte[] got = new byte[BLOCK];
      try (FileInStream in = fs.openFile(path)) {
        in.readFully(offset, got, 0, BLOCK);
      }
      assertThat(got).isEqualTo(expected);
      cluster.stopWorker(victim);
      try (FileInStream in = fs.openFile(path)) {
        String p = path;
        long at = offset;
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> in.readFully(at, got, 0, BLOCK))
            .as("the only copy of " + p + " at " + at + " is down").isInstanceOf(IOException.class);
      } finally {
        cluster.restartWorker(victim);
      }
      byte[] again = new byte[BLOCK];
      try (FileInStream in = fs.openFile(path)) {
        in.readFully(offset, again, 0, BLOCK);
      }
      assertThat(again).isEqualTo(expected);
    } finally {
      context.close();
    }
  }

  @Test
  void sequentialReadsOverFourWorkers_keepAtMostTwoChannels_andStayByteExact() throws IOException {
    FileSystemContext context = new FileSystemContext(readerConf(2, "10min"));
    try (FileSystem fs = FileSystem.create(context)) {
      for (int round = 0; round < 2; round++) {
        for (int f = 0; f < FILES; f++) {
          assertThat(readAll(fs, "/pool-" + f, DATA[f].length)).isEqualTo(DATA[f]);
          assertThat(context.openWorkerChannels()).isLessThanOrEqualTo(2);
        }
      }
      assertThat(context.peakWorkerChannels()).isEqualTo(2);
      assertThat(context.workerChannelsOpened()).as("evicted channels were reopened").isGreaterThan(4);
    } finally {
      context.close();
    }
  }

  @Test
  void concurrentReads_stayByteExact_andTheBoundHoldsOnceTheyAreDone() throws Exception {
    FileSystemContext context = new FileSystemContext(readerConf(2, "10min"));
    ExecutorService pool = Executors.newFixedThreadPool(FILES);
    try (FileSystem fs = FileSystem.create(context)) {
      List<Future<byte[]>> reads = new ArrayList<>();
      for (int round = 0; round < 3; round++) {
        for (int f = 0; f < FILES; f++) {
          String path = "/pool-" + f;
          int len = DATA[f].length;
          reads.add(pool.submit(() -> readAll(fs, path, len)));
        }
      }
      for (int i = 0; i < reads.size(); i++) {
        assertThat(reads.get(i).get(60, TimeUnit.SECONDS)).isEqualTo(DATA[i % FILES]);
      }
      // at most one channel per worker, and more than the bound only while more calls were in flight
      assertThat(context.peakWorkerChannels()).isLessThanOrEqualTo(4);
      // The calls' ends (gRPC's onClose, just after the last bytes reached the readers) trim the idle extra
      // channels to the bound; the idle timeout (10 min) plays no part.
      await().atMost(Duration.ofSeconds(10)).until(() -> context.openWorkerChannels() <= 2);
      assertThat(readAll(fs, "/pool-0", DATA[0].length)).isEqualTo(DATA[0]);
      assertThat(context.openWorkerChannels()).isLessThanOrEqualTo(2);
    } finally {
      pool.shutdownNow();
      context.close();
    }
  }

  @Test
  void aStreamInFlight_survivesEvictionPressure_andIdleChannelsClose() throws IOException {
    FileSystemContext context = new FileSystemContext(readerConf(1, "200ms"));
    try (FileSystem fs = FileSystem.create(context)) {
      byte[] head = new byte[10_000];
      try (FileInStream held = fs.openFile("/pool-0")) {
        readSequentially(held, head); // the first block's read is open on its worker, one chunk ahead
        for (int f = 1; f < FILES; f++) {
          assertThat(readAll(fs, "/pool-" + f, DATA[f].length)).isEqualTo(DATA[f]);
        }
        assertThat(context.peakWorkerChannels()).as("the held stream's channel was kept").isGreaterThan(1);
        // every channel but the held one goes idle and is closed; the held one has a call in flight
        await().atMost(Duration.ofSeconds(10)).until(() -> context.openWorkerChannels() == 1);
        byte[] rest = new byte[DATA[0].length - head.length];
        readSequentially(held, rest);
        byte[] all = new byte[DATA[0].length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(rest, 0, all, head.length, rest.length);
        assertThat(all).isEqualTo(DATA[0]);
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> context.openWorkerChannels() == 0);
      assertThat(readAll(fs, "/pool-1", DATA[1].length)).as("a closed channel is reopened").isEqualTo(DATA[1]);
    } finally {
      context.close();
    }
  }

  /** The live threads whose names start with {@code prefix}. */
  private static Set<Thread> threads(String prefix) {
    Set<Thread> out = new HashSet<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith(prefix) && t.isAlive()) {
        out.add(t);
      }
    }
    return out;
  }

  @Test
  void closingAClient_endsTheEventLoopThreadsOfItsMasterAndTcpWorkerChannels() throws Exception {
    // Over TCP to every worker (no domain socket), so the master's and the workers' channels are all on the
    // client's own event loops; gRPC's shared ones would still sit in epoll_wait after close, which costs a
    // one-shot command's System.exit 0.3 s.
    Set<Thread> before = threads("strata-client-net-");
    FileSystemContext context = new FileSystemContext(readerConf(4, "10min")
        .with(ClientKeys.DATA_DOMAIN_SOCKET_ENABLED, "false"));
    Set<Thread> used;
    try (FileSystem fs = FileSystem.create(context)) {
      for (int f = 0; f < FILES; f++) {
        assertThat(readAll(fs, "/pool-" + f, DATA[f].length)).isEqualTo(DATA[f]);
      }
      assertThat(context.openWorkerChannels()).isEqualTo(4);
      used = threads("strata-client-net-");
      used.removeAll(before);
      assertThat(used).as("this client's event loop threads").isNotEmpty();
    } finally {
      context.close();
    }
    for (Thread t : used) {
      t.join(100); // close waited for them: they are gone, or end within moments
      assertThat(t.isAlive()).as(t.getName() + " after close").isFalse();
    }
  }
}
