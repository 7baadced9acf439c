package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.NotFoundException;
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
import java.nio.charset.StandardCharsets;
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
 * The master's background work racing a client's change while a UFS call is slow (held by the test: a real local
 * dir, {@link GatedFileSystem}, as on S3):
 * <ul>
 *   <li>an ASYNC_THROUGH file renamed or deleted while the master moves its persisted copy into place must not end
 *       PERSISTED at a path whose UFS location lacks its bytes, and a deleted file's copy must not stay in the UFS
 *       (a later listing would load it back);</li>
 *   <li>a TTL round deleting one expired file's UFS copy must not delete a file made meanwhile at another expired
 *       path (its time did not run out).</li>
 * </ul>
 */
class UfsRaceTest {
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

  /** Runs {@code r} on another thread (a client call racing the master's own work). */
  private static CompletableFuture<Void> async(ThrowingRunnable r) {
    return CompletableFuture.runAsync(() -> {
      try {
        r.run();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  /**
   * A rename of a file whose copy a persist is moving into place waits for the placement (both hold the file's path),
   * then moves the placed copy with the file. Before, the rename ran in the middle: nothing moved in the UFS for a
   * file not yet persisted, and a persist that read the old path could then clear whatever another rename brought
   * there (another file's only durable copy).
   */
  @Test
  void fileRenamedWhileItsCopyIsMovedIntoPlace_waitsForThePlacement_andTakesItsCopyAlong() throws Exception {
    FileInfo f = writeAsyncThrough("/a", 250);
    workerPersists(f);
    CompletableFuture<?>[] rename = {null};
    finishWhile(() -> {
      rename[0] = async(() -> fs.rename("/a", "/b"));
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
          .until(() -> fs.changesWaiting() == 1 || rename[0].isDone());
      assertThat(rename[0]).as("the rename waits for the copy's placement").isNotDone();
    });
    rename[0].get(30, TimeUnit.SECONDS);
    // The bytes are held by the UFS copy, which moved with the file.
    assertThat(fs.getStatus("/b").persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(Files.size(ufs.resolve("b"))).isEqualTo(250);
    assertThat(ufs.resolve("a")).doesNotExist();
    assertThat(fs.exists("/a")).isFalse();
  }

  /**
   * A rename that brings another, persisted file to the path of a file being persisted, once that file moved away:
   * the rename of the persisted file waits while the placement holds the path, and the placement finds its file gone
   * from the path and clears nothing there. The persisted file's copy is intact at the end.
   */
  @Test
  void aPersistedFileRenamedOntoThePathOfAFileBeingPersisted_keepsItsCopy() throws Exception {
    ufsFile("y", "bytes of y, persisted");
    fs.getStatus("/y"); // loaded: PERSISTED
    FileInfo x = writeAsyncThrough("/x", 250);
    workerPersists(x);
    CompletableFuture<?>[] moves = {null};
    finishWhile(() -> moves[0] = async(() -> {
      fs.rename("/x", "/x2"); // waits for the placement of /x's copy
      fs.rename("/y", "/x");
    }));
    moves[0].get(30, TimeUnit.SECONDS);
    assertThat(Files.readString(ufs.resolve("x"))).isEqualTo("bytes of y, persisted");
    assertThat(fs.getStatus("/x").persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(fs.getStatus("/x2").persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(Files.size(ufs.resolve("x2"))).isEqualTo(250);
  }

  @Test
  void fileDeletedWhileItsCopyIsMovedIntoPlace_waitsForIt_andLeavesNoCopyInTheUfs() throws Exception {
    FileInfo f = writeAsyncThrough("/d", 250);
    workerPersists(f);
    CompletableFuture<?>[] delete = {null};
    finishWhile(() -> delete[0] = async(() -> fs.delete("/d", false)));
    delete[0].get(30, TimeUnit.SECONDS);

    assertThat(ufs.resolve("d")).as("a deleted file's copy would come back at the next listing").doesNotExist();
    assertThat(fs.exists("/d")).isFalse();
    fs.persistTick();
    assertThat(fs.persistBacklog()).as("no job left for the deleted file").isZero();
  }

  /**
   * A CACHE_THROUGH complete under a directory whose rename is in the UFS waits for the rename (it holds a related
   * path), and then fails with a clear error rather than clearing or placing anything at the old path: the rename
   * took the file and its temporary copy along. What holds the bytes: that copy, under the new directory.
   */
  @Test
  void aCacheThroughCompleteUnderADirectoryBeingRenamed_waitsForIt_andPlacesNothingAtTheOldPath() throws Exception {
    Files.createDirectories(ufs.resolve("dir"));
    ufsFile("dir/other", "o");
    fs.getStatus("/dir/other");
    FileInfo f = fs.createFile("/dir/ct", BS, true, 0, WriteType.CACHE_THROUGH);
    Path temp = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.write(temp, new byte[30]);
    GatedFileSystem.arm(GatedFileSystem.Op.RENAME);
    CompletableFuture<Void> rename = async(() -> fs.rename("/dir", "/moved"));
    assertThat(GatedFileSystem.entered.await(30, TimeUnit.SECONDS)).as("the rename is in the UFS").isTrue();
    CompletableFuture<Void> complete = async(() -> fs.completeFile("/dir/ct", f.id(), 30));
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
        .until(() -> fs.changesWaiting() == 1 || complete.isDone());
    assertThat(complete).as("the complete waits for the rename").isNotDone();
    GatedFileSystem.release.countDown();
    rename.get(30, TimeUnit.SECONDS);
    assertThatThrownBy(() -> complete.get(30, TimeUnit.SECONDS)).hasRootCauseInstanceOf(
        io.strata.common.exception.StrataException.class);
    assertThat(ufs.resolve("dir")).doesNotExist();
    assertThat(Files.readString(ufs.resolve("moved/other"))).isEqualTo("o");
    assertThat(ufs.resolve("moved").resolve(temp.getFileName())).exists();
    assertThat(fs.getStatus("/moved/ct").complete()).isFalse();
  }

  /**
   * A writer's lease that runs out while its CACHE_THROUGH complete is moving the copy into place: the recovery leaves
   * the file to the complete (it holds the path), which wins. Before, the recovery deleted the file after its copy was
   * in place: the writer was told its file failed while the copy came back at the next listing.
   */
  @Test
  void leaseRecovery_leavesAFileWhoseCopyIsBeingPlaced_andItsCompleteWins() throws Exception {
    fs.setLeaseTimeout(java.time.Duration.ofSeconds(10));
    FileInfo f = fs.createFile("/lr", BS, true, 0644, WriteType.CACHE_THROUGH, "client-x");
    Path temp = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.write(temp, new byte[30]);
    assertThat(fs.leaseTick()).isEmpty();
    GatedFileSystem.arm(GatedFileSystem.Op.RENAME);
    CompletableFuture<Void> complete = async(() -> fs.completeFile("/lr", f.id(), 30));
    assertThat(GatedFileSystem.entered.await(30, TimeUnit.SECONDS)).as("the copy is being placed").isTrue();
    clock.advanceMillis(20_000);
    assertThat(fs.leaseTick()).as("its complete holds the path").isEmpty();
    GatedFileSystem.release.countDown();
    complete.get(30, TimeUnit.SECONDS);
    // The bytes are held by the placed UFS copy of a complete, persisted file.
    assertThat(fs.getStatus("/lr").persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(Files.size(ufs.resolve("lr"))).isEqualTo(30);
    assertThat(fs.leaseTick()).isEmpty();
    assertThat(fs.exists("/lr")).isTrue();
  }

  /**
   * A delete and a rename of one persisted file at once: the rename waits for the delete (whose UFS delete is held),
   * then finds nothing to rename. Before, the rename moved only the inode (the UFS copy was already gone) and both
   * were answered OK: /q PERSISTED with no bytes anywhere.
   */
  @Test
  void aRenameOfAFileBeingDeleted_waitsForTheDelete_andFindsNothing() throws Exception {
    ufsFile("p", "bytes of p");
    fs.getStatus("/p"); // loaded: PERSISTED
    GatedFileSystem.arm(GatedFileSystem.Op.DELETE);
    CompletableFuture<Void> delete = async(() -> fs.delete("/p", false));
    assertThat(GatedFileSystem.entered.await(30, TimeUnit.SECONDS)).as("the delete is in the UFS").isTrue();
    CompletableFuture<Void> rename = async(() -> fs.rename("/p", "/q"));
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
        .until(() -> fs.changesWaiting() == 1 || rename.isDone());
    assertThat(rename).as("the rename waits for the delete of its source").isNotDone();
    GatedFileSystem.release.countDown();
    delete.get(30, TimeUnit.SECONDS);
    assertThatThrownBy(() -> rename.get(30, TimeUnit.SECONDS)).hasRootCauseInstanceOf(NotFoundException.class);
    assertThat(fs.exists("/p")).isFalse();
    assertThat(fs.exists("/q")).isFalse();
    assertThat(ufs.resolve("p")).doesNotExist();
    assertThat(ufs.resolve("q")).doesNotExist();
  }

  /**
   * The other order: a delete of a file being renamed (its UFS rename held) waits for the rename, then finds
   * nothing at the old path; the file and its bytes are at the new one. Before, the delete removed the inode while
   * the UFS copy moved, the rename failed and put the copy back, where it came back at the next listing.
   */
  @Test
  void aDeleteOfAFileBeingRenamed_waitsForTheRename_andTheFileKeepsItsBytes() throws Exception {
    ufsFile("r", "bytes of r");
    fs.getStatus("/r");
    GatedFileSystem.arm(GatedFileSystem.Op.RENAME);
    CompletableFuture<Void> rename = async(() -> fs.rename("/r", "/s"));
    assertThat(GatedFileSystem.entered.await(30, TimeUnit.SECONDS)).as("the rename is in the UFS").isTrue();
    CompletableFuture<Void> delete = async(() -> fs.delete("/r", false));
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
        .until(() -> fs.changesWaiting() == 1 || delete.isDone());
    assertThat(delete).as("the delete waits for the rename of its path").isNotDone();
    GatedFileSystem.release.countDown();
    rename.get(30, TimeUnit.SECONDS);
    assertThatThrownBy(() -> delete.get(30, TimeUnit.SECONDS)).hasRootCauseInstanceOf(NotFoundException.class);
    assertThat(fs.getStatus("/s").persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(Files.readString(ufs.resolve("s"))).isEqualTo("bytes of r");
    assertThat(ufs.resolve("r")).doesNotExist();
  }

  private void ufsFile(String name, String content) throws IOException {
    Files.createDirectories(ufs.resolve(name).getParent());
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

  /**
   * A file written into a directory while a mount at that directory probes its UFS (slow, as an object store is)
   * refuses the mount, and stays readable where it was written. Before, the mount checked the directory was empty only
   * before the probe and then mounted over it: the file, told it was written, resolved to the new UFS and was lost
   * from view.
   */
  @Test
  void aMountAtADirectoryFilledWhileItsUfsIsProbed_isRefused_andTheFileStays() throws Exception {
    Path other = Files.createDirectories(tmp.resolve("other-ufs"));
    fs.createDirectory("/data/new", true, false, 0755);
    GatedFileSystem.arm(GatedFileSystem.Op.STATUS, "/other-ufs");
    CompletableFuture<Void> mount = async(() -> fs.mount("/data/new", other.toString(), false, false,
        Map.of("fs.file.impl", GatedFileSystem.class.getName())));
    assertThat(GatedFileSystem.entered.await(30, TimeUnit.SECONDS)).as("the mount probes its UFS").isTrue();
    FileInfo f = writeAsyncThrough("/data/new/f", 150);
    GatedFileSystem.release.countDown();
    assertThatThrownBy(() -> mount.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class)
        .hasRootCauseInstanceOf(io.strata.common.exception.FailedPreconditionException.class)
        .hasStackTraceContaining("not an empty directory now");
    assertThat(fs.mountTable()).extracting(MountTable.MountInfo::path).containsExactly("/");
    // What holds the bytes: the file's cached blocks, at the path it was written to, under the root mount.
    assertThat(fs.getStatus("/data/new/f").id()).isEqualTo(f.id());
    assertThat(fs.blocksOf(fs.getStatus("/data/new/f"))).hasSize(2);
  }

  /**
   * While a rename's UFS call is under way (an object store's rename copies object by object, so the destination
   * appears part by part), a look at the destination does not load what the copy made so far, and a listing does not
   * add it: the rename then finds its destination free and completes. Before, the look loaded the destination as a
   * persisted file, the rename failed ALREADY_EXISTS, and the loaded entry stayed (a sync interval of -1 never looks
   * again) although the UFS rename was undone.
   */
  @Test
  void aLookAtARenamesDestinationWhileItsUfsCopyRuns_loadsNothing_andTheRenameCompletes() throws Exception {
    ufsFile("out/_tmp/part-0", "bytes of part 0");
    assertThat(fs.getStatus("/out/_tmp").persisted()).isTrue();
    GatedFileSystem.arm(GatedFileSystem.Op.RENAME);
    CompletableFuture<Void> rename = async(() -> fs.rename("/out/_tmp", "/out/final"));
    assertThat(GatedFileSystem.entered.await(30, TimeUnit.SECONDS)).as("the rename is in the UFS").isTrue();
    // The copy has made part of the destination so far.
    ufsFile("out/final/part-0", "bytes of part 0");
    assertThatThrownBy(() -> fs.getStatus("/out/final/part-0")).isInstanceOf(NotFoundException.class);
    List<String> names = new java.util.ArrayList<>();
    fs.listStatus("/out", false, 100, b -> b.forEach(f -> names.add(f.name())), 0);
    assertThat(names).containsExactly("_tmp");
    // (The local UFS renames all at once when released: the partial copy is taken away first.)
    Files.delete(ufs.resolve("out/final/part-0"));
    Files.delete(ufs.resolve("out/final"));
    GatedFileSystem.release.countDown();
    rename.get(30, TimeUnit.SECONDS);
    assertThat(fs.getStatus("/out/final/part-0").persisted()).isTrue();
    assertThat(fs.exists("/out/_tmp")).isFalse();
    assertThat(Files.readString(ufs.resolve("out/final/part-0"))).isEqualTo("bytes of part 0");
  }
}
