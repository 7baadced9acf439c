package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.PermissionDeniedException;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.master.MutableClock;
import io.strata.master.block.StorageDirState;
import io.strata.master.file.MasterReplies.PersistCommand;
import io.strata.master.file.MasterReplies.PersistResult;
import io.strata.master.file.MasterReplies.WorkerReply;
import io.strata.master.journal.Journal;
import io.strata.server.ufs.UfsManager;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Write leases (an abandoned incomplete file is recovered, a renewing writer keeps its file, a restarted
 * master starts leases afresh) and the rules that keep mounts and temp names away from Strata's own state,
 * on a real journal and a local-dir UFS, with a fake clock. Also: a through-written file's UFS temp, orphaned by a
 * delete before it completed, is deleted across a restart (journaled write targets and orphans).
 */
class LeaseAndMountSafetyTest {
  private static final Duration LEASE = Duration.ofSeconds(5);
  private static final long BS = 100;

  @TempDir
  Path tmp;
  private Path ufs;
  private final MutableClock clock = new MutableClock(1_700_000_000_000L);
  private final UfsManager manager = new UfsManager();
  private final List<Journal> journals = new ArrayList<>();
  private FileSystemMaster fs;
  private long worker;

  @BeforeEach
  void setUp() throws IOException {
    ufs = Files.createDirectories(tmp.resolve("ufs"));
    fs = open();
    worker = fs.blockMaster().register(new WorkerAddress("w1", 29999), 1L << 30, 0, List.of(), 0,
        List.of(new StorageDirState("MEM", 0, tmp.resolve("worker-mem").toString(), true, 1 << 20, 0, 0)));
  }

  @AfterEach
  void tearDown() {
    journals.forEach(Journal::close);
    manager.close();
  }

  private FileSystemMaster open() throws IOException {
    Journal journal = new Journal(tmp.resolve("journal"), 1 << 20);
    journals.add(journal);
    UfsConfig conf = new UfsConfig(manager, new MountTable.MountInfo("/", UfsManager.normalize(ufs.toString(), tmp),
        false, false, Map.of()), tmp.resolve("home"), BS, Duration.ofMillis(10), Duration.ofMillis(100),
        Duration.ofSeconds(30), Duration.ofSeconds(5), List.of(), 1000);
    FileSystemMaster m = new FileSystemMaster(clock, Duration.ofSeconds(30), 1 << 20, journal, conf);
    m.setLeaseTimeout(LEASE);
    m.setMountGuard(new MountGuard(List.of(tmp.resolve("journal"), tmp.resolve("data")), tmp.resolve("home"), false));
    FileSystemMasterUfsTest.recover(journal, m);
    return m;
  }

  private FileSystemMaster restart() throws IOException {
    journals.forEach(Journal::close);
    journals.clear();
    fs = open();
    return fs;
  }

  private FileInfo createWithBlocks(String path, String client, int blocks, WriteType type) throws StrataException {
    FileInfo f = fs.createFile(path, BS, true, 0644, type, client);
    for (int i = 0; i < blocks; i++) {
      fs.commitBlock(worker, BlockId.of(f.id(), i), BS, "MEM");
    }
    return f;
  }

  private WorkerReply heartbeat(long workerId, List<PersistResult> results) {
    return fs.workerHeartbeat(workerId, 1L << 30, 0, List.of(), List.of(), null, 0, results);
  }

  // ---- leases ----

