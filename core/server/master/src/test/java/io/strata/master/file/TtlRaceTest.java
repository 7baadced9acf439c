package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.master.MutableClock;
import io.strata.master.journal.Journal;
import io.strata.server.ufs.UfsManager;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two files whose TTLs ran out, and while the master deletes the first one's UFS copy (a slow UFS delete, held by
 * the test), the second is deleted and a new file without a TTL is made at its path. The TTL round must not delete
 * the new file (nor its UFS copy): its time did not run out. The UFS is a real local dir ({@link GatedFileSystem}).
 */
class TtlRaceTest {
  @TempDir
  Path tmp;
  private Path ufs;
  private final UfsManager manager = new UfsManager();
  private final MutableClock clock = new MutableClock(1_700_000_000_000L);
  private Journal journal;
  private FileSystemMaster fs;

  @BeforeEach
  void setUp() throws IOException {
    ufs = Files.createDirectories(tmp.resolve("ufs"));
    journal = new Journal(tmp.resolve("journal"), 1 << 20);
    fs = FileSystemMasterUfsTest.open(tmp, ufs, manager, journal, clock,
        Map.of("fs.file.impl", GatedFileSystem.class.getName()), 1000);
  }

  @AfterEach
  void tearDown() {
    GatedFileSystem.disarm();
    journal.close();
    manager.close();
  }

  private void ufsFile(String name, String content) throws IOException {
    Files.writeString(ufs.resolve(name), content, StandardCharsets.UTF_8);
  }

  @Test
  void aFileMadeAtAnExpiredPathDuringTheRound_isNotDeletedByIt() throws Exception {
    ufsFile("a", "a");
    ufsFile("b", "b");
    fs.setAttribute("/a", null, 1_000L, "DELETE");
    fs.setAttribute("/b", null, 1_000L, "DELETE");
    clock.advanceMillis(5_000);

    GatedFileSystem.arm(GatedFileSystem.Op.DELETE);
    CompletableFuture<Void> round = CompletableFuture.runAsync(() -> fs.ttlTick());
    assertThat(GatedFileSystem.entered.await(30, TimeUnit.SECONDS)).as("the round deletes a UFS copy").isTrue();
    String first = GatedFileSystem.held.endsWith("/a") ? "a" : "b";
    String other = first.equals("a") ? "b" : "a";
    // Meanwhile the other expired file is deleted, and a new one, with no TTL, is made at its path.
    fs.delete("/" + other, false);
    ufsFile(other, "new " + other);
    FileInfo made = fs.getStatus("/" + other);
    assertThat(made.ttlMs()).isEqualTo(-1);
    GatedFileSystem.release.countDown();
    round.get(30, TimeUnit.SECONDS);

    assertThat(fs.exists("/" + first)).isFalse();
    // What still holds the new file: the tree (same inode) and its UFS copy.
    assertThat(fs.getStatus("/" + other).id()).isEqualTo(made.id());
    assertThat(Files.readString(ufs.resolve(other))).isEqualTo("new " + other);
  }
}
