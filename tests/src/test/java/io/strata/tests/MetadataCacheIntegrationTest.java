package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.ClientKeys;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.WriteType;
import io.strata.client.WorkerWrittenFile;
import io.strata.client.options.CreateFileOptions;
import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The client's metadata cache on a real master and worker: answers are cached (another client's change is
 * not seen before the expiry), yet this client's own creates, completes, mkdirs, renames and deletes are
 * seen at once, also through cached children and ancestors, and a change that fails drops what it named
 * (the failure may have taken effect, or may show the cache stale); another client's change is seen after
 * the expiry.
 */
class MetadataCacheIntegrationTest {
  private static LocalStrataCluster cluster;
  private static FileSystem other;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1)
        .set(ClientKeys.WRITE_TYPE_DEFAULT.name(), WriteType.MUST_CACHE.name()).build().start();
    other = cluster.client();
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  private static FileSystem cachingClient(String expiry) {
    return FileSystem.create(cluster.clientConf().withAll(Map.of(ClientKeys.METADATA_CACHE_ENABLED.name(), "true",
        ClientKeys.METADATA_CACHE_EXPIRY.name(), expiry)));
  }

  private static void write(FileSystem fs, String path, int length) throws IOException {
    try (FileOutStream out = fs.createFile(path)) {
      out.write(new byte[length]);
    }
  }

  private static List<String> names(List<URIStatus> entries) {
    return entries.stream().map(URIStatus::name).toList();
  }

  @Test
  void ownWrites_areSeenAtOnce_whileOtherClientsChangesWaitForTheExpiry() throws IOException {
    try (FileSystem fs = cachingClient("10min")) {
      fs.createDirectory("/mc1");
      assertThat(fs.listStatus("/mc1")).isEmpty();
      assertThat(fs.exists("/mc1/f")).isFalse();
      assertThat(fs.getStatus("/mc1").directory()).isTrue();

      assertThat(fs.exists("/mc1/theirs")).isFalse();
      write(other, "/mc1/theirs", 1);
      assertThat(fs.exists("/mc1/theirs")).as("another client's file: not seen before the expiry").isFalse();

      write(fs, "/mc1/f", 3);
      assertThat(fs.exists("/mc1/f")).isTrue();
      URIStatus f = fs.getStatus("/mc1/f");
      assertThat(f.length()).isEqualTo(3);
      assertThat(f.complete()).isTrue();
      assertThat(names(fs.listStatus("/mc1"))).containsExactly("f", "theirs"); // the parent's listing refetched

      assertThat(fs.exists("/mc2")).isFalse();
      fs.createDirectory("/mc2/x/y", CreateDirectoryOptions.defaults().withRecursive(true));
      assertThat(fs.exists("/mc2")).as("an ancestor a recursive mkdir made").isTrue();
      assertThat(fs.exists("/mc2/x/y")).isTrue();
    }
  }

  @Test
  void aFailedChange_dropsTheCachedEntriesItNamed() throws IOException {
    try (FileSystem fs = cachingClient("10min")) {
      write(fs, "/mcf/gone", 2);
      assertThat(fs.getStatus("/mcf/gone").length()).isEqualTo(2);
      assertThat(names(fs.listStatus("/mcf"))).containsExactly("gone");
      assertThat(fs.exists("/mcf/gone")).isTrue();
      other.delete("/mcf/gone");
      assertThat(fs.exists("/mcf/gone")).as("another client's delete: not seen before the expiry").isTrue();
      assertThat(fs.getStatus("/mcf/gone").length()).isEqualTo(2);

      // This client's rename fails (the source is gone): the failure says its cached entries are stale.
      assertThatThrownBy(() -> fs.rename("/mcf/gone", "/mcf/moved")).isInstanceOf(NotFoundException.class);
      assertThat(fs.exists("/mcf/gone")).isFalse();
      assertThatThrownBy(() -> fs.getStatus("/mcf/gone")).isInstanceOf(NotFoundException.class);
      assertThat(fs.listStatus("/mcf")).isEmpty();
    }
  }

  @Test
  void renameAndDeleteOfADirectory_invalidateItsCachedChildren() throws IOException {
    try (FileSystem fs = cachingClient("10min")) {
      fs.createDirectory("/mc3/d", CreateDirectoryOptions.defaults().withRecursive(true));
      write(fs, "/mc3/d/c1", 5);
      assertThat(fs.getStatus("/mc3/d/c1").length()).isEqualTo(5);
      assertThat(names(fs.listStatus("/mc3/d"))).containsExactly("c1");
      assertThat(fs.exists("/mc3/e/c1")).isFalse();

      fs.rename("/mc3/d", "/mc3/e");
      assertThat(fs.exists("/mc3/d/c1")).isFalse();
      assertThatThrownBy(() -> fs.getStatus("/mc3/d/c1")).isInstanceOf(NotFoundException.class);
      assertThatThrownBy(() -> fs.listStatus("/mc3/d")).isInstanceOf(NotFoundException.class);
      assertThat(fs.exists("/mc3/e/c1")).isTrue();
      assertThat(fs.getStatus("/mc3/e/c1").length()).isEqualTo(5);
      assertThat(names(fs.listStatus("/mc3"))).containsExactly("e");

      assertThat(names(fs.listStatus("/mc3/e"))).containsExactly("c1");
      fs.delete("/mc3/e", DeleteOptions.defaults().withRecursive(true));
      assertThat(fs.exists("/mc3/e/c1")).isFalse();
      assertThat(fs.exists("/mc3/e")).isFalse();
      assertThatThrownBy(() -> fs.getStatus("/mc3/e/c1")).isInstanceOf(NotFoundException.class);
      assertThat(fs.listStatus("/mc3")).isEmpty();
    }
  }

  @Test
  void anotherClientsWrite_isSeenAfterTheExpiry() throws IOException {
    Duration expiry = Duration.ofSeconds(2);
    try (FileSystem fs = cachingClient(expiry.toMillis() + "ms")) {
      fs.createDirectory("/mc4");
      long cachedAt = System.nanoTime();
      assertThat(fs.exists("/mc4/h")).isFalse();
      write(other, "/mc4/h", 2);
      boolean stale = !fs.exists("/mc4/h");
      if (System.nanoTime() - cachedAt < expiry.toNanos()) {
        assertThat(stale).as("within the expiry the cached answer stands").isTrue();
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> fs.exists("/mc4/h"));
      assertThat(System.nanoTime() - cachedAt).as("seen only once the answer expired")
          .isGreaterThanOrEqualTo(expiry.toNanos());
      assertThat(fs.getStatus("/mc4/h").length()).isEqualTo(2);
    }
  }

  /**
   * A listing of more children than the cache keeps ({@code max.size} 40: at most 20) reaches the caller whole and is
   * not kept, so another client's new child shows at the next listing; a small one is kept until its expiry.
   */
  @Test
  void aBigListing_isStreamedAndNotKept_whileASmallOneIsKept() throws IOException {
    try (FileSystem fs = FileSystem.create(cluster.clientConf().withAll(Map.of(
        ClientKeys.METADATA_CACHE_ENABLED.name(), "true", ClientKeys.METADATA_CACHE_EXPIRY.name(), "10min",
        ClientKeys.METADATA_CACHE_MAX_SIZE.name(), "40")))) {
      for (int i = 0; i < 25; i++) {
        write(other, "/mc5/big/f" + i, 1);
      }
      for (int i = 0; i < 5; i++) {
        write(other, "/mc5/small/f" + i, 1);
      }
      assertThat(fs.listStatus("/mc5/big")).hasSize(25);
      assertThat(fs.listStatus("/mc5/small")).hasSize(5);
      write(other, "/mc5/big/late", 1);
      write(other, "/mc5/small/late", 1);
      assertThat(names(fs.listStatus("/mc5/big"))).hasSize(26).contains("late", "f0", "f24");
      assertThat(fs.listStatus("/mc5/small")).as("kept within its expiry").hasSize(5);
    }
  }

  /**
   * A batch of worker-written creates with bad paths among good ones (relative, empty, null): each bad one fails
   * alone with an InvalidArgument, the good ones are created and handed back (not lost to an exception of the
   * cache's invalidation), and the good ones' cached answers go.
   */
  @Test
  void aBatchCreate_withBadPaths_createsTheGoodOnes_andInvalidatesTheirEntries() throws IOException {
    try (FileSystem fs = cachingClient("10min")) {
      fs.createDirectory("/mc6");
      assertThat(fs.exists("/mc6/a")).isFalse();
      assertThat(fs.listStatus("/mc6")).isEmpty();

      List<WorkerWrittenFile.Creation> made = fs.createWorkerWrittenFiles(Arrays.asList("/mc6/a", "x", "", null,
          "/mc6/b"), CreateFileOptions.defaults());

      assertThat(made).hasSize(5);
      assertThat(made.get(0).error()).isNull();
      assertThat(made.get(0).file().status().path()).isEqualTo("/mc6/a");
      assertThat(made.get(4).file().status().path()).isEqualTo("/mc6/b");
      for (int i = 1; i <= 3; i++) {
        assertThat(made.get(i).file()).isNull();
        assertThat(made.get(i).error()).isInstanceOf(InvalidArgumentException.class);
      }
      assertThat(made.get(1).error()).hasMessageContaining("not absolute");
      assertThat(made.get(3).error()).hasMessageContaining("Path 3 of the batch is null");
      assertThat(fs.exists("/mc6/a")).as("the cached 'absent' went with the create").isTrue();
      assertThat(names(fs.listStatus("/mc6"))).containsExactly("a", "b");
      // Created once: a retry of the same path is refused, the files are this client's to complete.
      assertThatThrownBy(() -> fs.createWorkerWrittenFile("/mc6/a", CreateFileOptions.defaults()))
          .isInstanceOf(AlreadyExistsException.class);
      List<WorkerWrittenFile.Completion> done = WorkerWrittenFile.completeAll(
          List.of(made.get(0).file(), made.get(4).file()), new long[] {0, 0});
      assertThat(done).allSatisfy(c -> assertThat(c.error()).isNull());
      assertThat(fs.getStatus("/mc6/b").complete()).isTrue();
    }
  }
}