  /**
   * A shuffle driver that dies: its marker ({@code /.shuffle/.drivers/<app>}, an incomplete file it renews) is
   * recovered once its lease runs out, and one more lease timeout later the application's shuffle files go (sealed
   * ones are complete: no lease covers them, so nothing else would remove them), their blocks too. A driver that only
   * paused past its lease and made its marker again in that time keeps its files; so does one that renews.
   */
  @Test
  void aDeadShuffleDriversMarker_takesItsApplicationsShuffleFilesWithIt() throws Exception {
    fs.createDirectory("/.shuffle/.drivers", true, false, 0755);
    for (String app : List.of("dead-1", "paused-1", "live-1")) {
      fs.createDirectory("/.shuffle/" + app + "/0", true, false, 0755);
      FileInfo sealed = createWithBlocks("/.shuffle/" + app + "/0/0-0", "driver-" + app, 1, WriteType.MUST_CACHE);
      fs.completeFile(sealed.path(), sealed.id(), BS);
      fs.createFile("/.shuffle/.drivers/" + app, BS, true, 0644, WriteType.MUST_CACHE, "driver-" + app);
    }
    long liveMarker = fs.getStatus("/.shuffle/.drivers/live-1").id();
    long deadBlock = BlockId.of(fs.getStatus("/.shuffle/dead-1/0/0-0").id(), 0);

    clock.advance(LEASE);
    fs.renewLease("driver-live-1", List.of(liveMarker));
    clock.advanceMillis(1);
    fs.leaseTick();
    assertThat(fs.exists("/.shuffle/.drivers/dead-1")).isFalse();
    assertThat(fs.exists("/.shuffle/.drivers/paused-1")).isFalse();
    assertThat(fs.exists("/.shuffle/dead-1/0/0-0")).as("kept for one more lease timeout").isTrue();
    // The paused driver comes back and makes its marker again.
    long again = fs.createFile("/.shuffle/.drivers/paused-1", BS, true, 0644, WriteType.MUST_CACHE, "driver-paused-1")
        .id();

    clock.advance(LEASE);
    fs.renewLease("driver-live-1", List.of(liveMarker));
    fs.renewLease("driver-paused-1", List.of(again));
    clock.advanceMillis(1);
    fs.leaseTick();

    assertThat(fs.exists("/.shuffle/dead-1")).as("the dead driver's shuffle files").isFalse();
    assertThat(heartbeat(worker, List.of()).removeBlockIds()).contains(deadBlock);
    assertThat(fs.getStatus("/.shuffle/paused-1/0/0-0").complete()).as("the paused driver's sealed file").isTrue();
    List<FileInfo> notes = new ArrayList<>();
    fs.listStatus("/.shuffle/.ended", false, 100, notes::addAll);
    assertThat(notes).as("no note left: one done, one whose marker came back").isEmpty();
    assertThat(fs.exists("/.shuffle/.drivers/live-1")).isTrue();
    assertThat(fs.getStatus("/.shuffle/live-1/0/0-0").complete()).as("a live driver's sealed file").isTrue();
  }

  /**
   * A master that starts leading between a dead driver's marker recovery and the delete of its files (here: a restart)
   * finds the note the recovery left ({@code /.shuffle/.ended/<app>}) and deletes the files one lease timeout later,
   * then the note. An application whose driver still holds its marker keeps its files.
   */
  @Test
  void aDeadShuffleDriversFiles_goEvenWhenTheMasterRestartedBeforeItsDelete() throws Exception {
    fs.createDirectory("/.shuffle/.drivers", true, false, 0755);
    for (String app : List.of("dead-2", "live-2")) {
      fs.createDirectory("/.shuffle/" + app + "/0", true, false, 0755);
      FileInfo sealed = createWithBlocks("/.shuffle/" + app + "/0/0-0", "driver-" + app, 1, WriteType.MUST_CACHE);
      fs.completeFile(sealed.path(), sealed.id(), BS);
      fs.createFile("/.shuffle/.drivers/" + app, BS, true, 0644, WriteType.MUST_CACHE, "driver-" + app);
    }
    long liveMarker = fs.getStatus("/.shuffle/.drivers/live-2").id();
    clock.advance(LEASE);
    fs.renewLease("driver-live-2", List.of(liveMarker));
    clock.advanceMillis(1);
    fs.leaseTick();
    assertThat(fs.exists("/.shuffle/.drivers/dead-2")).as("the dead driver's marker, recovered").isFalse();
    assertThat(fs.exists("/.shuffle/.ended/dead-2")).as("the note of its end").isTrue();

    restart(); // what was due in memory is forgotten
    fs.renewLease("driver-live-2", List.of(liveMarker));
    fs.leaseTick(); // the new master's first tick takes up the note
    assertThat(fs.exists("/.shuffle/dead-2/0/0-0")).as("kept for one lease timeout from the restart").isTrue();
    clock.advance(LEASE);
    fs.renewLease("driver-live-2", List.of(liveMarker));
    clock.advanceMillis(1);
    fs.leaseTick();

    assertThat(fs.exists("/.shuffle/dead-2")).as("the dead driver's shuffle files").isFalse();
    assertThat(fs.exists("/.shuffle/.ended/dead-2")).as("the note, once done").isFalse();
    assertThat(fs.getStatus("/.shuffle/live-2/0/0-0").complete()).as("a live driver's sealed file").isTrue();
    assertThat(fs.exists("/.shuffle/.drivers/live-2")).isTrue();
  }

