package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.ClientKeys;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FileSystem.Factory}: shared, reference-counted clients of a real master and worker. Each test uses
 * its own configuration (a distinct harmless value) so that tests never share an instance.
 */
class FileSystemFactoryIntegrationTest {
  private static LocalStrataCluster cluster;
  @TempDir
  static Path tmp;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).build().start();
    cluster.waitForWorkers(1, 30_000);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  /** The cluster's client configuration, made distinct per test by its listing batch size. */
  private static StrataConf conf(int tag) {
    return cluster.clientConf().with(ClientKeys.LIST_BATCH_SIZE, 100 + tag);
  }

  private static long threads(String name) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().equals(name)).count();
  }

  private static long leaseRenewerThreads() {
    return threads("strata-lease-renewer");
  }

  @Test
  void get_withEqualConf_givesSameInstance_andOneCloseKeepsItUsable() throws IOException {
    FileSystem a = FileSystem.Factory.get(conf(1));
    FileSystem b = FileSystem.Factory.get(StrataConf.of(conf(1).explicitValues()));
    assertThat(b).isSameAs(a);
    assertThat(FileSystem.Factory.references(a)).isEqualTo(2);
    a.close();
    assertThat(FileSystem.Factory.references(b)).isEqualTo(1);
    b.createDirectory("/factory-same");
    assertThat(b.exists("/factory-same")).isTrue();
    b.close();
    assertThat(FileSystem.Factory.references(b)).isZero();
  }

  @Test
  void get_withDifferentConf_givesDifferentInstances() throws IOException {
    try (FileSystem a = FileSystem.Factory.get(conf(2)); FileSystem b = FileSystem.Factory.get(conf(3))) {
      assertThat(b).isNotSameAs(a);
      assertThat(FileSystem.Factory.references(a)).isEqualTo(1);
      assertThat(FileSystem.Factory.references(b)).isEqualTo(1);
    }
  }

  @Test
  void create_alwaysGivesAFreshInstance() throws IOException {
    try (FileSystem shared = FileSystem.Factory.get(conf(4)); FileSystem fresh = FileSystem.create(conf(4))) {
      assertThat(fresh).isNotSameAs(shared);
      assertThat(FileSystem.Factory.references(fresh)).isZero();
    }
  }

  @Test
  void lastClose_stopsTheLeaseRenewer_andLaterCallsFail() throws IOException {
    await().atMost(Duration.ofSeconds(10)).until(() -> threads("strata-client-maintenance") == 0);
    long before = leaseRenewerThreads();
    FileSystem a = FileSystem.Factory.get(conf(5));
    FileSystem b = FileSystem.Factory.get(conf(5));
    try (FileOutStream out = a.createFile("/factory-lease")) {
      out.write(new byte[] {1, 2, 3});
      assertThat(leaseRenewerThreads()).isEqualTo(before + 1);
    }
    a.close();
    assertThat(leaseRenewerThreads()).isEqualTo(before + 1); // b still holds it: nothing freed
    assertThat(b.getStatus("/factory-lease").length()).isEqualTo(3);
    assertThat(threads("strata-client-maintenance")).isEqualTo(1);
    b.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> leaseRenewerThreads() == before);
    await().atMost(Duration.ofSeconds(10)).until(() -> threads("strata-client-maintenance") == 0);
    assertThatThrownBy(() -> b.exists("/")).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("closed");
  }

  @Test
  void extraClose_isANoOp_andDoesNotFreeALaterHoldersInstance() throws IOException {
    FileSystem first = FileSystem.Factory.get(conf(6));
    first.close();
    FileSystem second = FileSystem.Factory.get(conf(6));
    assertThat(second).isNotSameAs(first);
    first.close(); // one close too many, on the freed instance
    assertThat(FileSystem.Factory.references(second)).isEqualTo(1);
    assertThat(second.exists("/")).isTrue();
    second.close();
  }

  @Test
  void concurrentGetAndClose_neverHandOutAClosedInstance() throws Exception {
    int threads = 4;
    int rounds = 100;
    StrataConf conf = conf(7);
    CyclicBarrier startLine = new CyclicBarrier(threads);
    AtomicInteger calls = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(pool.submit(() -> {
          startLine.await();
          for (int i = 0; i < rounds; i++) {
            FileSystem fs = FileSystem.Factory.get(conf);
            try {
              assertThat(fs.exists("/")).isTrue(); // fails with "closed" if handed a freed instance
              calls.incrementAndGet();
            } finally {
              fs.close();
            }
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(calls.get()).isEqualTo(threads * rounds);
    FileSystem after = FileSystem.Factory.get(conf);
    assertThat(FileSystem.Factory.references(after)).isEqualTo(1); // every reference was given back
    after.close();
  }

  /**
   * Many threads get the shared instance of one configuration with a page cache at once: one context is made, so the
   * instance they all share is the one that holds the page cache directory (before, each made its own and the one
   * kept was often one that had lost the directory to another, and ran without a page cache). Three rounds.
   */
  @Test
  void concurrentFirstGets_makeOneContext_whichHasThePageCache() throws Exception {
    int threads = 8;
    try (FileSystem writer = FileSystem.create(cluster.clientConf()); // closed: no client thread stays
        FileOutStream out = writer.createFile("/factory-pages")) {
      out.write(new byte[10_000]);
    }
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 3; round++) {
        Path dir = tmp.resolve("pages-" + round);
        StrataConf conf = conf(40 + round).withAll(java.util.Map.of(ClientKeys.PAGE_CACHE_ENABLED.name(), "true",
            ClientKeys.PAGE_CACHE_DIR.name(), dir.toString(), ClientKeys.PAGE_CACHE_PAGE_SIZE.name(), "4KB"));
        CyclicBarrier startLine = new CyclicBarrier(threads);
        List<Future<FileSystem>> got = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          got.add(pool.submit(() -> {
            startLine.await(10, TimeUnit.SECONDS);
            return FileSystem.Factory.get(conf);
          }));
        }
        FileSystem shared = got.get(0).get(30, TimeUnit.SECONDS);
        for (Future<FileSystem> f : got) {
          assertThat(f.get(30, TimeUnit.SECONDS)).isSameAs(shared);
        }
        assertThat(FileSystem.Factory.references(shared)).isEqualTo(threads);
        try (var in = shared.openFile("/factory-pages")) {
          assertThat(in.readAllBytes()).hasSize(10_000);
        }
        try (var files = Files.list(dir)) {
          assertThat(files.filter(p -> p.getFileName().toString().endsWith(".page")).count())
              .as("round %d: the shared instance keeps its pages", round).isEqualTo(3);
        }
        for (int t = 0; t < threads; t++) {
          shared.close();
        }
        assertThat(FileSystem.Factory.references(shared)).isZero();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
