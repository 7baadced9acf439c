package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.master.MutableClock;
import io.strata.master.file.MasterReplies.PersistCommand;
import io.strata.master.file.MasterReplies.PersistResult;
import io.strata.master.file.MasterReplies.WorkerReply;
import io.strata.master.journal.Journal;
import io.strata.server.ufs.UfsManager;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An ASYNC_THROUGH file renamed or deleted while the master moves its persisted copy into place (a slow UFS rename,
 * as on S3). The file must not end PERSISTED at a path whose UFS location lacks its bytes, and a deleted file's
 * copy must not stay in the UFS (a later listing would load it back). The UFS is a real local dir whose rename,
 * once armed, waits for the test (Hadoop's RawLocalFileSystem, chosen through the root mount's {@code fs.file.impl}).
 */
class PersistRaceTest {
  private static final long BS = 100;

  @TempDir
  Path tmp;
  private Path ufs;
  private final UfsManager manager = new UfsManager();
  private final MutableClock clock = new MutableClock(1_700_000_000_000L);
  private Journal journal;
  private FileSystemMaster fs;
  private long worker;
  private long acked;

  @BeforeEach
  void setUp() throws IOException {
    ufs = Files.createDirectories(tmp.resolve("ufs"));
    journal = new Journal(tmp.resolve("journal"), 1 << 20);
    fs = FileSystemMasterUfsTest.open(tmp, ufs, manager, journal, clock,
        Map.of("fs.file.impl", GatedFileSystem.class.getName()), 1000);
    worker = fs.blockMaster().register(new WorkerAddress("w1", 29999), 1L << 30, 0, List.of(), 0);
  }

  @AfterEach
  void tearDown() {
    GatedFileSystem.disarm();
    journal.close();
    manager.close();
  }

  private WorkerReply heartbeat(List<PersistResult> results) {
    WorkerReply r = fs.workerHeartbeat(worker, 1L << 30, 0, List.of(), List.of(), null, 0, results, 0, acked);
    acked = r.evictable().seq();
    return r;
  }

  private FileInfo writeAsyncThrough(String path, long length) throws Exception {
    FileInfo f = fs.createFile(path, BS, true, 0, WriteType.ASYNC_THROUGH);
    for (long i = 0; i * BS < length; i++) {
      fs.commitBlock(worker, BlockId.of(f.id(), i), Math.min(BS, length - i * BS), "MEM");
    }
    return fs.completeFile(path, f.id(), length);
  }

  /** The worker's part of a persist: the command taken, the temp copy written, the result reported. */
  private void workerPersists(FileInfo f) throws Exception {
    fs.persistTick();
    PersistCommand c = heartbeat(List.of()).persist().get(0);
    assertThat(c.fileId()).isEqualTo(f.id());
    Path temp = Path.of(URI.create(c.ufsUri()));
    Files.createDirectories(temp.getParent());
    Files.write(temp, new byte[(int) f.length()]);
    heartbeat(List.of(new PersistResult(f.id(), true, "", f.length())));
  }

  /** Runs the master's next round with its UFS rename held; {@code meanwhile} runs while it is held. */
  private void finishWhile(ThrowingRunnable meanwhile) throws Exception {
    GatedFileSystem.arm(GatedFileSystem.Op.RENAME);
    CompletableFuture<Void> round = CompletableFuture.runAsync(() -> fs.persistTick());
    assertThat(GatedFileSystem.entered.await(30, TimeUnit.SECONDS)).as("the round renames").isTrue();
    meanwhile.run();
    GatedFileSystem.release.countDown();
    round.get(30, TimeUnit.SECONDS);
  }

  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  @Test
  void fileRenamedWhileItsCopyIsMovedIntoPlace_isNotPersistedAtTheOldPlace_andIsPersistedAtItsNewOne()
      throws Exception {
    FileInfo f = writeAsyncThrough("/a", 250);
    workerPersists(f);
    finishWhile(() -> fs.rename("/a", "/b"));

    FileInfo b = fs.getStatus("/b");
    // Not PERSISTED with its bytes under /a's name, and nothing left there.
    assertThat(b.persistence()).isEqualTo(PersistenceState.TO_BE_PERSISTED);
    assertThat(ufs.resolve("a")).doesNotExist();
    assertThat(ufs.resolve("b")).doesNotExist();

    // What holds the bytes meanwhile: the worker's cached blocks (still protected). The next round persists it.
    clock.advanceMillis(1_000);
    workerPersists(b);
    fs.persistTick();
    assertThat(fs.getStatus("/b").persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(Files.size(ufs.resolve("b"))).isEqualTo(250);
    assertThat(ufs.resolve("a")).doesNotExist();
  }

  @Test
  void fileDeletedWhileItsCopyIsMovedIntoPlace_leavesNoCopyInTheUfs() throws Exception {
    FileInfo f = writeAsyncThrough("/d", 250);
    workerPersists(f);
    finishWhile(() -> fs.delete("/d", false));

    assertThat(ufs.resolve("d")).as("a deleted file's copy would come back at the next listing").doesNotExist();
    fs.persistTick();
    assertThat(fs.persistBacklog()).as("no job left for the deleted file").isZero();
  }
}