  /** A reported block longer than its file's block size is no copy of it: removed, no record made. */
  @Test
  void aReportedBlockLongerThanItsFilesBlockSize_isRemoved() throws Exception {
    FileInfo f = fs.createFile("/big/f", BS, true, 0644, WriteType.MUST_CACHE, "client-b");
    long block = BlockId.of(f.id(), 0);
    WorkerReply r = fs.workerHeartbeat(worker, 1L << 30, 0,
        List.of(new io.strata.master.block.BlockReport(block, BS + 1, "MEM")), List.of(), null, 0, List.of());
    assertThat(fs.blockMaster().getBlock(block)).isNull();
    assertThat(r.removeBlockIds()).contains(block);
    fs.commitBlock(worker, block, BS, "MEM");
    assertThat(fs.blockMaster().getBlock(block).length()).isEqualTo(BS);
  }

  @Test
  void abandonedFile_isDeletedWithItsBlocks_onceTheLeaseRunsOut_andThePathIsFreeAgain() throws Exception {
    FileInfo f = createWithBlocks("/w/abandoned", "client-a", 2, WriteType.MUST_CACHE);
    assertThat(fs.leaseTick()).isEmpty(); // adopts nothing new: the file has its writer's lease
    clock.advance(LEASE);
    assertThat(fs.leaseTick()).as("exactly at the limit the lease still holds").isEmpty();
    clock.advanceMillis(1);
    assertThat(fs.leaseTick()).containsExactly(f.id());
    assertThat(fs.exists("/w/abandoned")).isFalse();
    assertThat(fs.blockMaster().blockCount()).isZero();
    // The worker holding the committed blocks is told to remove them (the usual removal path).
    assertThat(heartbeat(worker, List.of()).removeBlockIds())
        .containsExactlyInAnyOrder(BlockId.of(f.id(), 0), BlockId.of(f.id(), 1));
    assertThat(fs.leaseCount()).isZero();
    // The recovery was journaled: a restarted master does not bring the file back.
    assertThat(restart().exists("/w/abandoned")).isFalse();
    FileInfo again = fs.createFile("/w/abandoned", BS, true, 0644, WriteType.MUST_CACHE, "client-b");
    assertThat(again.id()).isNotEqualTo(f.id());
  }

  @Test
  void incompleteFileDeleted_isNamedToWorkersAsEnded_aCompletedOneIsNot() throws Exception {
    FileInfo deleted = createWithBlocks("/w/deleted", "client-a", 0, WriteType.MUST_CACHE);
    FileInfo completed = createWithBlocks("/w/completed", "client-a", 1, WriteType.MUST_CACHE);
    fs.leaseTick();
    assertThat(fs.recentlyRecoveredFileIds()).isEmpty();
    fs.completeFile("/w/completed", completed.id(), BS);
    fs.delete("/w/deleted", false);
    assertThat(fs.leaseTick()).as("nothing is recovered: the files ended by other means").isEmpty();
    // Workers holding temp blocks of the deleted file (a shuffle partition whose drop they missed) let
    // them go when a heartbeat names it; the completed file's blocks are committed and stay.
    assertThat(fs.recentlyRecoveredFileIds()).containsExactly(deleted.id());
    assertThat(fs.leaseCount()).isZero();
    clock.advanceMillis(60_001);
    assertThat(fs.recentlyRecoveredFileIds()).as("the notice lasts a minute").isEmpty();
  }

