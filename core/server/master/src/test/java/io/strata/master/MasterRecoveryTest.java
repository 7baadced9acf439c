package io.strata.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.master.block.BlockReport;
import io.strata.master.file.AttributeChange;
import io.strata.master.file.FileInfo;
import io.strata.master.file.FileSystemMaster;
import io.strata.master.journal.CorruptJournalException;
import io.strata.master.journal.Journal;
import io.strata.master.journal.JournalEntry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master's namespace and block metadata rebuilt from its journal (replay alone, and checkpoint plus
 * replay) are the ones it had: same paths, ids, lengths, modes, times, block lengths; ids handed out
 * after recovery are new. And a master whose journal is corrupt in the middle does not start.
 */
class MasterRecoveryTest {
  private static final Duration WORKER_TIMEOUT = Duration.ofSeconds(30);
  private static final long MAX_BLOCK = 1 << 20;
  private static final String TIER = "MEM";

  @TempDir
  Path tmp;
  private final MutableClock clock = new MutableClock(1_700_000_000_000L);
  private final List<Journal> journals = new ArrayList<>();

  @AfterEach
  void closeJournals() {
    journals.forEach(Journal::close);
  }

  private Path journalDir() {
    return tmp.resolve("journal");
  }

  /** A master over the journal dir, recovered as MasterProcess.start does, and writing. */
  private Master open() throws IOException {
    Journal journal = new Journal(journalDir(), 1 << 20);
    journals.add(journal);
    FileSystemMaster fs = new FileSystemMaster(clock, WORKER_TIMEOUT, MAX_BLOCK, journal);
    journal.replay(entry -> {
      try {
        fs.replay(entry);
      } catch (StrataException e) {
        throw new IllegalStateException("entry " + entry + " does not apply", e);
      }
    });
    journal.startWriting();
    return new Master(fs, journal);
  }

  private record Master(FileSystemMaster fs, Journal journal) {
    long register(String host) {
      return fs.blockMaster().register(new WorkerAddress(host, 29999), 1L << 30, 0, List.of(), 0);
    }
  }

  /** Every inode but the root, by path. */
  private static Map<String, FileInfo> namespace(FileSystemMaster fs) throws StrataException {
    Map<String, FileInfo> out = new TreeMap<>();
    fs.listStatus("/", true, 3, batch -> batch.forEach(f -> out.put(f.path(), f)));
    return out;
  }

  /** What of the root survives a restart: its modification time and child count (not its creation time). */
  private static List<Long> root(FileSystemMaster fs) throws StrataException {
    FileInfo r = fs.getStatus("/");
    return List.of(r.modificationTimeMs(), (long) r.childCount(), (long) r.mode());
  }

  private static Map<Long, Long> blockLengths(FileSystemMaster fs, List<Long> blockIds) {
    Map<Long, Long> out = new TreeMap<>();
    for (long id : blockIds) {
      out.put(id, fs.blockMaster().blockLength(id));
    }
    return out;
  }

  private void tick() {
    clock.advanceMillis(1_000);
  }

  /** Builds a namespace through every kind of change; returns the block ids it committed (some removed since). */
  private List<Long> buildNamespace(Master m) throws Exception {
    FileSystemMaster fs = m.fs();
    long worker = m.register("w1");
    List<Long> blocks = new ArrayList<>();

    fs.createDirectory("/a/b/c", true, false, 0750);
    tick();
    FileInfo f1 = fs.createFile("/a/b/f1", 100, false, 0640);
    tick();
    for (long[] b : new long[][] {{0, 100}, {1, 50}, {2, 10}}) { // block 2 lies past the final length
      long id = BlockId.of(f1.id(), b[0]);
      fs.commitBlock(worker, id, b[1], TIER);
      blocks.add(id);
    }
    fs.completeFile("/a/b/f1", f1.id(), 150);
    tick();
    FileInfo f2 = fs.createFile("/a/b/c/incomplete", 64, false, 0);
    long f2b = BlockId.of(f2.id(), 0);
    fs.commitBlock(worker, f2b, 64, TIER);
    blocks.add(f2b);
    tick();
    FileInfo empty = fs.createFile("/x/y/empty", 100, true, 0600);
    fs.completeFile("/x/y/empty", empty.id(), 0);
    tick();
    fs.rename("/a/b", "/moved");
    tick();
    fs.createDirectory("/tmp/t1/t2", true, false, 0);
    FileInfo gone = fs.createFile("/tmp/t1/t2/gone", 100, false, 0);
    long goneBlock = BlockId.of(gone.id(), 0);
    fs.commitBlock(worker, goneBlock, 40, TIER);
    blocks.add(goneBlock);
    fs.completeFile("/tmp/t1/t2/gone", gone.id(), 40);
    tick();
    fs.delete("/tmp", true);
    tick();
    fs.rename("/x/y/empty", "/moved/c/empty2");
    tick();
    fs.createFile("/last", 100, false, 0); // the newest id, then gone: must not be handed out again
    fs.delete("/last", false);
    tick();
    return blocks;
  }

