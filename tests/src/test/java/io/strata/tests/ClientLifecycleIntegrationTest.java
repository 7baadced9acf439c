package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.client.ClientKeys;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.FileSystemContext;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client's life on a real master and worker: a client whose configuration is bad fails at once and leaves nothing
 * behind (a later client in this JVM gets the page cache directory it would have claimed); a bad cluster default of the
 * master is dropped rather than breaking every client; a closed client answers nothing, not even from its metadata
 * cache; a file system over a context its caller owns leaves that context open when it closes.
 */
class ClientLifecycleIntegrationTest {
  @TempDir
  static Path tmp;
  private static LocalStrataCluster cluster;
  private static final byte[] DATA = new byte[10_000];

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set(ClientKeys.WRITE_TYPE_DEFAULT.name(), WriteType.MUST_CACHE.name()).build().start();
    for (int i = 0; i < DATA.length; i++) {
      DATA[i] = (byte) (i * 31);
    }
    write(cluster.client(), "/lc/data", DATA);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static void write(FileSystem fs, String path, byte[] data) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withRecursive(true))) {
      out.write(data);
    }
  }

  private static byte[] read(FileSystem fs, String path) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }

  private static long pageFiles(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().endsWith(".page")).count();
    }
  }

  @Test
  void aClientWithABadKey_failsNamingIt_andTheNextClientStillGetsThePageCache() throws IOException {
    Path dir = tmp.resolve("pages");
    Map<String, String> pages = new HashMap<>(Map.of(ClientKeys.PAGE_CACHE_ENABLED.name(), "true",
        ClientKeys.PAGE_CACHE_DIR.name(), dir.toString(), ClientKeys.PAGE_CACHE_PAGE_SIZE.name(), "4KB",
        "strata.user.shortcircuit.mode", "off"));
    Map<String, String> bad = new HashMap<>(pages);
    bad.put(ClientKeys.WORKER_CHANNELS_MAX.name(), "0");

    assertThatThrownBy(() -> FileSystem.create(cluster.clientConf().withAll(bad)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(ClientKeys.WORKER_CHANNELS_MAX.name());

    try (FileSystem fs = FileSystem.create(cluster.clientConf().withAll(pages))) {
      assertThat(read(fs, "/lc/data")).isEqualTo(DATA);
      assertThat(pageFiles(dir)).as("the failed client let the directory go: this one keeps its pages there")
          .isEqualTo(3);
    }
  }

  @Test
  void aBadClusterDefault_isDropped_andClientsStillStart() throws IOException {
    try (LocalStrataCluster c = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("badDefault")).build()
        .start()) {
      c.restartMaster(Map.of(ClientKeys.WORKER_CHANNELS_MAX.name(), "0",
          ClientKeys.WRITE_TYPE_DEFAULT.name(), WriteType.MUST_CACHE.name()));
      c.waitForWorkers(1, 30_000);
      try (FileSystemContext context = new FileSystemContext(c.clientConf());
          FileSystem fs = FileSystem.create(context)) {
        assertThat(context.conf().get(ClientKeys.WORKER_CHANNELS_MAX)).as("the key's own default").isEqualTo(64);
        assertThat(context.conf().get(ClientKeys.WRITE_TYPE_DEFAULT)).as("the good defaults still apply")
            .isEqualTo(WriteType.MUST_CACHE.name());
        write(fs, "/bad-default/f", DATA);
        assertThat(read(fs, "/bad-default/f")).isEqualTo(DATA);
      }
    }
  }

  @Test
  void aClosedClient_answersNothing_notEvenFromItsMetadataCache() throws IOException {
    FileSystem fs = FileSystem.create(cluster.clientConf().withAll(Map.of(
        ClientKeys.METADATA_CACHE_ENABLED.name(), "true", ClientKeys.METADATA_CACHE_EXPIRY.name(), "10min")));
    assertThat(fs.exists("/lc/data")).isTrue();
    assertThat(fs.getStatus("/lc/data").length()).isEqualTo(DATA.length);
    assertThat(fs.listStatus("/lc")).extracting(s -> s.name()).contains("data");
    fs.close();

    assertThatThrownBy(() -> fs.exists("/lc/data")).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("This client is closed");
    assertThatThrownBy(() -> fs.getStatus("/lc/data")).isInstanceOf(FailedPreconditionException.class);
    assertThatThrownBy(() -> fs.listStatus("/lc")).isInstanceOf(FailedPreconditionException.class);
    assertThatThrownBy(() -> fs.createFile("/lc/after")).isInstanceOf(FailedPreconditionException.class);
    assertThatThrownBy(() -> fs.getWorkers()).isInstanceOf(FailedPreconditionException.class);
    fs.close(); // again: nothing
  }

  @Test
  void fileSystemsOverACallersContext_leaveItOpen_whenOneCloses() throws IOException {
    FileSystemContext context = new FileSystemContext(cluster.clientConf());
    try {
      FileSystem first = FileSystem.create(context);
      FileSystem second = FileSystem.create(context);
      write(first, "/lc/shared", DATA);
      first.close();

      assertThatThrownBy(() -> first.exists("/lc/shared")).isInstanceOf(FailedPreconditionException.class);
      assertThat(read(second, "/lc/shared")).as("the context is still open").isEqualTo(DATA);
      write(second, "/lc/shared2", DATA);
      assertThat(second.getStatus("/lc/shared2").length()).isEqualTo(DATA.length);
      second.close();
      try (FileSystem third = FileSystem.create(context)) {
        assertThat(third.exists("/lc/shared2")).isTrue();
      }

      context.close();
      try (FileSystem late = FileSystem.create(context)) {
        assertThatThrownBy(() -> late.exists("/lc/shared")).isInstanceOf(FailedPreconditionException.class)
            .hasMessageContaining("its context was closed");
      }
    } finally {
      context.close();
    }
  }
}