  @Test
  void writerThatRenews_keepsItsFile_pastSeveralLeasePeriods_andCompletesIt() throws Exception {
    FileInfo f = createWithBlocks("/w/kept", "client-a", 1, WriteType.MUST_CACHE);
    FileInfo other = createWithBlocks("/w/lapsed", "client-b", 1, WriteType.MUST_CACHE);
    for (int i = 0; i < 4; i++) {
      clock.advanceMillis(3_000);
      assertThat(fs.renewLease("client-a", List.of(f.id()))).isEmpty();
      fs.leaseTick();
    }
    assertThat(fs.exists("/w/kept")).isTrue();
    assertThat(fs.exists("/w/lapsed")).as("the other client never renewed").isFalse();
    assertThat(fs.completeFile("/w/kept", f.id(), BS).complete()).isTrue();
    // A renewal naming a file that is gone tells the writer it lost it.
    assertThat(fs.renewLease("client-b", List.of(other.id()))).containsExactly(other.id());
    clock.advance(LEASE.multipliedBy(2));
    fs.leaseTick();
    assertThat(fs.getStatus("/w/kept").complete()).as("complete files have no lease").isTrue();
  }

  @Test
  void newMaster_startsEveryLeaseAfresh_andARenewingWriterReattachesItsFile() throws Exception {
    FileInfo renewed = createWithBlocks("/w/renewed", "client-a", 1, WriteType.MUST_CACHE);
    FileInfo abandoned = createWithBlocks("/w/abandoned", "client-b", 1, WriteType.MUST_CACHE);
    clock.advance(LEASE.multipliedBy(10)); // long past every lease, but no master was leading
    restart();
    assertThat(fs.leaseTick()).as("leases start when the master starts leading").isEmpty();
    assertThat(fs.leaseCount()).isEqualTo(2);
    for (int i = 0; i < 3; i++) {
      clock.advanceMillis(3_000);
      fs.renewLease("client-a", List.of(renewed.id()));
      fs.leaseTick();
    }
    assertThat(fs.exists("/w/renewed")).isTrue();
    assertThat(fs.exists("/w/abandoned")).isFalse();
    assertThat(fs.tree().getFile(abandoned.id())).isNull();
  }

  @Test
  void recoveringAThroughWrite_deletesItsUfsTempFile() throws Exception {
    FileInfo f = fs.createFile("/t/through", BS, true, 0644, WriteType.THROUGH, "client-a");
    Path temp = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.createDirectories(temp.getParent());
    Files.write(temp, new byte[42]);
    clock.advance(LEASE.plusMillis(1));
    assertThat(fs.leaseTick()).containsExactly(f.id());
    assertThat(temp).doesNotExist();
    try (var files = Files.list(ufs.resolve("t"))) {
      assertThat(files.toList()).isEmpty();
    }
  }

  @Test
  void writerThatCompletesAfterItsLeaseRanOut_butBeforeTheCheck_keepsItsFile() throws Exception {
    FileInfo f = createWithBlocks("/w/late", "client-a", 1, WriteType.MUST_CACHE);
    clock.advance(LEASE.multipliedBy(3));
    assertThat(fs.completeFile("/w/late", f.id(), BS).complete()).isTrue(); // acknowledged
    assertThat(fs.leaseTick()).isEmpty();
    assertThat(fs.getStatus("/w/late").complete()).isTrue();
    assertThat(fs.blockMaster().blockCount()).isEqualTo(1);
  }

