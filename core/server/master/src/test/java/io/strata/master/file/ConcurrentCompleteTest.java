package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.UnavailableException;
import io.strata.master.MutableClock;
import io.strata.master.journal.Journal;
import io.strata.server.ufs.UfsManager;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two completes of one through-written file at once (a client's retry that arrives while its first attempt
 * is still moving the UFS copy into place, as a slow S3 copy would): the second is refused UNAVAILABLE
 * instead of clearing the target the first attempt is placing, and the first completes PERSISTED with the
 * bytes at the file's UFS path. The UFS is a real local dir whose first rename waits for the test (Hadoop's
 * RawLocalFileSystem, chosen through the root mount's {@code fs.file.impl} option).
 */
class ConcurrentCompleteTest {
  @TempDir
  Path tmp;
  private final UfsManager manager = new UfsManager();
  private Journal journal;

  @AfterEach
  void tearDown() {
    GatedFileSystem.disarm();
    if (journal != null) {
      journal.close();
    }
    manager.close();
  }

  @Test
  void aSecondCompleteWhileTheFirstPlacesTheUfsCopy_isRefused_andTheFirstPersistsTheBytes() throws Exception {
    Path ufs = Files.createDirectories(tmp.resolve("ufs"));
    journal = new Journal(tmp.resolve("journal"), 1 << 20);
    FileSystemMaster fs = FileSystemMasterUfsTest.open(tmp, ufs, manager, journal,
        new MutableClock(1_700_000_000_000L), Map.of("fs.file.impl", GatedFileSystem.class.getName()), 1000);

    FileInfo f = fs.createFile("/out/t", 100, true, 0, WriteType.THROUGH);
    Path temp = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.createDirectories(temp.getParent());
    Files.writeString(temp, "abcd");

    GatedFileSystem.arm(GatedFileSystem.Op.RENAME);
    CompletableFuture<FileInfo> first = CompletableFuture.supplyAsync(() -> {
      try {
        return fs.completeFile("/out/t", f.id(), 4);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    assertThat(GatedFileSystem.entered.await(30, TimeUnit.SECONDS)).as("the first complete renames").isTrue();

    assertThatThrownBy(() -> fs.completeFile("/out/t", f.id(), 4)).isInstanceOf(UnavailableException.class)
        .hasMessageContaining("/out/t").hasMessageContaining("still placing");

    GatedFileSystem.release.countDown();
    FileInfo done = first.get(30, TimeUnit.SECONDS);
    assertThat(done.persistence()).isEqualTo(PersistenceState.PERSISTED);
    // What holds the bytes: the file's UFS path (the temporary copy moved there, nothing deleted it).
    assertThat(Files.readString(ufs.resolve("out/t"))).isEqualTo("abcd");
    assertThat(temp).doesNotExist();
  }
}
