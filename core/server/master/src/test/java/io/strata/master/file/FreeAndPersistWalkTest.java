package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.common.path.StrataPath;
import io.strata.master.MutableClock;
import io.strata.master.block.BlockReport;
import io.strata.master.file.MasterReplies.FreeResult;
import io.strata.master.file.MasterReplies.PersistCommand;
import io.strata.master.journal.Journal;
import io.strata.master.journal.JournalEntry;
import io.strata.server.ufs.UfsManager;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Free and persist of a subtree larger than one walk batch (the batch made small here), over a real journal and a
 * local-dir under file system: every file acted on once, at most a batch of snapshots held at a time, changes made
 * during the walk tolerated; and a free surviving a restart of the master from its journal (and its checkpoint), so
 * that a worker reporting a freed copy afterwards is told to remove it. The worker's side is the master's worker
 * protocol called as a worker calls it.
 */
class FreeAndPersistWalkTest {
  private static final long BS = 100;
  private static final String TIER = "MEM";
  private static final int BATCH = 10;
  private static final WorkerAddress W1 = new WorkerAddress("w1", 29999);

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
    worker = fs.blockMaster().register(W1, 1L << 30, 0, List.of(), 0);
  }

  @AfterEach
  void tearDown() {
    journals.forEach(Journal::close);
    manager.close();
  }

  private FileSystemMaster open() throws IOException {
    Journal journal = new Journal(tmp.resolve("journal"), 1 << 20);
    journals.add(journal);
    FileSystemMaster m = FileSystemMasterUfsTest.open(tmp, ufs, manager, journal, clock, Map.of(), 1000);
    m.walkBatches().size(BATCH);
    return m;
  }

  private void restart() throws IOException {
    journals.forEach(Journal::close);
    journals.clear();
    fs = open();
  }

  /** Every entry of the journal, read after the master's journal is closed. */
  private List<JournalEntry> journalEntries() throws IOException {
    journals.forEach(Journal::close);
    journals.clear();
    List<JournalEntry> out = new ArrayList<>();
    try (Journal j = new Journal(tmp.resolve("journal"), 1 << 20)) {
      j.replayReadOnly(out::add);
    }
    return out;
  }

  /**
   * {@code dirs} directories of {@code each} 150-byte files under /big, in the UFS (so persisted), loaded, each with
   * its two blocks cached on the worker; returns their ids by path.
   */
  private Map<String, Long> cachedPersistedTree(int dirs, int each) throws Exception {
    for (int d = 0; d < dirs; d++) {
      for (int i = 0; i < each; i++) {
        Path p = ufs.resolve("big/d" + d + "/sub/f" + i);
        Files.createDirectories(p.getParent());
        Files.writeString(p, ("" + d + "-" + i + "|").repeat(50).substring(0, 150), StandardCharsets.UTF_8);
      }
    }
    Map<String, Long> ids = new HashMap<>();
    fs.listStatus("/big", true, 1000, b -> b.stream().filter(f -> !f.directory()).forEach(f -> ids.put(f.path(),
        f.id())));
    for (long id : ids.values()) {
      fs.commitBlock(worker, BlockId.of(id, 0), 100, TIER);
      fs.commitBlock(worker, BlockId.of(id, 1), 50, TIER);
    }
    return ids;
  }

  private List<Long> removalsFor(long workerId) {
    return fs.workerHeartbeat(workerId, 1L << 30, 0, List.of(), List.of(), null, 0, List.of()).removeBlockIds();
  }

  private static Set<Long> blocksOf(Iterable<Long> fileIds) {
    Set<Long> out = new HashSet<>();
    for (long id : fileIds) {
      out.add(BlockId.of(id, 0));
      out.add(BlockId.of(id, 1));
    }
    return out;
  }

  private void assertUfsHolds(Map<String, Long> files) throws IOException {
    for (String path : files.keySet()) {
      String content = Files.readString(ufs.resolve(path.substring(1)), StandardCharsets.UTF_8);
      assertThat(content).as("the UFS copy of %s", path).hasSize(150);
    }
  }

  @Test
  void free_ofASubtreeLargerThanABatch_freesEveryFileOnce_holdingAtMostABatchOfSnapshots() throws Exception {
    Map<String, Long> files = cachedPersistedTree(6, 50); // 300 files, 600 blocks, 30 batches
    FileInfo writing = fs.createFile("/big/d0/being-written", BS, false, 0, WriteType.MUST_CACHE);
    fs.commitBlock(worker, BlockId.of(writing.id(), 0), 10, TIER);

    FreeResult r = fs.free("/big", true, false);

    assertThat(r).isEqualTo(new FreeResult(300, 600));
    assertThat(fs.walkBatches().largest()).as("snapshots held at once").isBetween(1, BATCH);
    assertThat(removalsFor(worker)).containsExactlyInAnyOrderElementsOf(blocksOf(files.values()));
    for (long id : files.values()) {
      assertThat(fs.blockSource(BlockId.of(id, 0)).locations()).isEmpty();
    }
    assertThat(fs.blockMaster().getBlock(BlockId.of(writing.id(), 0)).locations()).as("a file being written").hasSize(1);
    assertUfsHolds(files);
    // Journaled, each file once.
    List<Long> journaledFree = new ArrayList<>();
    for (JournalEntry e : journalEntries()) {
      if (e instanceof JournalEntry.Free f) {
        assertThat(f.fileIds().size()).isLessThanOrEqualTo(BATCH);
        journaledFree.addAll(f.fileIds());
      }
    }
    assertThat(journaledFree).containsExactlyInAnyOrderElementsOf(files.values());
  }

  @Test
  void free_refusesChangingNothing_whenOneFileDeepInTheSubtreeIsNotPersisted() throws Exception {
    Map<String, Long> files = cachedPersistedTree(3, 20);
    FileInfo mine = fs.createFile("/big/d2/sub/zz-only-cached", BS, false, 0, WriteType.MUST_CACHE);
    fs.commitBlock(worker, BlockId.of(mine.id(), 0), 10, TIER);
    fs.completeFile("/big/d2/sub/zz-only-cached", mine.id(), 10); // the last file the walk visits

    assertThatThrownBy(() -> fs.free("/big", true, true)).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("/big/d2/sub/zz-only-cached").hasMessageContaining("NOT_PERSISTED");

    assertThat(removalsFor(worker)).isEmpty();
    for (long id : files.values()) {
      assertThat(fs.blockSource(BlockId.of(id, 0)).locations()).hasSize(1);
    }
    assertThat(fs.blockSource(BlockId.of(mine.id(), 0)).locations()).as("its only copy").hasSize(1);
  }

  @Test
  void free_withFilesDeletedAndRenamedWhileItWalks_doesNotFail_andFreesNoFileTwice() throws Exception {
    fs.walkBatches().size(1); // a batch per inode: the most chances for the other thread to come between batches
    Map<String, Long> files = cachedPersistedTree(4, 40);
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      Future<?> changes = other.submit(() -> {
        for (int i = 0; i < 40; i++) {
          fs.delete("/big/d1/sub/f" + i, false, true);
          fs.rename("/big/d0/sub/f" + i, "/big/d3/sub/g" + i); // from early in the walk to late in it
        }
        return null;
      });
      FreeResult r = fs.free("/big", true, false);
      changes.get(30, TimeUnit.SECONDS);
      // d0's files (freed where they are, or where they went) and d2's and d3's: 120; d1's as far as not deleted first.
      assertThat(r.filesFreed()).isBetween(120L, 160L);
    } finally {
      other.shutdownNow();
    }
    List<Long> journaledFree = new ArrayList<>();
    for (JournalEntry e : journalEntries()) {
      if (e instanceof JournalEntry.Free f) {
        journaledFree.addAll(f.fileIds());
      }
    }
    assertThat(journaledFree).doesNotHaveDuplicates();
    for (int i = 0; i < 40; i++) {
      assertThat(journaledFree).as("files there for the whole walk, and files moved within it")
          .contains(files.get("/big/d2/sub/f" + i), files.get("/big/d3/sub/f" + i), files.get("/big/d0/sub/f" + i));
      assertThat(Files.size(ufs.resolve("big/d2/sub/f" + i))).as("the UFS copy").isEqualTo(150);
      assertThat(Files.size(ufs.resolve("big/d3/sub/g" + i))).as("the UFS copy, moved").isEqualTo(150);
    }
  }

  @Test
  void scheduleAsyncPersistence_ofASubtreeLargerThanABatch_queuesEveryFileOnce_andRoundsReadTheQueueInBatches()
      throws Exception {
    Set<Long> ids = new HashSet<>();
    for (int d = 0; d < 5; d++) {
      for (int i = 0; i < 40; i++) {
        String path = "/p/d" + d + "/f" + i;
        FileInfo f = fs.createFile(path, BS, true, 0, WriteType.MUST_CACHE);
        fs.commitBlock(worker, BlockId.of(f.id(), 0), 20, TIER);
        ids.add(fs.completeFile(path, f.id(), 20).id());
      }
    }

    fs.scheduleAsyncPersistence("/p");

    assertThat(fs.walkBatches().largest()).isBetween(1, BATCH);
    assertThat(fs.tree().filesToPersist()).containsExactlyInAnyOrderElementsOf(ids);
    fs.persistTick();
    List<Long> commanded = new ArrayList<>();
    for (PersistCommand c : fs.workerHeartbeat(worker, 1L << 30, 0, List.of(), List.of(), null, 0, List.of())
        .persist()) {
      commanded.add(c.fileId());
    }
    assertThat(commanded).as("one command per file").containsExactlyInAnyOrderElementsOf(ids);
    assertThat(fs.walkBatches().largest()).as("queue ids read at once too").isBetween(1, BATCH);
    List<Long> queued = new ArrayList<>();
    for (JournalEntry e : journalEntries()) {
      if (e instanceof JournalEntry.SetAttribute a && "TO_BE_PERSISTED".equals(a.persistenceState())) {
        queued.add(a.id());
      }
    }
    assertThat(queued).as("each file queued once").containsExactlyInAnyOrderElementsOf(ids);
  }

  /**
   * A free acknowledged while the worker holding the blocks is away (or before the removal reached it), then the
   * master restarts from its journal: the worker, registering with every block it holds, is told to remove the freed
   * copies, and the master lists none of them; a copy cached again after the free is kept. The same after a checkpoint.
   */
  @Test
  void aFreeSurvivesAMasterRestart_theWorkerIsToldToRemoveTheFreedCopies_andTheUfsStillHoldsTheBytes()
      throws Exception {
    Map<String, Long> files = cachedPersistedTree(2, 15);
    long recached = files.get("/big/d1/sub/f3");
    assertThat(fs.free("/big", true, false)).isEqualTo(new FreeResult(30, 60));
    fs.commitBlock(worker, BlockId.of(recached, 1), 50, TIER); // read again after the free, cached again
    List<BlockReport> held = new ArrayList<>(); // the worker never removed anything
    for (long b : blocksOf(files.values())) {
      held.add(new BlockReport(b, BlockId.index(b) == 0 ? 100 : 50, TIER));
    }
    Set<Long> freedCopies = blocksOf(files.values());
    freedCopies.remove(BlockId.of(recached, 1));

    for (boolean checkpoint : new boolean[] {false, true}) {
      if (checkpoint) {
        fs.checkpoint();
      }
      restart();
      long w = fs.blockMaster().register(W1, 1L << 30, 0, held, 0);
      fs.workerRegistered(w, held);

      assertThat(removalsFor(w)).as("checkpoint: %s", checkpoint).containsExactlyInAnyOrderElementsOf(freedCopies);
      for (long b : freedCopies) {
        assertThat(fs.blockSource(b).locations()).as("block %d listed", b).isEmpty();
      }
      assertThat(fs.blockSource(BlockId.of(recached, 1)).locations()).as("cached again since").hasSize(1);
      for (Map.Entry<String, Long> f : files.entrySet()) {
        FileInfo info = fs.getStatus(f.getKey());
        assertThat(info.id()).isEqualTo(f.getValue());
        assertThat(info.persistence()).isEqualTo(PersistenceState.PERSISTED);
      }
      assertUfsHolds(files);
    }
    // A freed file deleted: its mark goes with it (a new file never inherits one; ids are not reused).
    long gone = files.get("/big/d0/sub/f0");
    fs.delete("/big/d0/sub/f0", false);
    assertThat(fs.blockMaster().freed(gone)).isFalse();
    assertThat(fs.blockMaster().freed(files.get("/big/d0/sub/f1"))).isTrue();
  }

  /**
   * The walk itself, on a tree changed between its batches as the free's may be: a visited file renamed ahead of the
   * walk, a visited directory moved out and back in ahead, a file ahead deleted, files made behind and ahead.
   */
  @Test
  void aWalk_visitsNoFileTwice_whateverIsRenamedBetweenBatches() throws Exception {
    InodeTree tree = new InodeTree(clock);
    for (String p : List.of("/t/a/f1", "/t/a/f2", "/t/b/f1", "/t/c/f1", "/t/c/f2", "/t/d/f1")) {
      tree.createFile(StrataPath.of(p), BS, true, 0);
    }
    List<String> seen = new ArrayList<>();
    Set<Long> seenIds = new HashSet<>();
    try (SubtreeWalk walk = tree.walk(StrataPath.of("/t"))) {
      // /t/a, /t/a/f1, /t/a/f2, /t/b: the walk stands at /t/b.
      tree.nextBatch(walk, 4).forEach(v -> {
        seen.add(v.file().path());
        seenIds.add(v.file().id());
      });
      assertThat(seen).containsExactly("/t/a/f1", "/t/a/f2");
      tree.rename(StrataPath.of("/t/a/f1"), StrataPath.of("/t/z1")); // visited, moved ahead
      tree.rename(StrataPath.of("/t/a"), StrataPath.of("/elsewhere")); // visited, out ...
      tree.rename(StrataPath.of("/elsewhere"), StrataPath.of("/t/y")); // ... and back in, ahead
      tree.rename(StrataPath.of("/t/b"), StrataPath.of("/t/x")); // entered, nothing in it visited: visited there
      tree.delete(StrataPath.of("/t/c/f2"), false); // ahead, gone
      tree.createFile(StrataPath.of("/t/d/f0"), BS, false, 0); // ahead, new
      tree.createFile(StrataPath.of("/t/a0"), BS, false, 0); // behind, new
      while (!walk.done()) {
        for (SubtreeWalk.Visit v : tree.nextBatch(walk, 2)) {
          assertThat(seenIds.add(v.file().id())).as("visited twice: %s", v.file().path()).isTrue();
          seen.add(v.file().path());
        }
      }
      assertThat(walk.largestBatch()).isLessThanOrEqualTo(2);
    }
    assertThat(seen).containsExactly("/t/a/f1", "/t/a/f2", "/t/c/f1", "/t/d/f0", "/t/d/f1", "/t/x/f1");
    assertThat(tree.walks).as("closed walks leave the tree's list").isEmpty();
  }

  @Test
  void aWalkOfAFile_visitsItOnce_andAWalkWhoseTopIsDeleted_ends() throws Exception {
    InodeTree tree = new InodeTree(clock);
    tree.createFile(StrataPath.of("/one"), BS, true, 0);
    tree.createFile(StrataPath.of("/gone/f1"), BS, true, 0);
    tree.createFile(StrataPath.of("/gone/f2"), BS, true, 0);
    try (SubtreeWalk file = tree.walk(StrataPath.of("/one")); SubtreeWalk dir = tree.walk(StrataPath.of("/gone"))) {
      assertThat(tree.nextBatch(file, 5)).extracting(v -> v.file().path()).containsExactly("/one");
      assertThat(file.done()).isTrue();
      assertThat(tree.nextBatch(file, 5)).isEmpty();
      assertThat(tree.nextBatch(dir, 1)).extracting(v -> v.file().path()).containsExactly("/gone/f1");
      tree.delete(StrataPath.of("/gone"), true);
      assertThat(tree.nextBatch(dir, 5)).isEmpty();
      assertThat(dir.done()).isTrue();
    }
    assertThatThrownBy(() -> tree.walk(StrataPath.of("/missing"))).isInstanceOf(StrataException.class);
  }
}