  @Test
  void renewalWithoutAClientId_isRefused() {
    assertThatThrownBy(() -> fs.renewLease("", List.of(1L))).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("client id");
  }

  // ---- temp names ----

  @Test
  void eachUfsWriteStream_getsItsOwnTempName_andCompletionUsesTheLastOne() throws Exception {
    FileInfo f = fs.createFile("/t/f", BS, true, 0644, WriteType.THROUGH, "client-a");
    String first = fs.ufsWriteTarget(f.id()).ufsUri();
    String second = fs.ufsWriteTarget(f.id()).ufsUri();
    assertThat(first).isNotEqualTo(second);
    assertThat(UfsTempNames.isTemp(Path.of(URI.create(second)).getFileName().toString())).isTrue();
    Files.createDirectories(Path.of(URI.create(first)).getParent());
    Files.write(Path.of(URI.create(first)), new byte[3]);
    Files.write(Path.of(URI.create(second)), new byte[5]);
    assertThat(fs.completeFile("/t/f", f.id(), 5).length()).isEqualTo(5);
    assertThat(Files.size(ufs.resolve("t/f"))).isEqualTo(5);
    // The first stream's temp, written whole but never placed, goes at the next round; the file's copy stays.
    fs.leaseTick();
    assertThat(Path.of(URI.create(first))).doesNotExist();
    assertThat(Files.size(ufs.resolve("t/f"))).isEqualTo(5);
  }

  @Test
  void aDeletedFile_hasTheTempsOfAllItsStreamsDeleted_acrossARestart() throws Exception {
    FileInfo f = fs.createFile("/t/g", BS, true, 0644, WriteType.THROUGH, "client-a");
    Path first = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Path second = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.createDirectories(first.getParent());
    Files.write(first, new byte[3]);
    Files.write(second, new byte[5]);
    fs.checkpoint(); // both targets in the checkpoint, the replaced one too
    restart();
    fs.delete("/t/g", false, true);
    fs.leaseTick();
    assertThat(first).doesNotExist();
    assertThat(second).doesNotExist();
  }

