package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.FileSystemContext;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.DeadlineExceededException;
import io.strata.minicluster.LocalStrataCluster;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A worker reaps an under file system write stream that brought it no message for
 * {@code strata.worker.ufs.write.idle.timeout} (here 2 s), deleting the partial copy: its writer went silent. A
 * writer that is slow but alive sends a message only when it fills a chunk, so gaps between its chunks longer than
 * the timeout used to lose the stream and fail the whole file at its next chunk or at close. Its client now sends
 * keep-alives while it holds the stream and the file's lease ({@code strata.user.ufs.write.keepalive.interval},
 * here 250 ms): such a writer completes with every byte in the under file system, on a real cluster; with
 * keep-alives off the same writer fails, naming the worker's key; and a real client frozen mid-file (SIGSTOP, its
 * connections left open) has its stream reaped, its partial copy deleted, while its block stream stays open. A
 * writer whose lease the master recovered has its stream ended even while its client still sends keep-alives.
 */
class SlowUfsWriterIntegrationTest {
  private static final int BLOCK = 256 << 10;
  private static final int PIECE = 100 << 10;
  /** Longer than the worker's idle timeout (2 s) by far, so the worker's sweep (every 500 ms) sees it. */
  private static final long GAP_MS = 3_500;

  @TempDir
  static Path tmp;

  private static LocalStrataCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.worker.ufs.write.idle.timeout", "2s")
        .build().start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static FileSystemContext context(String keepAlive) {
    Map<String, String> c = new HashMap<>(cluster.clientConf().explicitValues());
    c.put("strata.user.stream.chunk.size", "64KB");
    c.put("strata.user.ufs.write.keepalive.interval", keepAlive);
    return new FileSystemContext(StrataConf.of(c));
  }

  private static byte[] data(String path, int length) {
    byte[] data = new byte[length];
    new Random(path.hashCode()).nextBytes(data);
    return data;
  }

  /**
   * Writes {@code data} as a slow writer does: pieces of 100 KiB (a chunk and a half), with a pause longer than the
   * worker's idle timeout after every third piece: inside a block, across a block boundary, before the close.
   */
  private static void writeSlowly(FileOutStream out, byte[] data) throws IOException, InterruptedException {
    int piece = 0;
    for (int at = 0; at < data.length; at += PIECE, piece++) {
      out.write(data, at, Math.min(PIECE, data.length - at));
      if (piece % 3 == 0) {
        Thread.sleep(GAP_MS); // the application has nothing to write for a while
      }
    }
  }