  private static long maxId(Map<String, FileInfo> ns, long atLeast) {
    long max = atLeast;
    for (FileInfo f : ns.values()) {
      max = Math.max(max, f.id());
    }
    return max;
  }

  @Test
  void replayedNamespaceAndBlocks_areIdentical_andCheckpointPlusReplayToo() throws Exception {
    Master first = open();
    List<Long> blocks = buildNamespace(first);
    Map<String, FileInfo> before = namespace(first.fs());
    List<Long> rootBefore = root(first.fs());
    Map<Long, Long> blocksBefore = blockLengths(first.fs(), blocks);
    first.journal().close();

    // The namespace the operations built, so that "identical" compares against something real.
    assertThat(before.keySet()).containsExactly("/a", "/moved", "/moved/c", "/moved/c/empty2",
        "/moved/c/incomplete", "/moved/f1", "/x", "/x/y");
    assertThat(before.get("/moved/f1").length()).isEqualTo(150);
    assertThat(before.get("/moved/f1").complete()).isTrue();
    assertThat(before.get("/moved/c").mode()).isEqualTo(0750);
    assertThat(before.get("/moved/c/incomplete").complete()).isFalse();
    assertThat(blocksBefore.values()).containsExactly(100L, 50L, -1L, 64L, -1L);

    Master second = open();
    assertThat(namespace(second.fs())).isEqualTo(before);
    assertThat(root(second.fs())).isEqualTo(rootBefore);
    assertThat(blockLengths(second.fs(), blocks)).isEqualTo(blocksBefore);
    assertThat(second.fs().tree().fileCount()).isEqualTo(first.fs().tree().fileCount());
    assertThat(second.fs().tree().directoryCount()).isEqualTo(first.fs().tree().directoryCount());

    Path firstSegment = journalDir().resolve(String.format("segments/%020d.log", 1));
    assertThat(firstSegment).exists();
    second.fs().checkpoint();
    assertThat(firstSegment).as("a segment the checkpoint covers is removed").doesNotExist();
    try (Stream<Path> s = Files.list(journalDir().resolve("checkpoints"))) {
      assertThat(s.count()).isEqualTo(1);
    }
    second.journal().close();

    Master third = open();
    assertThat(namespace(third.fs())).isEqualTo(before);
    assertThat(root(third.fs())).isEqualTo(rootBefore);
    assertThat(blockLengths(third.fs(), blocks)).isEqualTo(blocksBefore);
    assertThat(third.fs().tree().fileCount()).isEqualTo(first.fs().tree().fileCount());
    assertThat(third.fs().tree().directoryCount()).isEqualTo(first.fs().tree().directoryCount());
  }

  /**
   * A copy committed in place of the only copy of another length (a shuffle replica, shorter than its failed
   * primary's) gives the block its length; after a restart the replayed block has that length, so the old copy,
   * reported by its worker at registration, is refused for its length (removal lists are not journaled).
   */
  @Test
  void blockRecommittedInPlaceWithAnotherLength_replaysWithTheLaterLength() throws Exception {
    Master first = open();
    long primary = first.register("w1");
    long replica = first.register("w2");
    first.fs().createDirectory("/.shuffle/app/0", true, false, 0755);
    FileInfo f = first.fs().createFile("/.shuffle/app/0/shuffled", 100, false, 0);
    long block = BlockId.of(f.id(), 0);
    first.fs().commitBlock(primary, block, 80, TIER);
    first.fs().commitBlock(replica, block, 60, TIER, false, "w1:29999");
    assertThat(first.fs().blockMaster().blockLength(block)).isEqualTo(60);
    first.fs().completeFile(f.path(), f.id(), 60);
    first.journal().close();

    Master second = open();
    assertThat(second.fs().blockMaster().blockLength(block)).isEqualTo(60);
    long back = second.fs().blockMaster().register(new WorkerAddress("w1", 29999), 1L << 30, 80,
        List.of(new BlockReport(block, 80, TIER)), clock.millis());
    second.register("w2");
    assertThat(second.fs().blockMaster().getBlock(block).locations()).isEmpty();
    assertThat(second.fs().blockMaster().heartbeat(back, 1L << 30, 80, List.of(), List.of()).removeBlockIds())
        .containsExactly(block);
  }