  @Test
  void aThroughWriteStartedBeforeARestart_stillCompletes() throws Exception {
    FileInfo f = fs.createFile("/t/r", BS, true, 0644, WriteType.THROUGH, "client-a");
    Path temp = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.createDirectories(temp.getParent());
    Files.write(temp, new byte[7]);
    restart();
    assertThat(fs.completeFile("/t/r", f.id(), 7).persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(Files.size(ufs.resolve("t/r"))).isEqualTo(7);
  }

  @Test
  void aThroughWriteWhoseCopyNeverArrived_isRefusedAfterARestart() throws Exception {
    FileInfo f = fs.createFile("/t/none/x", BS, true, 0644, WriteType.THROUGH, "client-a");
    restart();
    assertThatThrownBy(() -> fs.completeFile("/t/none/x", f.id(), 3))
        .isInstanceOf(io.strata.common.exception.FailedPreconditionException.class)
        .hasMessageContaining("never written");
  }

  @Test
  void userPathsShapedLikeTempNames_areRefusedNamingTheRule() throws Exception {
    String temp = "/d/.f.strata-12-00ff.tmp";
    assertThatThrownBy(() -> fs.createFile(temp, BS, true, 0644, WriteType.MUST_CACHE, "c"))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining(temp).hasMessageContaining("reserved");
    assertThatThrownBy(() -> fs.createDirectory("/.x.strata-3.tmp", true, false, 0755))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("reserved");
    fs.createFile("/d/ok", BS, true, 0644, WriteType.MUST_CACHE, "c");
    assertThatThrownBy(() -> fs.rename("/d/ok", temp)).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("reserved");
    assertThat(fs.exists("/d/ok")).isTrue();
    // Names that merely look alike are fine.
    assertThat(fs.createFile("/d/.f.strata-x.tmp", BS, true, 0644, WriteType.MUST_CACHE, "c").name())
        .isEqualTo(".f.strata-x.tmp");
  }

  // ---- persist results ----

  @Test
  void persistResult_isAcceptedOnlyFromTheWorkerThatWasAsked() throws Exception {
    long other = fs.blockMaster().register(new WorkerAddress("w2", 29998), 1L << 30, 0, List.of(), 0);
    FileInfo f = fs.createFile("/p/f", BS, true, 0644, WriteType.ASYNC_THROUGH, "c");
    fs.commitBlock(worker, BlockId.of(f.id(), 0), 50, "MEM");
    fs.completeFile("/p/f", f.id(), 50);
    fs.persistTick();
    PersistCommand cmd = heartbeat(worker, List.of()).persist().get(0);
    Path temp = Path.of(URI.create(cmd.ufsUri()));
    Files.createDirectories(temp.getParent());
    Files.write(temp, new byte[50]);
    heartbeat(other, List.of(new PersistResult(f.id(), true, "", 50)));
    fs.persistTick();
    assertThat(fs.getStatus("/p/f").persistence()).as("a result from a worker never asked")
        .isEqualTo(PersistenceState.TO_BE_PERSISTED);
    heartbeat(worker, List.of(new PersistResult(f.id(), true, "", 50)));
    fs.persistTick();
    assertThat(fs.getStatus("/p/f").persistence()).isEqualTo(PersistenceState.PERSISTED);
  }

  // ---- worker-facing calls ----

  @Test
  void mountCredentials_goOnlyToALiveRegisteredWorkerShowingItsToken() throws Exception {
    FileInfo f = fs.createFile("/c/f", BS, true, 0644, WriteType.THROUGH, "c");
    String token = fs.issueWorkerToken(worker);
    assertThat(fs.ufsWriteTarget(worker, token, f.id()).ufsUri()).contains(".f.strata-");
    assertThatThrownBy(() -> fs.ufsWriteTarget(worker, "guess", f.id()))
        .isInstanceOf(PermissionDeniedException.class).hasMessageContaining("token");
    assertThatThrownBy(() -> fs.ufsWriteTarget(worker + 1, token, f.id()))
        .isInstanceOf(PermissionDeniedException.class).hasMessageContaining("not a live registered worker");
    assertThatThrownBy(() -> fs.blockSource(0, "", BlockId.of(f.id(), 0)))
        .isInstanceOf(PermissionDeniedException.class).hasMessageContaining("GetBlockSource");
  }

  // ---- mounts ----

  @Test
  void mountsOverlappingStrataState_orWorkerDirs_orTheInstallDir_areRefused() throws Exception {
    for (String dir : List.of("journal", "journal/segments", "data/x", "worker-mem", "worker-mem/blocks", "home",
        "home/lib", "")) {
      Path p = Files.createDirectories(tmp.resolve(dir));
      fs.createDirectory("/m", true, true, 0755);
      assertThatThrownBy(() -> fs.mount("/m/x", p.toString(), false, false, Map.of()))
          .as(dir).isInstanceOf(InvalidArgumentException.class).hasMessageContaining("Cannot mount");
    }
    Path symlink = Files.createSymbolicLink(tmp.resolve("sneaky"), tmp.resolve("journal"));
    assertThatThrownBy(() -> fs.mount("/m/x", symlink.toString(), false, false, Map.of()))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("state dir");
    // Other spellings of the journal's URI: an upper-case scheme (Hadoop takes it as file:), an escaped path.
    for (String uri : List.of("FILE:" + tmp.resolve("journal"), "File://" + tmp.resolve("journal"),
        "file:" + tmp.resolve("jour%6eal"))) {
      assertThatThrownBy(() -> fs.mount("/m/x", uri, false, false, Map.of()))
          .as(uri).isInstanceOf(InvalidArgumentException.class).hasMessageContaining("Cannot mount");
    }
    Path fine = Files.createDirectories(tmp.resolve("elsewhere"));
    fs.mount("/m/x", fine.toString(), false, false, Map.of("fs.s3a.endpoint", "http://127.0.0.1:1"));
    assertThat(fs.mountTable()).extracting(MountTable.MountInfo::path).contains("/m/x");
  }

  @Test
  void mountOptionsThatLoadCode_andUrisWithCredentials_areRefused() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("other"));
    fs.createDirectory("/m", true, true, 0755);
    for (String key : List.of("fs.file.impl", "fs.AbstractFileSystem.file.impl", "hadoop.security.credential.provider.path",
        "fs.s3a.aws.credentials.provider", "io.serializations", "hadoop.rpc.socket.factory.class.default")) {
      assertThatThrownBy(() -> fs.mount("/m/o", dir.toString(), false, false, Map.of(key, "x")))
          .as(key).isInstanceOf(PermissionDeniedException.class).hasMessageContaining(key)
          .hasMessageContaining("strata.master.mount.options.unsafe.allowed");
    }
    assertThatThrownBy(() -> fs.mount("/m/o", "hdfs://alice:s3cret@127.0.0.1:1/x", false, false, Map.of()))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("credentials")
        .message().doesNotContain("s3cret");
    // A name Hadoop would trim into a code-loading key is refused as it is.
    for (String key : List.of("fs.file.impl ", " fs.file.impl", "fs.file.\timpl", "")) {
      assertThatThrownBy(() -> fs.mount("/m/o", dir.toString(), false, false,
          Map.of(key, "org.apache.hadoop.fs.RawLocalFileSystem")))
          .as("'" + key + "'").isInstanceOf(InvalidArgumentException.class).hasMessageContaining("white space");
    }
    assertThat(MountGuard.unsafeOption("fs.s3a.endpoint")).isFalse();
    assertThat(MountGuard.unsafeOption("dfs.client.use.datanode.hostname")).isFalse();
  }

  @Test
  void mountOptionValues_neverAppearInToStrings_whichLogsAndErrorsUse() {
    Map<String, String> secret = Map.of("fs.s3a.secret.key", "s3cret-value");
    for (Object o : List.of(new MountTable.MountInfo("/m", "s3a://b/x", false, false, secret),
        new io.strata.master.journal.JournalEntry.AddMount("/m", "s3a://b/x", false, false, secret),
        new MasterReplies.UfsTarget("s3a://b/x", secret), new MasterReplies.UfsSource("s3a://b/x", secret, 0, 1, 0, ""),
        new MasterReplies.PersistCommand(1, "s3a://b/x", secret, List.of()))) {
      assertThat(o.toString()).contains("fs.s3a.secret.key").doesNotContain("s3cret-value");
    }
  }

  @Test
  void rootUfsOverlappingTheJournal_isRefusedAtStart() {
    MountGuard guard = new MountGuard(List.of(tmp.resolve("journal")), tmp.resolve("home"), false);
    assertThatThrownBy(() -> guard.checkRoot(UfsManager.normalize(tmp.toString(), tmp)))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("root under file system");
  }

  // ---- the UFS temps of through-written files deleted before they completed, across restarts ----
  // The write targets are journaled, and in checkpoints the orphans not deleted yet: the temp of a file deleted
  // before a restart (or a standby's takeover) goes at the next master's first round, the other file's copy stays.

  /** A through-written file whose worker wrote its whole temp copy; returns the temp. */
  private Path writtenThrough(String path, WriteType type, String content) throws Exception {
    FileInfo f = fs.createFile(path, BS, true, 0, type);
    Path temp = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.writeString(temp, content);
    return temp;
  }

  /** The other file, completed: its UFS copy must outlive every clean-up. */
  private void keptFile() throws Exception {
    FileInfo kept = fs.createFile("/orphan/kept", BS, true, 0, WriteType.THROUGH);
    Files.writeString(Path.of(URI.create(fs.ufsWriteTarget(kept.id()).ufsUri())), "kk");
    fs.completeFile("/orphan/kept", kept.id(), 2);
  }

  private List<String> orphanDirNames() throws IOException {
    try (java.util.stream.Stream<Path> s = Files.list(ufs.resolve("orphan"))) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void aFileDeletedBeforeARestart_hasItsTempDeletedByTheNextMaster() throws Exception {
    Path temp = writtenThrough("/orphan/f", WriteType.CACHE_THROUGH, "written whole, too late");
    keptFile();
    fs.delete("/orphan/f", false, true);
    assertThat(temp).as("not deleted by the delete itself").exists();

    restart().leaseTick(); // the first round of the next master

    assertThat(temp).doesNotExist();
    assertThat(orphanDirNames()).containsExactly("kept");
    assertThat(ufs.resolve("orphan/kept")).hasContent("kk");
  }

  @Test
  void aFileDeletedBeforeACheckpointAndARestart_hasItsTempDeletedByTheNextMaster() throws Exception {
    Path temp = writtenThrough("/orphan/f", WriteType.THROUGH, "partial");
    keptFile();
    fs.delete("/orphan/f", false, true);
    fs.checkpoint(); // the journal's entries before it are gone: only the checkpoint names the orphan

    restart().leaseTick();

    assertThat(temp).doesNotExist();
    assertThat(orphanDirNames()).containsExactly("kept");
  }

  @Test
  void aFileBeingWrittenAtARestart_andDeletedUnderTheNextMaster_hasItsTempDeleted() throws Exception {
    Path temp = writtenThrough("/orphan/f", WriteType.CACHE_THROUGH, "abandoned");
    keptFile();
    fs.checkpoint(); // the target survives a checkpoint too

    restart();
    fs.delete("/orphan/f", false, true); // its writer gave up under the new master
    fs.leaseTick();

    assertThat(temp).doesNotExist();
    assertThat(orphanDirNames()).containsExactly("kept");
  }

  @Test
  void aFileBeingWrittenAtARestart_completesUnderTheNextMaster_andKeepsItsCopy() throws Exception {
    writtenThrough("/orphan/f", WriteType.THROUGH, "abc");
    restart();
    fs.completeFile("/orphan/f", fs.getStatus("/orphan/f").id(), 3);
    fs.checkpoint();

    restart().leaseTick();

    assertThat(fs.getStatus("/orphan/f").length()).isEqualTo(3);
    assertThat(orphanDirNames()).containsExactly("f");
    assertThat(ufs.resolve("orphan/f")).hasContent("abc");
  }

  @Test
  void anAbandonedThroughWriteRecoveredUnderTheNextMaster_hasItsTempDeleted() throws Exception {
    FileInfo f = fs.createFile("/orphan/f", BS, true, 0644, WriteType.CACHE_THROUGH, "writer-gone");
    Path temp = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.writeString(temp, "abandoned");
    keptFile();

    restart();
    assertThat(fs.leaseTick()).as("leases start when the master starts leading").isEmpty();
    clock.advance(LEASE);
    clock.advanceMillis(1);
    assertThat(fs.leaseTick()).containsExactly(f.id()); // recovered, then the round deletes its temp

    assertThat(temp).doesNotExist();
    assertThat(orphanDirNames()).containsExactly("kept");
  }

  @Test
  void anOrphanDeletedByOneMaster_isForgottenByTheNext() throws Exception {
    Path temp = writtenThrough("/orphan/f", WriteType.CACHE_THROUGH, "x");
    fs.delete("/orphan/f", false, true);
    assertThat(fs.orphanedTempCount()).isEqualTo(1);
    fs.leaseTick();
    assertThat(temp).doesNotExist();
    assertThat(fs.orphanedTempCount()).isZero();

    assertThat(restart().orphanedTempCount()).as("its delete was journaled: a standby or the next master forgets it")
        .isZero();
  }
}
