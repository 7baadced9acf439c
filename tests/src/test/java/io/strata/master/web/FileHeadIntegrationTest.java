package io.strata.master.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.master.block.BlockState;
import io.strata.master.file.FileInfo;
import io.strata.master.file.FileSystemMaster;
import io.strata.minicluster.LocalStrataCluster;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The file browser's first-bytes reader on a real cluster of two workers: page views reuse one pooled channel
 * per worker (instead of one per view), the pool's bound holds (the least recently used channel goes), the
 * bytes stay exact through reuse and eviction, and a closed reader refuses to read.
 */
class FileHeadIntegrationTest {
  private static final int FILES = 4;
  private static final byte[][] DATA = new byte[FILES][];
  private static LocalStrataCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = LocalStrataCluster.builder().workers(2).build().start();
    cluster.waitForWorkers(2, 30_000);
    Random random = new Random(14);
    try (FileSystem fs = FileSystem.create(cluster.clientConf().withAll(
        java.util.Map.of(io.strata.client.ClientKeys.WRITE_LOCATION_POLICY.name(), "ROUND_ROBIN")))) {
      for (int f = 0; f < FILES; f++) {
        DATA[f] = new byte[3000 + f]; // more than the 1 KiB shown: the read stops early and is cancelled
        random.nextBytes(DATA[f]);
        try (FileOutStream out = fs.createFile("/head-" + f, CreateFileOptions.defaults()
            .withWriteType(WriteType.MUST_CACHE))) {
          out.write(DATA[f]);
        }
      }
    }
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  private static FileHead.Result read(FileHead head, int f) throws Exception {
    FileSystemMaster fs = cluster.master().fileSystemMaster();
    FileInfo info = fs.getStatus("/head-" + f, -1);
    List<BlockState> blocks = fs.blocksOf(info);
    return head.read(info, blocks, fs.blockMaster().liveWorkers());
  }

  /** The workers holding the first blocks of the files (both, with round-robin placement). */
  private static Set<String> holders() throws Exception {
    Set<String> out = new HashSet<>();
    FileSystemMaster fs = cluster.master().fileSystemMaster();
    for (int f = 0; f < FILES; f++) {
      for (BlockState.Location l : fs.blocksOf(fs.getStatus("/head-" + f, -1)).get(0).locations()) {
        out.add(l.worker().address().toString());
      }
    }
    return out;
  }

  @Test
  void pageViews_reuseOneChannelPerWorker_andReadTheExactFirstBytes() throws Exception {
    assertThat(holders()).hasSize(2);
    try (FileHead head = new FileHead(4 << 20)) {
      for (int round = 0; round < 3; round++) {
        for (int f = 0; f < FILES; f++) {
          FileHead.Result r = read(head, f);
          assertThat(r.error()).isNull();
          assertThat(r.bytes()).isEqualTo(Arrays.copyOf(DATA[f], FileHead.BYTES));
        }
      }
      assertThat(head.channelsOpened()).as("12 views over 2 workers").isEqualTo(2);
      assertThat(head.openChannels()).isEqualTo(2);
    }
  }

  @Test
  void theBoundHolds_theLeastRecentlyUsedChannelGoes_andReadsStayExact() throws Exception {
    try (FileHead head = new FileHead(4 << 20, 1)) {
      Set<String> from = new HashSet<>();
      for (int round = 0; round < 2; round++) {
        for (int f = 0; f < FILES; f++) {
          FileHead.Result r = read(head, f);
          assertThat(r.bytes()).isEqualTo(Arrays.copyOf(DATA[f], FileHead.BYTES));
          from.add(r.from());
          assertThat(head.openChannels()).isEqualTo(1);
        }
      }
      assertThat(from).hasSize(2);
      assertThat(head.channelsOpened()).as("alternating workers reopen").isGreaterThan(2);
    }
  }

  @Test
  void aClosedReader_refusesToRead() throws Exception {
    FileHead head = new FileHead(4 << 20);
    assertThat(read(head, 0).bytes()).isEqualTo(Arrays.copyOf(DATA[0], FileHead.BYTES));
    head.close();
    assertThat(head.openChannels()).isZero();
    assertThatThrownBy(() -> read(head, 0)).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
  }

  @Test
  void copiesOnWorkersThatNeverAnswer_holdTheViewForOneTimeout_notOnePerWorker() throws Exception {
    // Three "workers" that accept connections and never answer: each copy tried in turn used to wait its own
    // timeout, so a view held a web thread three times as long (and a hundred times as long with a hundred).
    List<java.net.ServerSocket> silent = new java.util.ArrayList<>();
    List<java.net.Socket> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (FileHead head = new FileHead(4 << 20)) {
      List<BlockState.Location> locations = new java.util.ArrayList<>();
      for (int i = 0; i < 3; i++) {
        java.net.ServerSocket s = new java.net.ServerSocket(0, 8, java.net.InetAddress.getLoopbackAddress());
        silent.add(s);
        Thread t = new Thread(() -> {
          try {
            while (true) {
              accepted.add(s.accept());
            }
          } catch (java.io.IOException closed) {
            // the test is over
          }
        });
        t.setDaemon(true);
        t.start();
        locations.add(new BlockState.Location(new io.strata.master.block.WorkerState(100 + i,
            new io.strata.common.net.WorkerAddress("127.0.0.1", s.getLocalPort()), 1 << 30, 0, 0, 1, 0, List.of()),
            "MEM"));
      }
      FileInfo info = cluster.master().fileSystemMaster().getStatus("/head-0", -1);
      BlockState first = new BlockState(io.strata.common.id.BlockId.of(info.id(), 0), DATA[0].length, locations);
      long start = System.nanoTime();
      FileHead.Result r = head.read(info, List.of(first), List.of());
      long tookMs = (System.nanoTime() - start) / 1_000_000;
      assertThat(r.bytes()).isNull();
      assertThat(r.error()).contains("DEADLINE_EXCEEDED");
      assertThat(tookMs).as("one timeout for the view").isLessThan(2 * FileHead.TIMEOUT_MS);
    } finally {
      for (java.net.ServerSocket s : silent) {
        s.close();
      }
      for (java.net.Socket a : accepted) {
        a.close();
      }
    }
  }
}
