package io.strata.tests.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.client.options.MountOptions;
import io.strata.client.options.SetAttributeOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.DirectoryNotEmptyException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A namespace operation that fails has no side effects, in Strata or in the under file system: for each
 * way each operation (rename, create, mkdir, delete, mount, unmount, setAttribute, free, persist) can be
 * refused, the whole Strata namespace (every status field) and the whole UFS dir (every path, kind and
 * size) are the same after the refusal as before it. One real master and worker in this JVM over a
 * local-dir root UFS; each test works in its own directory holding a persisted file, a cache-only file, a
 * persisted directory with a file, and an empty directory.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FailedOperationIntegrationTest {
  private LocalStrataCluster cluster;
  private FileSystem fs;
  private String dir;
  @TempDir
  Path otherUfs;

  @BeforeAll
  void start() throws Exception {
    cluster = LocalStrataCluster.builder().workers(1).set("strata.user.block.size.default", 64 * 1024).build().start();
    fs = cluster.client();
  }

  @AfterAll
  void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @BeforeEach
  void layout(TestInfo info) throws IOException {
    dir = "/" + info.getTestMethod().orElseThrow().getName();
    fs.createDirectory(dir, CreateDirectoryOptions.defaults().withWriteType(WriteType.CACHE_THROUGH));
    write(dir + "/f", WriteType.CACHE_THROUGH);
    write(dir + "/cached", WriteType.MUST_CACHE);
    fs.createDirectory(dir + "/d", CreateDirectoryOptions.defaults().withWriteType(WriteType.CACHE_THROUGH));
    write(dir + "/d/g", WriteType.CACHE_THROUGH);
    fs.createDirectory(dir + "/empty", CreateDirectoryOptions.defaults().withWriteType(WriteType.CACHE_THROUGH));
  }

  private void write(String path, WriteType type) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withWriteType(type))) {
      out.write(new byte[] {1, 2, 3, 4, 5});
    }
  }

  /** This test's name: what its paths, in Strata and in the UFS, contain (other tests leave theirs). */
  private String name() {
    return dir.substring(1);
  }

  /** Every Strata status (all fields) of this test's paths and of the root, by path. */
  private Map<String, URIStatus> strata() throws IOException {
    Map<String, URIStatus> out = new TreeMap<>();
    URIStatus root = fs.getStatus("/");
    out.put("/", new URIStatus(root.id(), "/", root.name(), true, 0, 0, true, root.creationTimeMs(), 0,
        root.owner(), root.group(), root.mode(), 0, List.of())); // other tests change its times and count
    for (URIStatus s : fs.listStatus("/", ListStatusOptions.defaults().withRecursive(true))) {
      if (s.path().contains(name())) {
        out.put(s.path(), s);
      }
    }
    return out;
  }

  /** Every path under the root UFS dir with its kind and size. */
  private Map<String, String> ufs() throws IOException {
    Path root = cluster.rootUfsDir();
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> all = Files.walk(root)) {
      for (Path p : (Iterable<Path>) all::iterator) {
        if (!p.equals(root) && !root.relativize(p).toString().contains(name())) {
          continue;
        }
        out.put(root.relativize(p).toString(), Files.isDirectory(p) ? "dir" : "file " + Files.size(p));
      }
    }
    return out;
  }

  @FunctionalInterface
  private interface Op {
    void run() throws Exception;
  }

  /** {@code op} fails with {@code error}, and neither Strata nor the UFS changed. */
  private void failsWithoutSideEffects(Class<? extends StrataException> error, Op op) throws Exception {
    Map<String, String> ufsBefore = ufs();
    Map<String, URIStatus> strataBefore = strata();
    assertThat(ufsBefore).containsKey(dir.substring(1) + "/f"); // the layout is there to be changed
    assertThatThrownBy(op::run).isInstanceOf(error);
    assertThat(ufs()).as("the UFS after the failed operation").isEqualTo(ufsBefore);
    assertThat(strata()).as("Strata after the failed operation").isEqualTo(strataBefore);
  }

  // ---- rename ----

  @Test
  void rename_persistedFile_toMissingParent() throws Exception {
    failsWithoutSideEffects(NotFoundException.class, () -> fs.rename(dir + "/f", dir + "/nope/x"));
  }

  @Test
  void rename_persistedFile_toMissingParent_atTheRoot() throws Exception {
    failsWithoutSideEffects(NotFoundException.class, () -> fs.rename(dir + "/f", "/nope-" + dir.substring(1) + "/x"));
  }

  @Test
  void rename_directory_toMissingGrandparent() throws Exception {
    failsWithoutSideEffects(NotFoundException.class, () -> fs.rename(dir + "/d", dir + "/nope/deeper/x"));
  }

  @Test
  void rename_toUnderAFile() throws Exception {
    failsWithoutSideEffects(FailedPreconditionException.class, () -> fs.rename(dir + "/d/g", dir + "/f/x"));
  }

  @Test
  void rename_ontoAnExistingPath() throws Exception {
    failsWithoutSideEffects(AlreadyExistsException.class, () -> fs.rename(dir + "/f", dir + "/d/g"));
  }

  @Test
  void rename_directory_intoItself() throws Exception {
    failsWithoutSideEffects(InvalidArgumentException.class, () -> fs.rename(dir + "/d", dir + "/d/sub"));
  }

  @Test
  void rename_acrossMounts() throws Exception {
    fs.mount(dir + "/empty", otherUfs.toUri().toString());
    try {
      failsWithoutSideEffects(FailedPreconditionException.class, () -> fs.rename(dir + "/f", dir + "/empty/x"));
    } finally {
      fs.unmount(dir + "/empty");
    }
    try (Stream<Path> other = Files.list(otherUfs)) {
      assertThat(other).isEmpty();
    }
  }

  @Test
  void rename_missingSource() throws Exception {
    failsWithoutSideEffects(NotFoundException.class, () -> fs.rename(dir + "/missing", dir + "/nope/x"));
  }

  // ---- create directory ----

  @Test
  void mkdir_throughToUfs_missingParent_notRecursive() throws Exception {
    failsWithoutSideEffects(NotFoundException.class, () -> fs.createDirectory(dir + "/nope/x",
        CreateDirectoryOptions.defaults().withWriteType(WriteType.CACHE_THROUGH)));
  }

  @Test
  void mkdir_throughToUfs_underAFile() throws Exception {
    failsWithoutSideEffects(FailedPreconditionException.class, () -> fs.createDirectory(dir + "/f/x/y",
        CreateDirectoryOptions.defaults().withRecursive(true).withWriteType(WriteType.THROUGH)));
  }

  @Test
  void mkdir_existing() throws Exception {
    failsWithoutSideEffects(AlreadyExistsException.class, () -> fs.createDirectory(dir + "/d",
        CreateDirectoryOptions.defaults().withWriteType(WriteType.CACHE_THROUGH)));
  }

  // ---- create file ----

  @Test
  void createFile_throughToUfs_missingParent() throws Exception {
    failsWithoutSideEffects(NotFoundException.class, () -> fs.createFile(dir + "/nope/x",
        CreateFileOptions.defaults().withRecursive(false).withWriteType(WriteType.CACHE_THROUGH)).close());
  }

  @Test
  void createFile_underAFile() throws Exception {
    failsWithoutSideEffects(FailedPreconditionException.class, () -> fs.createFile(dir + "/f/x",
        CreateFileOptions.defaults().withRecursive(true).withWriteType(WriteType.THROUGH)).close());
  }

  @Test
  void createFile_existing() throws Exception {
    failsWithoutSideEffects(AlreadyExistsException.class, () -> write(dir + "/f", WriteType.CACHE_THROUGH));
  }

  // ---- delete ----

  @Test
  void delete_nonEmptyDirectory_notRecursive() throws Exception {
    failsWithoutSideEffects(DirectoryNotEmptyException.class, () -> fs.delete(dir + "/d"));
  }

  @Test
  void delete_missing() throws Exception {
    failsWithoutSideEffects(NotFoundException.class, () -> fs.delete(dir + "/nope/x"));
  }

  // ---- mounts ----

  @Test
  void mount_missingParent() throws Exception {
    failsWithoutSideEffects(NotFoundException.class, () -> fs.mount(dir + "/nope/m", otherUfs.toUri().toString()));
  }

  @Test
  void mount_onANonEmptyDirectory() throws Exception {
    failsWithoutSideEffects(FailedPreconditionException.class, () -> fs.mount(dir + "/d", otherUfs.toUri().toString()));
  }

  @Test
  void mount_ofAMissingUfsDir() throws Exception {
    failsWithoutSideEffects(FailedPreconditionException.class,
        () -> fs.mount(dir + "/m", otherUfs.resolve("missing").toUri().toString(), MountOptions.defaults()));
  }

  @Test
  void unmount_notAMountPoint() throws Exception {
    failsWithoutSideEffects(FailedPreconditionException.class, () -> fs.unmount(dir + "/empty"));
  }

  // ---- attributes, free, persist ----

  @Test
  void setAttribute_underAFile() throws Exception {
    failsWithoutSideEffects(NotFoundException.class,
        () -> fs.setAttribute(dir + "/f/x", SetAttributeOptions.defaults().withPinned(true).withTtlMs(5000)));
  }

  @Test
  void setAttribute_missingPath() throws Exception {
    failsWithoutSideEffects(NotFoundException.class,
        () -> fs.setAttribute(dir + "/nope/x", SetAttributeOptions.defaults().withPinned(true)));
  }

  @Test
  void free_aDirectoryHoldingAnUnpersistedFile_evenForced() throws Exception {
    fs.pin(dir + "/f");
    failsWithoutSideEffects(FailedPreconditionException.class, () -> fs.free(dir, true, true));
    assertThat(fs.getStatus(dir + "/f").pinned()).isTrue();
  }

  @Test
  void free_aDirectory_notRecursive() throws Exception {
    failsWithoutSideEffects(FailedPreconditionException.class, () -> fs.free(dir + "/d", false, false));
  }

  @Test
  void persist_aFileBeingWritten() throws Exception {
    try (FileOutStream out = fs.createFile(dir + "/open", CreateFileOptions.defaults()
        .withWriteType(WriteType.MUST_CACHE))) {
      out.write(new byte[] {1, 2, 3});
      failsWithoutSideEffects(FailedPreconditionException.class, () -> fs.persist(dir + "/open",
          Duration.ofSeconds(5)));
    }
  }

  @Test
  void persist_missingPath() throws Exception {
    failsWithoutSideEffects(NotFoundException.class, () -> fs.persist(dir + "/nope", Duration.ofSeconds(5)));
  }

  @Test
  void delete_strataOnly_ofAMountParent_isRefused() throws Exception {
    fs.mount(dir + "/empty", otherUfs.toUri().toString());
    try {
      failsWithoutSideEffects(FailedPreconditionException.class,
          () -> fs.delete(dir, DeleteOptions.defaults().withRecursive(true)));
    } finally {
      fs.unmount(dir + "/empty");
    }
  }

  @Test
  void theLayoutIsInTheUfs() throws Exception {
    // The helper's premise: persisted things are in the UFS, cache-only ones are not.
    Map<String, String> u = ufs();
    String d = dir.substring(1);
    assertThat(u).containsEntry(d + "/f", "file 5").containsEntry(d + "/d/g", "file 5")
        .containsEntry(d + "/empty", "dir").doesNotContainKey(d + "/cached");
    assertThat(List.of(fs.getStatus(dir + "/cached").persistenceState())).containsExactly(URIStatus.NOT_PERSISTED);
  }
}