  @Test
  void idsHandedOutAfterRecovery_areNewerThanEveryOldOne_evenOfDeletedInodes() throws Exception {
    Master first = open();
    buildNamespace(first);
    // Created and deleted last: the highest id ever handed out, and in no inode that survives.
    long highest = first.fs().createFile("/probe", 100, false, 0).id();
    first.fs().delete("/probe", false);
    assertThat(maxId(namespace(first.fs()), 0)).isLessThan(highest);
    first.journal().close();

    Master second = open();
    FileInfo afterReplay = second.fs().createFile("/new1", 100, false, 0);
    assertThat(afterReplay.id()).isGreaterThan(highest);
    second.fs().delete("/new1", false);
    long newest = afterReplay.id();
    second.fs().checkpoint();
    second.journal().close();

    Master third = open();
    FileInfo afterCheckpoint = third.fs().createDirectory("/new2", false, false, 0);
    assertThat(afterCheckpoint.id()).isGreaterThan(newest);
  }

  @Test
  void changesAfterACheckpoint_replayOnTopOfIt() throws Exception {
    Master first = open();
    List<Long> blocks = buildNamespace(first);
    first.fs().checkpoint();
    long worker = first.register("w2");
    FileInfo late = first.fs().createFile("/moved/c/late", 100, false, 0);
    long lateBlock = BlockId.of(late.id(), 0);
    first.fs().commitBlock(worker, lateBlock, 7, TIER);
    first.fs().completeFile("/moved/c/late", late.id(), 7);
    first.fs().rename("/moved", "/renamed-after-checkpoint");
    first.fs().delete("/x", true);
    blocks.add(lateBlock);
    Map<String, FileInfo> before = namespace(first.fs());
    Map<Long, Long> blocksBefore = blockLengths(first.fs(), blocks);
    List<Long> rootBefore = root(first.fs());
    first.journal().close();

    assertThat(before).containsKey("/renamed-after-checkpoint/c/late").doesNotContainKey("/x");

    Master second = open();
    assertThat(namespace(second.fs())).isEqualTo(before);
    assertThat(root(second.fs())).isEqualTo(rootBefore);
    assertThat(blockLengths(second.fs(), blocks)).isEqualTo(blocksBefore);
    assertThat(blocksBefore.get(lateBlock)).isEqualTo(7);
  }

  @Test
  void ownersModesAndTimes_areTheSameAfterReplay_andAfterACheckpointPlusReplay() throws Exception {
    Master first = open();
    FileSystemMaster fs = first.fs();
    fs.createFile("/o/p/f", 100, true, 0, io.strata.master.file.WriteType.MUST_CACHE, "", "alice");
    FileInfo done = fs.createFile("/o/done", 100, false, 0, io.strata.master.file.WriteType.MUST_CACHE, "", "bob");
    fs.completeFile("/o/done", done.id(), 0);
    fs.createDirectory("/o/q", false, false, 0, io.strata.master.file.WriteType.MUST_CACHE, "carol");
    tick();
    // Recursive over /o/p, then a later change to the file alone; times on an incomplete and a complete file.
    fs.setAttribute("/o/p", new AttributeChange(null, null, null, "dave", "staff", 0700, null, null, true));
    fs.setAttribute("/o/p/f", new AttributeChange(null, null, null, null, null, 0604, 1_234L, 5_678L, false));
    fs.setAttribute("/o/done", new AttributeChange(null, null, null, null, "g2", null, 42L, 43L, false));
    fs.setAttribute("/", new AttributeChange(null, null, null, "root", "wheel", 0711, null, 99L, false));
    Map<String, FileInfo> before = namespace(fs);
    FileInfo rootBefore = fs.getStatus("/");
    first.journal().close();

    assertThat(before.get("/o").owner()).isEqualTo("alice"); // a recursive create's parents: the creator's
    assertThat(before.get("/o/p").owner()).isEqualTo("dave");
    assertThat(before.get("/o/p").group()).isEqualTo("staff");
    assertThat(before.get("/o/p").mode()).isEqualTo(0700);
    FileInfo f = before.get("/o/p/f");
    assertThat(List.of(f.owner(), f.group(), f.mode(), f.modificationTimeMs(), f.accessTimeMs()))
        .containsExactly("dave", "staff", 0604, 1_234L, 5_678L);
    FileInfo d = before.get("/o/done");
    assertThat(List.of(d.owner(), d.group(), d.modificationTimeMs(), d.accessTimeMs()))
        .containsExactly("bob", "g2", 42L, 43L);
    assertThat(before.get("/o/q").owner()).isEqualTo("carol");
    assertThat(before.get("/o/q").group()).isEqualTo("carol");

    Master second = open();
    assertThat(namespace(second.fs())).isEqualTo(before);
    assertThat(rootAttributes(second.fs().getStatus("/"))).isEqualTo(rootAttributes(rootBefore));
    second.fs().checkpoint();
    second.journal().close();

    Master third = open();
    assertThat(namespace(third.fs())).isEqualTo(before);
    assertThat(rootAttributes(third.fs().getStatus("/"))).isEqualTo(rootAttributes(rootBefore));
  }

