package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.PermissionDeniedException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The file system master over a real local-dir under file system and a real journal: loading what the UFS
 * holds, syncing changes made straight in the UFS, mounts and their rules, write types, persistence,
 * free, pins and TTLs, and all of that surviving a restart from the journal.
 */
class FileSystemMasterUfsTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final long BS = 100;
  private static final String TIER = "MEM";

  @TempDir
  Path tmp;
  private Path ufs;
  private final MutableClock clock = new MutableClock(1_700_000_000_000L);
  private final UfsManager manager = new UfsManager();
  private final List<Journal> journals = new ArrayList<>();
  private FileSystemMaster fs;
  private long worker;
  private int persistMaxInFlight = 1000;
  /** The last evictable batch {@link #heartbeat} got. */
  private long acked;

  @BeforeEach
  void setUp() throws IOException {
    ufs = Files.createDirectories(tmp.resolve("ufs"));
    fs = open();
    worker = fs.blockMaster().register(new WorkerAddress("w1", 29999), 1L << 30, 0, List.of(), 0);
  }

  @AfterEach
  void tearDown() {
    journals.forEach(Journal::close);
    manager.close();
  }

  private FileSystemMaster open() throws IOException {
    Journal journal = new Journal(tmp.resolve("journal"), 1 << 20);
    journals.add(journal);
    return open(tmp, ufs, manager, journal, clock, Map.of(), persistMaxInFlight);
  }

  /**
   * A master over {@code journal} (replayed) whose root mount is the local dir {@code ufs} with
   * {@code rootOptions}, its state under {@code tmp} (shared by the master tests here).
   */
  static FileSystemMaster open(Path tmp, Path ufs, UfsManager manager, Journal journal, MutableClock clock,
      Map<String, String> rootOptions, int persistMaxInFlight) throws IOException {
    UfsConfig conf = new UfsConfig(manager, new MountTable.MountInfo("/", UfsManager.normalize(ufs.toString(), tmp),
        false, false, rootOptions), tmp, BS, Duration.ofMillis(10), Duration.ofMillis(100), Duration.ofSeconds(30),
        Duration.ofSeconds(5), List.of(UfsManager.normalize(tmp.toString(), tmp), "hdfs://127.0.0.1:1/"),
        persistMaxInFlight);
    FileSystemMaster m = new FileSystemMaster(clock, TIMEOUT, 1 << 20, journal, conf);
    recover(journal, m);
    return m;
  }

  /** Replays {@code journal} into {@code m} and starts writing, as a master does at start (shared by the master tests here). */
  static void recover(Journal journal, FileSystemMaster m) throws IOException {
    journal.replay(e -> {
      try {
        m.replay(e);
      } catch (StrataException ex) {
        throw new IllegalStateException(ex);
      }
    });
    journal.startWriting();
  }

  private FileSystemMaster restart() throws IOException {
    journals.forEach(Journal::close);
    journals.clear();
    fs = open();
    return fs;
  }

  private Path ufsFile(String rel, String content) throws IOException {
    Path p = ufs.resolve(rel);
    Files.createDirectories(p.getParent());
    Files.writeString(p, content, StandardCharsets.UTF_8);
    return p;
  }

  private List<String> names(String dir, long syncMs) throws StrataException {
    List<String> out = new ArrayList<>();
    fs.listStatus(dir, false, 100, b -> b.forEach(f -> out.add(f.name())), syncMs);
    return out;
  }

  /** Writes a MUST_CACHE or ASYNC_THROUGH file of {@code length} bytes whose blocks live on the worker. */
  private FileInfo writeCached(String path, long length, WriteType type) throws StrataException {
    FileInfo f = fs.createFile(path, BS, true, 0, type);
    for (long i = 0; i * BS < length; i++) {
      fs.commitBlock(worker, BlockId.of(f.id(), i), Math.min(BS, length - i * BS), TIER);
    }
    return fs.completeFile(path, f.id(), length);
  }

  // ---- loading and syncing ----

  @Test
  void aFileWrittenStraightIntoTheUfs_isLoadedOnFirstAccess_asPersistedAndComplete() throws Exception {
    ufsFile("data/part-0", "hello ufs");
    FileInfo f = fs.getStatus("/data/part-0");
    assertThat(f.complete()).isTrue();
    assertThat(f.length()).isEqualTo(9);
    assertThat(f.persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(f.ufsPath()).isEqualTo(UfsManager.normalize(ufs.resolve("data/part-0").toString(), tmp));
    assertThat(fs.getStatus("/data").persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(fs.blocksOf(f)).hasSize(1);
    assertThat(fs.blocksOf(f).get(0).length()).isEqualTo(9);
    assertThatThrownBy(() -> fs.getStatus("/data/missing")).isInstanceOf(NotFoundException.class);
  }

  @Test
  void listing_loadsTheUfsOnce_andSeesLaterUfsChangesOnlyWhenSynced() throws Exception {
    ufsFile("d/a", "1");
    ufsFile("d/sub/b", "22");
    assertThat(names("/d", -1)).containsExactly("a", "sub");
    ufsFile("d/c", "333");
    Files.delete(ufs.resolve("d/a"));
    assertThat(names("/d", -1)).containsExactly("a", "sub"); // -1: loaded once, never re-checked
    clock.advanceMillis(1000);
    assertThat(names("/d", 5000)).containsExactly("a", "sub"); // checked within the last 5 s
    assertThat(names("/d", 500)).containsExactly("c", "sub");
    assertThat(fs.getStatus("/d/c").length()).isEqualTo(3);
  }

  @Test
  void loadingFromTheUfs_leavesDirectoryTimesAsTheyWere_afterARestartToo() throws Exception {
    fs.createDirectory("/d", true, false, 0);
    fs.createFile("/d/own", BS, true, 0, WriteType.MUST_CACHE); // /d's time: now
    long dirTime = fs.getStatus("/d").modificationTimeMs();
    ufsFile("d/a", "1");
    ufsFile("d/sub/b", "22");
    ufsFile("e/deep/c", "333");
    clock.advanceMillis(60_000);
    assertThat(names("/d", -1)).contains("a", "sub", "own"); // a listing loads two children
    fs.getStatus("/e/deep/c"); // a lookup loads a path: / gains e
    clock.advanceMillis(61_000);
    ufsFile("d/a", "changed"); // a sync replaces it
    assertThat(fs.getStatus("/d/a", 500).length()).isEqualTo(7);
    Map<String, Long> times = new TreeMap<>();
    for (String dir : List.of("/", "/d", "/d/sub", "/e", "/e/deep")) {
      times.put(dir, fs.getStatus(dir).modificationTimeMs());
    }
    assertThat(times.get("/d")).isEqualTo(dirTime);
    restart();
    for (Map.Entry<String, Long> t : times.entrySet()) {
      assertThat(fs.getStatus(t.getKey()).modificationTimeMs()).as(t.getKey()).isEqualTo(t.getValue());
    }
  }

  @Test
  void aFileChangedInTheUfs_isReplacedOnSync_butDataOnlyStrataHasIsNeverTouched() throws Exception {
    ufsFile("d/f", "short");
    long oldId = fs.getStatus("/d/f").id();
    writeCached("/d/mine", 150, WriteType.MUST_CACHE);
    ufsFile("d/f", "a longer content");
    assertThat(fs.getStatus("/d/f", -1).length()).isEqualTo(5);
    FileInfo synced = fs.getStatus("/d/f", 0);
    assertThat(synced.length()).isEqualTo(16);
    assertThat(synced.id()).isNotEqualTo(oldId);
    names("/d", 0);
    assertThat(fs.getStatus("/d/mine").length()).isEqualTo(150); // not in the UFS, yet kept
    Files.delete(ufs.resolve("d/f"));
    assertThatThrownBy(() -> fs.getStatus("/d/f", 0)).isInstanceOf(NotFoundException.class);
  }

  @Test
  void aUfsViewTakenBeforeAChange_neverUndoesIt() throws Exception {
    ufsFile("race/old", "o");
    assertThat(names("/race", -1)).containsExactly("old");
    String raceUri = UfsManager.normalize(ufs.resolve("race").toString(), tmp);
    // A listing taken now...
    long since = fs.tree().changeSeq();
    List<io.strata.server.ufs.UfsStatus> stale = manager.get(raceUri, Map.of()).listStatus(raceUri);
    // ...then a file is written through (PERSISTED, absent from that listing) and "old" is deleted.
    FileInfo f = fs.createFile("/race/new", BS, true, 0, WriteType.THROUGH);
    Path temp = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.writeString(temp, "nn");
    fs.completeFile("/race/new", f.id(), 2);
    fs.delete("/race/old", false, false);
    UfsMerge.Merged merged = new UfsMerge(fs.tree()).mergeListing(io.strata.common.path.StrataPath.of("/race"),
        stale, BS, p -> false, since);
    assertThat(merged.stale()).isTrue();
    assertThat(merged.removedFiles()).isEmpty();
    assertThat(fs.tree().exists(io.strata.common.path.StrataPath.of("/race/new"))).isTrue();
    assertThat(fs.tree().exists(io.strata.common.path.StrataPath.of("/race/old"))).isFalse();
    // The same stale view cannot remove the new file one path at a time either.
    assertThat(new UfsMerge(fs.tree()).syncPath(io.strata.common.path.StrataPath.of("/race/new"), null, BS, since))
        .isEmpty();
    assertThat(names("/race", 0)).containsExactly("new");
  }

  /**
   * A through-written file deleted before it completed (its write failed and its client deleted it, say, after the
   * worker's UFS close outlasted the client's deadline): the UFS copy its worker wrote under the temporary name goes
   * at the master's next background round, where before it stayed for good. A completed file's copy is untouched.
   */
  @Test
  void theUfsCopyOfAFileDeletedWhileWrittenThrough_isDeleted() throws Exception {
    FileInfo f = fs.createFile("/orphan/f", BS, true, 0, WriteType.CACHE_THROUGH);
    Path temp = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.writeString(temp, "written whole, too late");
    FileInfo kept = fs.createFile("/orphan/kept", BS, true, 0, WriteType.THROUGH);
    Files.writeString(Path.of(URI.create(fs.ufsWriteTarget(kept.id()).ufsUri())), "kk");
    fs.completeFile("/orphan/kept", kept.id(), 2);

    fs.delete("/orphan/f", false, true);
    assertThat(temp).as("deleted at the next round, not by the delete").exists();
    fs.leaseTick();

    assertThat(temp).doesNotExist();
    assertThat(ufs.resolve("orphan/kept")).hasContent("kk");
    try (var left = Files.list(ufs.resolve("orphan"))) {
      assertThat(left.map(p -> p.getFileName().toString())).containsExactly("kept");
    }
  }

  @Test
  void temporaryNamesOfWritesInProgress_areNeverLoaded() throws Exception {
    ufsFile("d/.x.strata-12.tmp", "partial");
    ufsFile("d/x", "whole");
    assertThat(names("/d", 0)).containsExactly("x");
  }

  // ---- write types and persistence ----

  /**
   * A master that placed a through-written file's copy and failed before its complete became durable: the next
   * master (here: a restart) finds no temp copy but one of the file's length in place, and the writer's retried
   * complete succeeds. Before, it failed "never written"; the writer then deleted the file from Strata, and the
   * complete copy left in the UFS came back at the next listing as a file the writer was told had failed.
   */
  @Test
  void aCompleteRetriedAfterTheMasterBeforePlacedTheCopy_succeeds() throws Exception {
    FileInfo f = fs.createFile("/placed/t", BS, true, 0, WriteType.THROUGH);
    Path temp = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.createDirectories(temp.getParent());
    Files.writeString(temp, "abcd");
    Files.move(temp, ufs.resolve("placed/t")); // the old master's rename, its complete never durable
    restart();
    assertThatThrownBy(() -> fs.completeFile("/placed/t", f.id(), 5)).as("another length is not this copy")
        .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("never written");
    FileInfo done = fs.completeFile("/placed/t", f.id(), 4);
    assertThat(done.persistence()).isEqualTo(PersistenceState.PERSISTED);
    // What holds the bytes: the copy the old master placed.
    assertThat(Files.readString(ufs.resolve("placed/t"))).isEqualTo("abcd");
    assertThat(restart().getStatus("/placed/t").complete()).isTrue();
  }

  @Test
  void throughWrites_completeOnlyOnceTheirUfsCopyIsThere_andAreRenamedIntoPlace() throws Exception {
    FileInfo f = fs.createFile("/out/t", BS, true, 0, WriteType.THROUGH);
    MasterReplies.UfsTarget target = fs.ufsWriteTarget(f.id());
    assertThatThrownBy(() -> fs.completeFile("/out/t", f.id(), 4)).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("never written");
    Path temp = Path.of(URI.create(target.ufsUri()));
    Files.createDirectories(temp.getParent());
    Files.writeString(temp, "abc");
    assertThatThrownBy(() -> fs.completeFile("/out/t", f.id(), 4)).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("3 bytes");
    Files.writeString(temp, "abcd");
    FileInfo done = fs.completeFile("/out/t", f.id(), 4);
    assertThat(done.persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(Files.readString(ufs.resolve("out/t"))).isEqualTo("abcd");
    assertThat(Files.exists(temp)).isFalse();
    assertThat(fs.getStatus("/out").persistence()).isEqualTo(PersistenceState.PERSISTED);
  }

  @Test
  void asyncThrough_isPersistedByTheSchedulerThroughTheWorkerHoldingItsBlocks() throws Exception {
    FileInfo f = writeCached("/a/f", 250, WriteType.ASYNC_THROUGH);
    assertThat(f.persistence()).isEqualTo(PersistenceState.TO_BE_PERSISTED);
    fs.persistTick();
    WorkerReply reply = heartbeat(List.of());
    assertThat(reply.persist()).hasSize(1);
    PersistCommand c = reply.persist().get(0);
    assertThat(c.fileId()).isEqualTo(f.id());
    assertThat(c.blocks()).extracting(b -> b.length()).containsExactly(100L, 100L, 50L);
    assertThat(heartbeat(List.of()).persist()).isEmpty(); // handed out once
    // The worker fails once: retried after the backoff.
    heartbeat(List.of(new PersistResult(f.id(), false, "disk full", 0)));
    fs.persistTick();
    clock.advanceMillis(20);
    fs.persistTick();
    PersistCommand again = heartbeat(List.of()).persist().get(0);
    Path temp = Path.of(URI.create(again.ufsUri()));
    Files.createDirectories(temp.getParent());
    Files.write(temp, new byte[250]);
    heartbeat(List.of(new PersistResult(f.id(), true, "", 250)));
    fs.persistTick();
    assertThat(fs.getStatus("/a/f").persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(Files.size(ufs.resolve("a/f"))).isEqualTo(250);
    assertThat(restart().getStatus("/a/f").persistence()).isEqualTo(PersistenceState.PERSISTED);
  }

  /** A heartbeat of {@link #worker} that acknowledges the evictable blocks of the reply before. */
  private WorkerReply heartbeat(List<PersistResult> results) {
    WorkerReply r = fs.workerHeartbeat(worker, 1L << 30, 0, List.of(), List.of(), null, 0, results, 0, acked);
    acked = r.evictable().seq();
    return r;
  }

  // ---- which cached copies workers may evict ----

  /** Runs one persist cycle of {@code f} as its worker would, up to PERSISTED. */
  private void persistThroughWorker(FileInfo f) throws Exception {
    fs.persistTick();
    PersistCommand c = heartbeat(List.of()).persist().get(0);
    Path temp = Path.of(URI.create(c.ufsUri()));
    Files.createDirectories(temp.getParent());
    Files.write(temp, new byte[(int) f.length()]);
    heartbeat(List.of(new PersistResult(f.id(), true, "", f.length())));
    fs.persistTick();
    assertThat(fs.getStatus(f.path()).persistence()).isEqualTo(PersistenceState.PERSISTED);
  }

  @Test
  void asyncThroughBlocks_areEvictableAtTheirWorker_onlyOnceTheFileIsPersisted_toldOnce() throws Exception {
    FileInfo f = writeCached("/e/f", 250, WriteType.ASYNC_THROUGH);
    assertThat(heartbeat(List.of()).evictable().blockIds()).as("TO_BE_PERSISTED: the only copy").isEmpty();

    persistThroughWorker(f);

    assertThat(heartbeat(List.of()).evictable().blockIds())
        .containsExactlyInAnyOrder(BlockId.of(f.id(), 0), BlockId.of(f.id(), 1), BlockId.of(f.id(), 2));
    assertThat(heartbeat(List.of()).evictable().blockIds()).isEmpty();
  }

  /**
   * A master deposed (a standby took the journal over) after its worker persisted a file but before the
   * PERSISTED entry was flushed: the flush is refused, so the worker is never told it may evict the file's
   * blocks. They stay the only copies the successor knows of: it replays the file as TO_BE_PERSISTED.
   */
  @Test
  void persistedFilesBlocks_stayUnevictable_whenThePersistedEntryCannotBeFlushed() throws Exception {
    FileInfo f = writeCached("/d/f", 250, WriteType.ASYNC_THROUGH);
    fs.persistTick();
    PersistCommand c = heartbeat(List.of()).persist().get(0);
    Path temp = Path.of(URI.create(c.ufsUri()));
    Files.createDirectories(temp.getParent());
    Files.write(temp, new byte[250]);
    heartbeat(List.of(new PersistResult(f.id(), true, "", 250)));

    Journal successor = new Journal(tmp.resolve("journal"), 1 << 20);
    journals.add(successor);
    successor.replayReadOnly(e -> { });
    successor.takeOver(e -> { }); // fences this master's journal

    fs.persistTick(); // PERSISTED in memory; the journal refuses the flush
    assertThat(fs.getStatus("/d/f").persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(heartbeat(List.of()).evictable().blockIds()).as("PERSISTED is not durable").isEmpty();
    fs.persistTick();
    assertThat(heartbeat(List.of()).evictable().blockIds()).as("nor after another round").isEmpty();
    // Nothing else that lets a persisted file's blocks go does either, while only memory says it is persisted:
    // the block reported again (as a move to another tier does), a free, a reader's report of a corrupt copy.
    long block = BlockId.of(f.id(), 0);
    WorkerReply moved = fs.workerHeartbeat(worker, 1L << 30, 0,
        List.of(new io.strata.master.block.BlockReport(block, 250, "SSD")), List.of(), null, 0, List.of(), 0, acked);
    acked = moved.evictable().seq();
    assertThat(moved.evictable().blockIds()).as("a block reported again").isEmpty();
    assertThat(heartbeat(List.of()).evictable().blockIds()).isEmpty();
    assertThatThrownBy(() -> fs.free("/d/f", false, false)).hasMessageContaining("not yet durable");
    assertThat(fs.reportCorruptBlock(block, new WorkerAddress("w1", 29999), 0, "test")).as("its only copy").isFalse();
    assertThat(fs.blockMaster().getBlock(block).locations()).hasSize(1);
    successor.close();
    journals.remove(successor);
    assertThat(open().getStatus("/d/f").persistence()).isEqualTo(PersistenceState.TO_BE_PERSISTED);
  }

  /**
   * A persist the master gave up on (no answer within the persist timeout) and sent again, whose first copy the
   * worker then finishes (a worker still busy with a file ignores its second command): the first attempt's copy is
   * placed, and the second's temporary name goes. Before, the master took that result for the second attempt,
   * renamed the second copy (never written), failed, and went round again for ever, leaving a copy behind each time.
   */
  @Test
  void aPersistResultOfAnAttemptGivenUpOn_placesThatAttemptsCopy() throws Exception {
    FileInfo f = writeCached("/slow/f", 250, WriteType.ASYNC_THROUGH);
    fs.persistTick();
    PersistCommand first = heartbeat(List.of()).persist().get(0);
    clock.advanceMillis(31_000); // past the persist timeout (30 s)
    fs.persistTick(); // given up on
    clock.advanceMillis(1_000); // past the retry's backoff
    fs.persistTick();
    PersistCommand second = heartbeat(List.of()).persist().get(0);
    assertThat(second.ufsUri()).isNotEqualTo(first.ufsUri());
    Path secondTemp = Path.of(URI.create(second.ufsUri()));
    Files.write(secondTemp, new byte[7]); // as if a worker had begun it: it must not be placed

    Path firstTemp = Path.of(URI.create(first.ufsUri()));
    Files.write(firstTemp, new byte[250]);
    heartbeat(List.of(new PersistResult(f.id(), true, "", 250, first.ufsUri())));
    fs.persistTick();

    // The bytes are held by the first attempt's copy, now in place.
    assertThat(fs.getStatus("/slow/f").persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(Files.size(ufs.resolve("slow/f"))).isEqualTo(250);
    assertThat(firstTemp).doesNotExist();
    assertThat(secondTemp).as("the other attempt's copy is deleted").doesNotExist();
    // A result naming a copy never asked of this worker changes nothing.
    FileInfo g = writeCached("/slow/g", 50, WriteType.ASYNC_THROUGH);
    fs.persistTick();
    heartbeat(List.of());
    heartbeat(List.of(new PersistResult(g.id(), true, "", 50, first.ufsUri())));
    fs.persistTick();
    assertThat(fs.getStatus("/slow/g").persistence()).isEqualTo(PersistenceState.TO_BE_PERSISTED);
  }

  /**
   * A persist given up on and sent again, whose second attempt finishes first: the first attempt's copy, which its
   * worker writes (or an object store shows) only after that, is deleted when its late result comes, and a copy no
   * result ever names a persist timeout later. Before, the success deleted the other temp names once, and a copy
   * that appeared after that stayed in the under file system for good.
   */
  @Test
  void anEarlierAttemptsCopy_finishedAfterALaterAttemptWasPlaced_isDeletedToo() throws Exception {
    FileInfo f = writeCached("/twice/f", 250, WriteType.ASYNC_THROUGH);
    FileInfo g = writeCached("/twice/g", 50, WriteType.ASYNC_THROUGH);
    fs.persistTick();
    List<PersistCommand> firsts = heartbeat(List.of()).persist();
    clock.advanceMillis(31_000); // past the persist timeout (30 s): both given up on
    fs.persistTick();
    clock.advanceMillis(1_000); // past the retry's backoff
    fs.persistTick();
    List<PersistCommand> seconds = heartbeat(List.of()).persist();
    for (PersistCommand c : seconds) {
      Path temp = Path.of(URI.create(c.ufsUri()));
      Files.createDirectories(temp.getParent());
      Files.write(temp, new byte[(int) fs.getStatus(c.fileId() == f.id() ? "/twice/f" : "/twice/g").length()]);
    }
    heartbeat(List.of(new PersistResult(f.id(), true, "", 250, uriOf(seconds, f)),
        new PersistResult(g.id(), true, "", 50, uriOf(seconds, g))));
    fs.persistTick();
    assertThat(fs.getStatus("/twice/f").persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(fs.getStatus("/twice/g").persistence()).isEqualTo(PersistenceState.PERSISTED);

    // The slow first attempts finish now: f's reports it, g's never does.
    Path lateF = Path.of(URI.create(uriOf(firsts, f)));
    Files.write(lateF, new byte[250]);
    Path lateG = Path.of(URI.create(uriOf(firsts, g)));
    Files.write(lateG, new byte[50]);
    heartbeat(List.of(new PersistResult(f.id(), true, "", 250, uriOf(firsts, f))));
    fs.persistTick();
    assertThat(lateF).as("deleted when its result came in").doesNotExist();
    assertThat(lateG).as("watched for a persist timeout").exists();
    clock.advanceMillis(31_000);
    fs.persistTick();
    assertThat(lateG).as("deleted a persist timeout after the placement").doesNotExist();
    // What holds the bytes: the placed copies.
    assertThat(Files.size(ufs.resolve("twice/f"))).isEqualTo(250);
    assertThat(Files.size(ufs.resolve("twice/g"))).isEqualTo(50);
  }

  /**
   * What the master keeps per worker does not outlive the worker: persist commands queued for a worker that was lost
   * before it collected them are dropped (the job fails over to another attempt), and registration tokens are kept for
   * live workers only. Before, each lost worker id kept its commands, and each registration its token, for good.
   */
  @Test
  void persistCommandsAndTokensOfLostWorkers_areForgotten() throws Exception {
    FileInfo f = writeCached("/lost/f", 150, WriteType.ASYNC_THROUGH);
    fs.persistTick();
    assertThat(fs.persistOutboxWorkers()).as("a command waits for the worker").isEqualTo(1);
    for (int i = 0; i < 5; i++) {
      fs.issueWorkerToken(fs.blockMaster().register(new WorkerAddress("gone" + i, 29999), 1L << 30, 0, List.of(), 0));
    }
    assertThat(fs.workerTokenCount()).isEqualTo(5);
    clock.advanceMillis(TIMEOUT.toMillis() + 1); // no heartbeat from any of them: all lost
    fs.blockMaster().detectLostWorkers();
    fs.persistTick();
    assertThat(fs.persistOutboxWorkers()).isZero();
    long back = fs.blockMaster().register(new WorkerAddress("w1", 29999), 1L << 30, 0, List.of(), 0);
    fs.issueWorkerToken(back);
    assertThat(fs.workerTokenCount()).as("the live worker's only").isEqualTo(1);
    assertThat(fs.getStatus(f.path()).persistence()).isEqualTo(PersistenceState.TO_BE_PERSISTED);
  }

  private static String uriOf(List<PersistCommand> commands, FileInfo f) {
    return commands.stream().filter(c -> c.fileId() == f.id()).findFirst().orElseThrow().ufsUri();
  }

  /**
   * Persist jobs dropped by a delete while their worker was slow: the copy the worker finishes after the master gave
   * up and dropped the job is deleted when its late result comes in, and a copy written after the drop that no result
   * ever names is deleted a persist timeout later. Before, both stayed in the under file system for good.
   */
  @Test
  void copiesOfPersistJobsDroppedByADelete_areDeleted_whenTheirResultComesLate_orATimeoutLater() throws Exception {
    FileInfo f = writeCached("/late/f", 250, WriteType.ASYNC_THROUGH);
    FileInfo g = writeCached("/late/g", 50, WriteType.ASYNC_THROUGH);
    fs.persistTick();
    List<PersistCommand> sent = heartbeat(List.of()).persist();
    PersistCommand cf = sent.stream().filter(c -> c.fileId() == f.id()).findFirst().orElseThrow();
    PersistCommand cg = sent.stream().filter(c -> c.fileId() == g.id()).findFirst().orElseThrow();
    fs.delete("/late/f", false);
    fs.delete("/late/g", false);
    clock.advanceMillis(31_000); // past the persist timeout (30 s): given up on, and dropped (nothing to persist)
    fs.persistTick();

    Path lateF = Path.of(URI.create(cf.ufsUri()));
    Files.createDirectories(lateF.getParent());
    Files.write(lateF, new byte[250]); // the slow worker finishes f's copy...
    heartbeat(List.of(new PersistResult(f.id(), true, "", 250, cf.ufsUri())));
    fs.persistTick();
    assertThat(lateF).as("deleted when its result came in").doesNotExist();

    Path lateG = Path.of(URI.create(cg.ufsUri()));
    Files.write(lateG, new byte[50]); // ...and writes g's, never to report it
    fs.persistTick();
    assertThat(lateG).as("watched for a persist timeout").exists();
    clock.advanceMillis(31_000);
    fs.persistTick();
    assertThat(lateG).as("deleted a persist timeout after the drop").doesNotExist();
    assertThat(ufs.resolve("late")).satisfiesAnyOf(d -> assertThat(d).doesNotExist(),
        d -> assertThat(d).isEmptyDirectory());
  }

  /**
   * A delete whose journal entry cannot be made durable (this master was deposed: its flush is refused) fails, and
   * the worker is never told to remove the file's blocks: a successor replays the file, and its bytes are still held
   * by those blocks. Before, the next heartbeat carried the removals at once.
   */
  @Test
  void removals_goToWorkersOnlyOnceTheirEntryIsDurable() throws Exception {
    FileInfo f = writeCached("/rm/f", 250, WriteType.MUST_CACHE);
    Journal successor = new Journal(tmp.resolve("journal"), 1 << 20);
    journals.add(successor);
    successor.replayReadOnly(e -> { });
    successor.takeOver(e -> { }); // fences this master's journal
    assertThatThrownBy(() -> fs.delete("/rm/f", false)).isInstanceOf(StrataException.class);
    assertThat(heartbeat(List.of()).removeBlockIds()).as("the delete is not durable").isEmpty();
    assertThat(heartbeat(List.of()).removeBlockIds()).isEmpty();
    successor.close();
    journals.remove(successor);
    FileSystemMaster next = open();
    assertThat(next.getStatus("/rm/f").length()).isEqualTo(250);
    assertThat(next.getStatus("/rm/f").id()).isEqualTo(f.id());
  }

  @Test
  void removals_ofADurableDelete_goOut() throws Exception {
    writeCached("/rm/g", 250, WriteType.MUST_CACHE);
    FileInfo g = fs.getStatus("/rm/g");
    fs.delete("/rm/g", false);
    assertThat(heartbeat(List.of()).removeBlockIds()).contains(BlockId.of(g.id(), 0));
  }

  @Test
  void evictableBlocks_areSentAgain_untilTheWorkerAcknowledgesThem() throws Exception {
    FileInfo f = writeCached("/e/lost", 50, WriteType.ASYNC_THROUGH);
    persistThroughWorker(f);
    WorkerReply lost = fs.workerHeartbeat(worker, 1L << 30, 0, List.of(), List.of(), null, 0, List.of(), 0, acked);
    assertThat(lost.evictable().blockIds()).containsExactly(BlockId.of(f.id(), 0));

    // The reply never reached the worker: it acknowledges only what it had before.
    WorkerReply again = fs.workerHeartbeat(worker, 1L << 30, 0, List.of(), List.of(), null, 0, List.of(), 0, acked);

    assertThat(again.evictable()).isEqualTo(lost.evictable());
    acked = again.evictable().seq();
    assertThat(heartbeat(List.of()).evictable().blockIds()).isEmpty();
  }

  @Test
  void mustCacheBlocks_areNeverEvictable() throws Exception {
    writeCached("/e/m", 150, WriteType.MUST_CACHE);
    fs.persistTick();

    assertThat(heartbeat(List.of()).evictable().blockIds()).isEmpty();
  }

  @Test
  void cacheThroughFile_withABlockTheCacheHadNoRoomFor_completesPersisted_andItsCachedBlocksAreEvictable()
      throws Exception {
    FileInfo f = fs.createFile("/e/ct", BS, true, 0, WriteType.CACHE_THROUGH);
    fs.commitBlock(worker, BlockId.of(f.id(), 0), BS, TIER); // block 1 went to the UFS only
    fs.commitBlock(worker, BlockId.of(f.id(), 2), 50, TIER);
    Path temp = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.createDirectories(temp.getParent());
    Files.write(temp, new byte[250]);

    FileInfo done = fs.completeFile("/e/ct", f.id(), 250);

    assertThat(done.persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(heartbeat(List.of()).evictable().blockIds())
        .containsExactlyInAnyOrder(BlockId.of(f.id(), 0), BlockId.of(f.id(), 2));
  }

  @Test
  void cacheThroughFile_withACachedBlockOfTheWrongLength_isRefused() throws Exception {
    FileInfo f = fs.createFile("/e/bad", BS, true, 0, WriteType.CACHE_THROUGH);
    fs.commitBlock(worker, BlockId.of(f.id(), 0), 60, TIER);
    Path temp = Path.of(URI.create(fs.ufsWriteTarget(f.id()).ufsUri()));
    Files.createDirectories(temp.getParent());
    Files.write(temp, new byte[150]);

    assertThatThrownBy(() -> fs.completeFile("/e/bad", f.id(), 150)).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("block 0 has 60 bytes, expected 100");
  }

  @Test
  void aCachedCopyOfAPersistedFile_isEvictableAtOnce() throws Exception {
    ufsFile("loaded", "x".repeat(150));
    FileInfo f = fs.getStatus("/loaded");

    fs.commitBlock(worker, BlockId.of(f.id(), 1), 50, TIER);

    assertThat(heartbeat(List.of()).evictable().blockIds()).containsExactly(BlockId.of(f.id(), 1));
  }

  @Test
  void aWorkerRegisteringWithBlocks_isToldWhichAreOfPersistedFiles() throws Exception {
    FileInfo persisted = writeCached("/e/p", 150, WriteType.ASYNC_THROUGH);
    persistThroughWorker(persisted);
    FileInfo unpersisted = writeCached("/e/u", 50, WriteType.ASYNC_THROUGH);
    List<io.strata.master.block.BlockReport> report = List.of(
        new io.strata.master.block.BlockReport(BlockId.of(persisted.id(), 0), BS, TIER),
        new io.strata.master.block.BlockReport(BlockId.of(persisted.id(), 1), 50, TIER),
        new io.strata.master.block.BlockReport(BlockId.of(unpersisted.id(), 0), 50, TIER));

    long w2 = fs.blockMaster().register(new WorkerAddress("w2", 29999), 1L << 30, 0, report, 0);
    fs.workerRegistered(w2, report);

    assertThat(fs.workerHeartbeat(w2, 1L << 30, 0, List.of(), List.of(), null, 0, List.of()).evictable().blockIds())
        .containsExactlyInAnyOrder(BlockId.of(persisted.id(), 0), BlockId.of(persisted.id(), 1));
  }

  @Test
  void filesWithBlocksOnAWorkerWhoseWritersWait_arePersistedFirst() throws Exception {
    persistMaxInFlight = 1; // one at a time: the order shows
    restart();
    worker = fs.blockMaster().register(new WorkerAddress("w1", 29999), 1L << 30, 0, List.of(), 0);
    long w2 = fs.blockMaster().register(new WorkerAddress("w2", 29999), 1L << 30, 0, List.of(), 0);
    List<Long> onW1 = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      onW1.add(writeCached("/q/a" + i, 50, WriteType.ASYNC_THROUGH).id());
    }
    FileInfo onW2 = fs.createFile("/q/b", BS, true, 0, WriteType.ASYNC_THROUGH);
    fs.commitBlock(w2, BlockId.of(onW2.id(), 0), 50, TIER);
    fs.completeFile("/q/b", onW2.id(), 50);
    fs.workerHeartbeat(w2, 1L << 30, 1L << 30, List.of(), List.of(), null, 0, List.of(), 64L << 20, 0);

    fs.persistTick();

    assertThat(fs.workerHeartbeat(w2, 1L << 30, 0, List.of(), List.of(), null, 0, List.of(), 64L << 20, 0).persist())
        .extracting(PersistCommand::fileId).containsExactly(onW2.id());
  }

  @Test
  void aCachedCopyOfAPersistedBlock_isAccepted_onlyWithTheRightLength() throws Exception {
    ufsFile("p", "x".repeat(150));
    FileInfo f = fs.getStatus("/p");
    long b1 = BlockId.of(f.id(), 1);
    assertThatThrownBy(() -> fs.commitBlock(worker, b1, 49, TIER)).isInstanceOf(FailedPreconditionException.class);
    fs.commitBlock(worker, b1, 50, TIER);
    assertThat(fs.blockSource(b1).locations()).hasSize(1);
    assertThat(fs.blockSource(b1).ufs().offset()).isEqualTo(100);
    FileInfo cached = writeCached("/c", 50, WriteType.MUST_CACHE);
    assertThat(fs.blockSource(BlockId.of(cached.id(), 0)).ufs()).isNull();
    assertThatThrownBy(() -> fs.commitBlock(worker, BlockId.of(cached.id(), 1), 10, TIER))
        .isInstanceOf(FailedPreconditionException.class);
  }

  // ---- delete and rename reach the UFS ----

  @Test
  void deleteAndRename_ofPersistedPaths_changeTheUfsToo_andStrataOnlyDeleteKeepsIt() throws Exception {
    ufsFile("r/a", "aa");
    ufsFile("r/b", "bb");
    fs.rename("/r/a", "/r/a2");
    assertThat(Files.readString(ufs.resolve("r/a2"))).isEqualTo("aa");
    assertThat(Files.exists(ufs.resolve("r/a"))).isFalse();
    fs.delete("/r/a2", false, false);
    assertThat(Files.exists(ufs.resolve("r/a2"))).isFalse();
    fs.delete("/r/b", false, true);
    assertThat(Files.exists(ufs.resolve("r/b"))).isTrue();
    assertThat(fs.getStatus("/r/b").length()).isEqualTo(2); // loaded again on next access
    ufsFile("r/exists-in-ufs", "z");
    assertThatThrownBy(() -> fs.rename("/r/b", "/r/exists-in-ufs")).isInstanceOf(AlreadyExistsException.class);
  }

  @Test
  void aDeleteNamingAFileId_deletesOnlyThatFile() throws Exception {
    FileInfo first = fs.createFile("/w", BS, true, 0, WriteType.MUST_CACHE);
    fs.delete("/w", false, true, 0);
    FileInfo second = fs.createFile("/w", BS, true, 0, WriteType.MUST_CACHE);
    assertThatThrownBy(() -> fs.delete("/w", false, true, first.id()))
        .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("no longer");
    assertThat(fs.getStatus("/w").id()).isEqualTo(second.id());
    fs.delete("/w", false, true, second.id());
    assertThat(fs.exists("/w")).isFalse();
  }

  // ---- mounts ----

  @Test
  void mounts_followTheirRules_andClearErrorsNameWhatIsWrong() throws Exception {
    Path other = Files.createDirectories(tmp.resolve("other"));
    Files.writeString(other.resolve("x"), "mounted");
    fs.createDirectory("/full/child", true, false, 0);
    assertThatThrownBy(() -> fs.mount("/full", other.toString(), false, false, Map.of()))
        .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("not an empty directory");
    assertThatThrownBy(() -> fs.mount("/m", tmp.resolve("nope").toString(), false, false, Map.of()))
        .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("does not exist in the under file system");
    assertThatThrownBy(() -> fs.mount("/m", ufs.resolve("inside").toString(), false, false, Map.of()))
        .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("overlaps");
    assertThatThrownBy(() -> fs.mount("/", other.toString(), false, false, Map.of()))
        .isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> fs.mount("/m", "hdfs://", false, false, Map.of()))
        .isInstanceOf(InvalidArgumentException.class);
    fs.mount("/m", other.toString(), true, false, Map.of());
    assertThat(fs.getStatus("/m/x").length()).isEqualTo(7);
    assertThat(fs.getStatus("/m").mountPoint()).isTrue();
    assertThatThrownBy(() -> fs.mount("/m", tmp.resolve("other").toString(), false, false, Map.of()))
        .isInstanceOf(AlreadyExistsException.class);
    assertThatThrownBy(() -> fs.createFile("/m/new", BS, true, 0, WriteType.MUST_CACHE))
        .isInstanceOf(PermissionDeniedException.class).hasMessageContaining("read-only");
    assertThatThrownBy(() -> fs.delete("/m", true, false)).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("mount point");
    assertThatThrownBy(() -> fs.rename("/m/x", "/x")).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("different mounts");
    FileSystemMaster again = restart();
    assertThat(again.mountTable()).extracting(MountTable.MountInfo::path).containsExactlyInAnyOrder("/", "/m");
    assertThat(again.getStatus("/m/x").length()).isEqualTo(7);
    again.unmount("/m");
    assertThatThrownBy(() -> again.getStatus("/m")).isInstanceOf(NotFoundException.class);
    assertThat(Files.exists(other.resolve("x"))).isTrue();
    assertThatThrownBy(() -> again.unmount("/m")).isInstanceOf(FailedPreconditionException.class);
  }

  /**
   * A nested mount's parent directory gone from the parent UFS (an empty directory there, as the mount point itself is
   * never made in it: cleaners remove such dirs) is not synced away with the mount inside it. Before, a listing or a
   * status check with a sync interval removed the whole subtree, mount point and mounted files included, leaving a
   * mount that could be neither unmounted nor mounted again.
   */
  @Test
  void aSyncNeverRemovesADirectoryHoldingAMountPoint() throws Exception {
    Path other = Files.createDirectories(tmp.resolve("nested"));
    Files.writeString(other.resolve("x"), "mounted");
    Files.createDirectories(ufs.resolve("a/b"));
    assertThat(fs.getStatus("/a/b").persisted()).isTrue();
    fs.mount("/a/b/c", other.toString(), false, false, Map.of());
    assertThat(fs.getStatus("/a/b/c/x").length()).isEqualTo(7);

    Files.delete(ufs.resolve("a/b"));
    clock.advanceMillis(1000);
    assertThat(fs.getStatus("/a/b", 0).directory()).as("a status check keeps it").isTrue();
    assertThat(names("/a", 0)).as("a listing keeps it").containsExactly("b");
    // What still holds the bytes: the nested mount's UFS, reached through the mount point.
    assertThat(fs.getStatus("/a/b/c/x").length()).isEqualTo(7);
    fs.unmount("/a/b/c");
    assertThat(fs.mountTable()).extracting(MountTable.MountInfo::path).containsExactly("/");
    assertThat(Files.readString(other.resolve("x"))).isEqualTo("mounted");
  }

  /**
   * Unmount removes what Strata holds under the mount, so it is refused while a file there has its only copy
   * in Strata: one being written, one MUST_CACHE (NOT_PERSISTED); the blocks and the file stay. Once that file
   * is deleted the unmount goes ahead, and the UFS keeps its own file.
   */
  @Test
  void unmount_isRefused_whileAFileUnderItIsOnlyInStrata() throws Exception {
    Path other = Files.createDirectories(tmp.resolve("other-ufs"));
    Files.writeString(other.resolve("x"), "in ufs!");
    fs.mount("/m", other.toString(), false, false, Map.of());
    FileInfo open = fs.createFile("/m/open", BS, true, 0, WriteType.MUST_CACHE);
    assertThatThrownBy(() -> fs.unmount("/m")).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("/m/open is being written");
    fs.delete("/m/open", false, false);
    FileInfo cached = writeCached("/m/cached", 250, WriteType.MUST_CACHE);
    assertThatThrownBy(() -> fs.unmount("/m")).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("/m/cached is NOT_PERSISTED").hasMessageContaining("fs persist");
    assertThat(fs.getStatus("/m/cached").length()).isEqualTo(250);
    assertThat(fs.blockMaster().hasBlock(BlockId.of(cached.id(), 0))).as("its blocks are kept").isTrue();
    assertThat(fs.mountTable()).extracting(MountTable.MountInfo::path).contains("/m");
    assertThat(open.id()).isNotEqualTo(cached.id());

    fs.delete("/m/cached", false, false);
    fs.unmount("/m");
    assertThat(fs.mountTable()).extracting(MountTable.MountInfo::path).doesNotContain("/m");
    assertThat(Files.readString(other.resolve("x"))).isEqualTo("in ufs!");
  }

  @Test
  void mountsOutsideTheAllowedUris_areRefused() throws Exception {
    assertThatThrownBy(() -> fs.mount("/etc", "/etc", true, false, Map.of()))
        .isInstanceOf(PermissionDeniedException.class).hasMessageContaining("strata.master.mount.allowed.uris");
    // A symbolic link inside an allowed dir leads nowhere outside it.
    Path link = Files.createSymbolicLink(tmp.resolve("to-etc"), Path.of("/etc"));
    assertThatThrownBy(() -> fs.mount("/l", link.toString(), true, false, Map.of()))
        .isInstanceOf(PermissionDeniedException.class).hasMessageContaining("strata.master.mount.allowed.uris");
    assertThatThrownBy(() -> fs.mount("/x", tmp.resolve("../elsewhere").toString(), true, false, Map.of()))
        .isInstanceOf(PermissionDeniedException.class);
    assertThat(fs.mountTable()).hasSize(1);
  }

  @Test
  void mountingAnUnreachableHdfs_failsFast_withAClearError() throws Exception {
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> fs.mount("/h", "hdfs://127.0.0.1:1/data", false, false, Map.of()))
        .isInstanceOf(UnavailableException.class).hasMessageContaining("hdfs://127.0.0.1:1/data");
    assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(20_000);
    assertThatThrownBy(() -> fs.getStatus("/h")).isInstanceOf(NotFoundException.class);
  }

  // ---- free, pins, TTLs ----

  @Test
  void free_refusesUnpersistedAndPinnedFiles_andRemovesTheBlocksOfPersistedOnes() throws Exception {
    writeCached("/f/cached", 150, WriteType.MUST_CACHE);
    assertThatThrownBy(() -> fs.free("/f/cached", false, false)).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("NOT_PERSISTED");
    ufsFile("g/p", "x".repeat(150));
    FileInfo p = fs.getStatus("/g/p");
    fs.commitBlock(worker, BlockId.of(p.id(), 0), 100, TIER);
    fs.commitBlock(worker, BlockId.of(p.id(), 1), 50, TIER);
    assertThatThrownBy(() -> fs.free("/g", false, false)).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("directory");
    fs.setAttribute("/g", true, null, null);
    assertThatThrownBy(() -> fs.free("/g", true, false)).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("pinned");
    assertThat(fs.free("/g", true, true)).isEqualTo(new MasterReplies.FreeResult(1, 2));
    assertThat(fs.getStatus("/g").pinned()).isFalse();
    assertThat(heartbeat(List.of()).removeBlockIds()).containsExactlyInAnyOrder(BlockId.of(p.id(), 0),
        BlockId.of(p.id(), 1));
    assertThat(fs.blockSource(BlockId.of(p.id(), 0)).locations()).isEmpty();
  }

  @Test
  void pins_reachWorkersAsAVersionedListOfFileIds() throws Exception {
    FileInfo a = writeCached("/pin/a", 10, WriteType.MUST_CACHE);
    WorkerReply first = heartbeat(List.of());
    assertThat(first.pinnedFileIds()).isEmpty();
    fs.setAttribute("/pin", true, null, null);
    WorkerReply pinned = fs.workerHeartbeat(worker, 1L << 30, 0, List.of(), List.of(), null, first.pinVersion(),
        List.of());
    assertThat(pinned.pinnedFileIds()).containsExactly(a.id());
    WorkerReply same = fs.workerHeartbeat(worker, 1L << 30, 0, List.of(), List.of(), null, pinned.pinVersion(),
        List.of());
    assertThat(same.pinnedFileIds()).isNull();
    FileInfo b = writeCached("/pin/b", 10, WriteType.MUST_CACHE);
    WorkerReply more = fs.workerHeartbeat(worker, 1L << 30, 0, List.of(), List.of(), null, pinned.pinVersion(),
        List.of());
    assertThat(more.pinnedFileIds()).containsExactlyInAnyOrder(a.id(), b.id());
    assertThat(restart().tree().pinnedFileIds()).containsExactlyInAnyOrder(a.id(), b.id());
  }

  /**
   * A create of a path the UFS holds loads that file (complete, PERSISTED) and fails ALREADY_EXISTS. Its request id
   * must not be recorded as that load's: a retry with the same id is refused as the first attempt was, not answered
   * "created" with the UFS file (whose writer would then fail at close).
   */
  @Test
  void aCreateRefusedForAFileTheUfsHolds_isRefusedAgainOnItsRetry() throws Exception {
    ufsFile("held/x", "ufs bytes");
    RequestId id = new RequestId("client-1", 1);
    for (int attempt = 0; attempt < 2; attempt++) {
      assertThatThrownBy(() -> fs.createFile("/held/x", BS, true, 0644, WriteType.CACHE_THROUGH, "client-1", id))
          .as("attempt " + attempt).isInstanceOf(AlreadyExistsException.class);
    }
    assertThat(fs.getStatus("/held/x").persistence()).isEqualTo(PersistenceState.PERSISTED);
    assertThat(Files.readString(ufs.resolve("held/x"))).isEqualTo("ufs bytes");
  }

  @Test
  void ttls_deleteOrFree_whenTheyRunOut_andSurviveARestart() throws Exception {
    ufsFile("t/del", "d");
    ufsFile("t/free", "ff");
    fs.setAttribute("/t/del", null, 5_000L, "DELETE");
    FileInfo free = fs.setAttribute("/t/free", null, 5_000L, "FREE");
    fs.commitBlock(worker, BlockId.of(free.id(), 0), 2, TIER);
    assertThatThrownBy(() -> fs.setAttribute("/t/del", null, -5L, null)).isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> fs.setAttribute("/t/del", null, 1L, "BURN")).isInstanceOf(InvalidArgumentException.class);
    restart();
    assertThat(fs.getStatus("/t/del").ttlMs()).isEqualTo(5_000);
    fs.ttlTick();
    assertThat(fs.exists("/t/del")).isTrue();
    clock.advanceMillis(10_000);
    fs.ttlTick();
    assertThat(fs.tree().exists(io.strata.common.path.StrataPath.of("/t/del"))).isFalse();
    assertThat(Files.exists(ufs.resolve("t/del"))).isFalse();
    FileInfo freed = fs.getStatus("/t/free");
    assertThat(freed.ttlMs()).isEqualTo(-1);
    assertThat(fs.blockSource(BlockId.of(freed.id(), 0)).locations()).isEmpty();
    assertThat(Files.readString(ufs.resolve("t/free"))).isEqualTo("ff");
  }

  /**
   * A FREE TTL that runs out on a file not persisted yet frees nothing (its cached blocks are its only copy) and keeps
   * the TTL, so the file is freed once persisted; on a file never to be persisted (MUST_CACHE) the TTL goes.
   */
  @Test
  void freeTtl_onAFileStillToBePersisted_waitsForItsPersist_andOnOneNeverPersistedIsDropped() throws Exception {
    FileInfo async = writeCached("/tf/async", 50, WriteType.ASYNC_THROUGH);
    writeCached("/tf/must", 50, WriteType.MUST_CACHE);
    fs.setAttribute("/tf/async", null, 1_000L, "FREE");
    fs.setAttribute("/tf/must", null, 1_000L, "FREE");
    clock.advanceMillis(2_000);
    fs.ttlTick();
    // What holds the bytes of both: their cached blocks, kept.
    assertThat(fs.blockSource(BlockId.of(async.id(), 0)).locations()).hasSize(1);
    assertThat(fs.getStatus("/tf/async").ttlMs()).as("kept for after its persist").isEqualTo(1_000);
    assertThat(fs.getStatus("/tf/must").ttlMs()).as("it can never be freed").isEqualTo(-1);
    persistThroughWorker(async);
    assertThat(fs.getStatus("/tf/async").persistence()).isEqualTo(PersistenceState.PERSISTED);
    fs.ttlTick();
    assertThat(fs.getStatus("/tf/async").ttlMs()).isEqualTo(-1);
    assertThat(fs.blockSource(BlockId.of(async.id(), 0)).locations()).as("freed; its bytes are in the UFS")
        .isEmpty();
    assertThat(Files.size(ufs.resolve("tf/async"))).isEqualTo(50);
    // A directory holding a file never to be persisted can never be freed: its TTL goes, not kept for ever.
    writeCached("/tm/async", 50, WriteType.ASYNC_THROUGH);
    writeCached("/tm/must", 50, WriteType.MUST_CACHE);
    fs.setAttribute("/tm", null, 1_000L, "FREE");
    clock.advanceMillis(2_000);
    fs.ttlTick();
    assertThat(fs.getStatus("/tm").ttlMs()).isEqualTo(-1);
  }

  @Test
  void persistenceStatesAndWriteTypes_surviveACheckpointAndRestart() throws Exception {
    writeCached("/s/must", 10, WriteType.MUST_CACHE);
    writeCached("/s/async", 10, WriteType.ASYNC_THROUGH);
    ufsFile("s/loaded", "l");
    fs.getStatus("/s/loaded");
    fs.setAttribute("/s/must", true, 60_000L, "FREE");
    Map<String, List<Object>> before = view(fs);
    fs.checkpoint();
    Map<String, List<Object>> after = view(restart());
    assertThat(after).isEqualTo(before);
    assertThat(after.get("/s/async").get(0)).isEqualTo(PersistenceState.TO_BE_PERSISTED);
    assertThat(fs.tree().filesToPersist()).hasSize(1);
  }

  private static Map<String, List<Object>> view(FileSystemMaster m) throws StrataException {
    Map<String, List<Object>> out = new TreeMap<>();
    m.listStatus("/", true, 10, b -> b.forEach(f -> out.put(f.path(), List.of(f.persistence(), f.pinned(), f.ttlMs(),
        f.ttlAction(), f.writeType(), f.length(), f.ufsMtimeMs()))), -1);
    return out;
  }
}