  /** Entries of the under file system dir of {@code path} that are temporary copies (`.name.strata-*.tmp`). */
  private static List<String> tempCopies(String dir) throws IOException {
    Path d = cluster.rootUfsDir().resolve(dir);
    if (!Files.exists(d)) {
      return List.of();
    }
    try (var s = Files.list(d)) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.contains(".strata-") && n.endsWith(".tmp"))
          .toList();
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = WriteType.class, names = {"CACHE_THROUGH", "THROUGH"})
  void slowWriter_withGapsLongerThanTheIdleTimeout_completes_withEveryByteInTheUfs(WriteType type) throws Exception {
    String path = "/slow/" + type;
    byte[] data = data(path, 2 * BLOCK + BLOCK / 2 + 123);
    try (FileSystemContext ctx = context("250ms"); FileSystem fs = FileSystem.create(ctx)) {
      long before = ctx.ufsKeepAlivesSent();
      try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
          .withWriteType(type).withRecursive(true))) {
        writeSlowly(out, data);
      }

      assertThat(ctx.ufsKeepAlivesSent() - before).as("keep-alives sent in the gaps").isGreaterThan(5);
      URIStatus status = fs.getStatus(path);
      assertThat(status.isPersisted()).isTrue();
      assertThat(status.length()).isEqualTo(data.length);
      assertThat(Files.readAllBytes(cluster.rootUfsDir().resolve("slow").resolve(type.name()))).isEqualTo(data);
      try (FileInStream in = fs.openFile(path)) {
        assertThat(in.readAllBytes()).isEqualTo(data);
      }
      assertThat(tempCopies("slow")).isEmpty();
    }
  }

  /** The failure keep-alives prevent: the same writer without them loses its stream, and so its file. */
  @Test
  void slowWriter_withoutKeepAlives_losesItsStream_andItsFileFails() throws Exception {
    String path = "/slow-off/f";
    byte[] data = data(path, 2 * BLOCK);
    try (FileSystemContext ctx = context("0"); FileSystem fs = FileSystem.create(ctx)) {
      FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
          .withWriteType(WriteType.CACHE_THROUGH).withRecursive(true));

      assertThatThrownBy(() -> {
        try (out) {
          writeSlowly(out, data);
        }
      }).isInstanceOf(DeadlineExceededException.class)
          .hasMessageContaining("strata.worker.ufs.write.idle.timeout");
      assertThat(ctx.ufsKeepAlivesSent()).isZero();
      assertThat(fs.exists(path)).isFalse();
      await().atMost(Duration.ofSeconds(10)).until(() -> tempCopies("slow-off").isEmpty());
    }
  }

  /**
   * Keep-alives last only as long as the file's lease: a writer that lost it (here a client that never renews,
   * as one cut off from the master would not) keeps sending keep-alives, but the master recovers (deletes) the
   * file and its heartbeat replies name it, and the worker ends the file's under file system write as it ends its
   * block writes; the writer fails at its next write or close.
   */
  @Test
  void writerThatLostItsLease_stillSendingKeepAlives_hasItsStreamEnded() throws Exception {
    try (LocalStrataCluster c = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("lease"))
        .set("strata.worker.ufs.write.idle.timeout", "2s")
        .set("strata.master.lease.timeout", "1s")
        .set("strata.master.lease.check.interval", "100ms")
        .build().start()) {
      Map<String, String> conf = new HashMap<>(c.clientConf().explicitValues());
      conf.put("strata.user.stream.chunk.size", "64KB");
      conf.put("strata.user.ufs.write.keepalive.interval", "250ms");
      conf.put("strata.user.lease.renew.interval", "1h");
      try (FileSystemContext ctx = new FileSystemContext(StrataConf.of(conf)); FileSystem fs = FileSystem.create(ctx)) {
        // The lease is long until the worker's under file system write is seen open, then 1 s: short from the start,
        // it could lapse and the write end before a look from a loaded machine found the write open.
        c.master().fileSystemMaster().setLeaseTimeout(Duration.ofMinutes(5));
        FileOutStream out = fs.createFile("/lost/f", CreateFileOptions.defaults().withBlockSize(BLOCK)
            .withWriteType(WriteType.THROUGH).withRecursive(true));
        out.write(new byte[PIECE]);
        await().atMost(Duration.ofSeconds(30)).until(() -> c.worker(0).dataService().openUfsWrites() == 1);
        c.master().fileSystemMaster().setLeaseTimeout(Duration.ofSeconds(1));

        await().atMost(Duration.ofSeconds(30)).until(() -> c.worker(0).dataService().openUfsWrites() == 0);
        assertThat(ctx.ufsKeepAlivesSent()).as("the client kept its stream alive meanwhile").isPositive();
        assertThat(fs.exists("/lost/f")).isFalse();
        assertThatThrownBy(() -> {
          out.write(new byte[PIECE]);
          out.close();
        }).isInstanceOf(IOException.class);
      }
    }
  }

  /**
   * A real client in its own process opens a CACHE_THROUGH file, writes a chunk and then nothing: its keep-alives
   * hold the stream past the idle timeout many times over. Frozen (SIGSTOP: no keep-alive, no reset connection),
   * it goes silent, and the worker reaps its stream and deletes the partial copy while its block stream, on the
   * same live connection, stays open.
   */
  @Test
  void silentWriter_frozenMidFile_hasItsStreamReaped_andItsPartialCopyDeleted() throws Exception {
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(javaBin, "-Dio.netty.native.detectNativeLibraryDuplicates=false", "-cp",
        System.getProperty("java.class.path"), SlowUfsWriterMain.class.getName(),
        Integer.toString(cluster.masterPort()), "/silent/f", "250ms").redirectErrorStream(true).start();
    try {
      BufferedReader lines = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      StringBuilder seen = new StringBuilder();
      for (String line = lines.readLine(); line != null && !line.equals("open"); line = lines.readLine()) {
        seen.append(line).append('\n');
      }
      assertThat(p.isAlive()).as(seen.toString()).isTrue();
      await().atMost(Duration.ofSeconds(10)).until(() -> tempCopies("silent").size() == 1
          && cluster.worker(0).openStreams() == 2);
      // Alive, it keeps its stream: two idle timeouts later the partial copy is still there.
      await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(10))
          .until(() -> tempCopies("silent").size() == 1 && cluster.worker(0).openStreams() == 2);

      assertThat(new ProcessBuilder("kill", "-STOP", Long.toString(p.pid())).start().waitFor()).isZero();

      await().atMost(Duration.ofSeconds(10)).until(() -> tempCopies("silent").isEmpty());
      // Reaped by the idle watch, not by a broken connection: the block stream on it is still open.
      assertThat(cluster.worker(0).openStreams()).isEqualTo(1);
    } finally {
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.worker(0).openStreams() == 0);
  }
}