  private static List<Object> rootAttributes(FileInfo root) {
    return List.of(root.owner(), root.group(), root.mode(), root.accessTimeMs());
  }

  @Test
  void recursiveCreateTornBeforeItsLastEntry_leavesNoParentBehind() throws Exception {
    Master first = open();
    first.fs().createDirectory("/kept", false, false, 0);
    first.fs().createFile("/p/q/r/file", 100, true, 0); // Mkdir /p, /p/q, /p/q/r, CreateFile: one operation
    first.journal().close();
    Path seg = journalDir().resolve(String.format("segments/%020d.log", 1));
    try (FileChannel ch = FileChannel.open(seg, StandardOpenOption.WRITE)) {
      ch.truncate(ch.size() - 1); // the CreateFile entry never fully reached the disk
    }

    Master second = open();
    assertThat(namespace(second.fs()).keySet()).containsExactly("/kept");
  }

  @Test
  void blockAWorkerReportedBeforeItsCommit_isStillJournaledByTheCommit() throws Exception {
    Master first = open();
    FileInfo f = first.fs().createFile("/reported", 100, false, 0);
    long block = BlockId.of(f.id(), 0);
    // A worker that wrote the block registers (after a master restart, say) before it commits it: the
    // master learns the block from the report, which is not journaled.
    long worker = first.fs().blockMaster().register(new WorkerAddress("w1", 29999), 1L << 30, 0,
        List.of(new BlockReport(block, 80, TIER)), 0);
    first.fs().commitBlock(worker, block, 80, TIER);
    first.fs().completeFile("/reported", f.id(), 80);
    first.journal().close();

    Master second = open();
    assertThat(second.fs().getStatus("/reported").complete()).isTrue();
    assertThat(second.fs().blockMaster().blockLength(block)).isEqualTo(80);
  }

  // ------------------------------------------------------------------ MasterProcess

  private StrataConf processConf() {
    return StrataConf.of(Map.of(
        CommonKeys.HOME.name(), tmp.toString(),
        MasterKeys.JOURNAL_DIR.name(), "journal",
        CommonKeys.MASTER_RPC_PORT.name(), "0"));
  }

  @Test
  void masterProcess_recoversItsNamespace_acrossARestart() throws Exception {
    try (MasterProcess m = new MasterProcess(processConf(), clock).start()) {
      m.fileSystemMaster().createDirectory("/survives/restart", true, false, 0);
    }
    try (MasterProcess m = new MasterProcess(processConf(), clock).start()) {
      assertThat(m.fileSystemMaster().exists("/survives/restart")).isTrue();
      assertThat(m.journal().dir()).isEqualTo(journalDir());
    }
  }

  @Test
  void masterProcess_withAJournalCorruptInTheMiddle_failsToStart_withAClearError() throws Exception {
    Journal journal = new Journal(journalDir(), 1 << 20);
    journal.replay(e -> {});
    journal.startWriting();
    for (int i = 1; i <= 10; i++) {
      journal.append(new JournalEntry.Mkdir(i, "/d" + i, 0755, 1));
    }
    journal.flush();
    journal.close();
    Path seg = journalDir().resolve(String.format("segments/%020d.log", 1));
    long size = Files.size(seg);
    try (FileChannel ch = FileChannel.open(seg, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer one = ByteBuffer.allocate(1);
      ch.read(one, 12); // inside the first record's payload (after its 8-byte header)
      ch.write(ByteBuffer.wrap(new byte[] {(byte) (one.get(0) ^ 0xFF)}), 12);
    }

    MasterProcess m = new MasterProcess(processConf(), clock);
    try {
      assertThatThrownBy(m::start)
          .isInstanceOf(CorruptJournalException.class)
          .hasMessageContaining(seg.toString())
          .hasMessageContaining("corrupt in the middle")
          .hasMessageContaining("refusing to start");
    } finally {
      m.close();
    }
    assertThat(Files.size(seg)).as("the damaged journal is left for the operator").isEqualTo(size);
  }
}
