package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.InvalidPathException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.master.MutableClock;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.BlockReport;
import io.strata.master.block.BlockState;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FileSystemMasterTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final long MAX_BLOCK = 1024;
  private static final long BS = 100;
  private static final String TIER = "MEM";

  private MutableClock clock;
  private FileSystemMaster fs;
  private BlockMaster bm;
  private long worker;

  @BeforeEach
  void setUp() {
    clock = new MutableClock(1_000_000);
    fs = new FileSystemMaster(clock, TIMEOUT, MAX_BLOCK);
    bm = fs.blockMaster();
    worker = register("w1");
  }

  private long register(String host) {
    return bm.register(new WorkerAddress(host, 29999), 1L << 30, 0, List.of(), clock.millis());
  }

  private List<Long> removals(long workerId) {
    return bm.heartbeat(workerId, 1L << 30, 0, List.of(), List.of()).removeBlockIds();
  }

  private FileInfo create(String path) throws Exception {
    return fs.createFile(path, BS, true, 0);
  }

  /** A file where shuffle partition files live, the only files a copy may be committed in place of another for. */
  private FileInfo createShuffleFile(String name) throws Exception {
    if (!fs.exists("/.shuffle/app/0")) {
      fs.createDirectory("/.shuffle/app/0", true, false, 0755);
    }
    return create("/.shuffle/app/0/" + name);
  }

  // ---- createFile argument checks ----

  @Test
  void createFile_withBadBlockSizeOrMode_isRefused() {
    assertThatThrownBy(() -> fs.createFile("/f", 0, true, 0)).isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> fs.createFile("/f", -1, true, 0)).isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> fs.createFile("/f", MAX_BLOCK + 1, true, 0))
        .isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> fs.createFile("/f", BS, true, 010000)).isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> fs.createFile("/f", BS, true, -1)).isInstanceOf(InvalidArgumentException.class);
    assertThat(fs.tree().fileCount()).isZero();
  }

  @Test
  void createFile_withBlockSizeAtTheLimit_isAccepted() throws Exception {
    assertThat(fs.createFile("/f", MAX_BLOCK, true, 0).blockSize()).isEqualTo(MAX_BLOCK);
  }

  @Test
  void operations_onUnnormalisedPaths_areRefusedAsInvalidPaths() {
    assertThatThrownBy(() -> fs.createFile("/a//b", BS, true, 0)).isInstanceOf(InvalidPathException.class);
    assertThatThrownBy(() -> fs.getStatus("relative")).isInstanceOf(InvalidPathException.class);
  }

  // ---- commitBlock ----

  @Test
  void commitBlock_ofAMissingFile_isNotFound() {
    long block = BlockId.of(4242, 0);
    assertThatThrownBy(() -> fs.commitBlock(worker, block, 10, TIER)).isInstanceOf(NotFoundException.class);
    assertThat(bm.hasBlock(block)).isFalse();
  }

  @Test
  void commitBlock_ofADeletedFile_isNotFound() throws Exception {
    FileInfo f = create("/f");
    fs.delete("/f", false);
    assertThatThrownBy(() -> fs.commitBlock(worker, BlockId.of(f.id(), 0), 10, TIER))
        .isInstanceOf(NotFoundException.class);
    assertThat(bm.blockCount()).isZero();
  }

  @Test
  void commitBlocks_answersEachEntry_andAppliesTheGoodOnes() throws Exception {
    FileInfo a = create("/a");
    FileInfo b = create("/b");
    long missing = BlockId.of(4242, 0);

    java.util.List<io.strata.common.exception.StrataException> out = fs.commitBlocks(worker, java.util.List.of(
        new FileSystemMaster.BlockCommit(BlockId.of(a.id(), 0), 10, TIER, false, ""),
        new FileSystemMaster.BlockCommit(missing, 10, TIER, false, ""),
        new FileSystemMaster.BlockCommit(BlockId.of(b.id(), 0), BS + 1, TIER, false, ""),
        new FileSystemMaster.BlockCommit(BlockId.of(b.id(), 1), 7, TIER, false, "")));

    assertThat(out).hasSize(4);
    assertThat(out.get(0)).isNull();
    assertThat(out.get(1)).isInstanceOf(NotFoundException.class).hasMessageContaining("4242");
    assertThat(out.get(2)).isInstanceOf(InvalidArgumentException.class);
    assertThat(out.get(3)).isNull();
    assertThat(bm.blockLength(BlockId.of(a.id(), 0))).isEqualTo(10);
    assertThat(bm.hasBlock(missing)).isFalse();
    assertThat(bm.hasBlock(BlockId.of(b.id(), 0))).isFalse();
    assertThat(bm.blockLength(BlockId.of(b.id(), 1))).isEqualTo(7);
    assertThat(bm.getBlock(BlockId.of(b.id(), 1)).locations()).hasSize(1);
  }

  @Test
  void commitBlock_withNegativeId_isRefused() {
    assertThatThrownBy(() -> fs.commitBlock(worker, -1, 10, TIER)).isInstanceOf(InvalidArgumentException.class);
  }

  @Test
  void commitBlock_longerThanTheBlockSize_isRefused_andNotRecorded() throws Exception {
    FileInfo f = create("/f");
    long block = BlockId.of(f.id(), 0);

    assertThatThrownBy(() -> fs.commitBlock(worker, block, BS + 1, TIER))
        .isInstanceOf(InvalidArgumentException.class);
    assertThat(bm.hasBlock(block)).isFalse();

    fs.commitBlock(worker, block, BS, TIER);
    assertThat(bm.blockLength(block)).isEqualTo(BS);
  }

  @Test
  void commitBlock_intoACompleteFile_isRefused() throws Exception {
    FileInfo f = create("/f");
    fs.completeFile("/f", f.id(), 0);
    long block = BlockId.of(f.id(), 0);

    assertThatThrownBy(() -> fs.commitBlock(worker, block, 10, TIER))
        .isInstanceOf(FailedPreconditionException.class);
    assertThat(bm.hasBlock(block)).isFalse();
  }

  @Test
  void commitBlock_ofAnExistingBlockOfACompleteFile_addsAnotherCopy() throws Exception {
    FileInfo f = create("/f");
    long block = BlockId.of(f.id(), 0);
    fs.commitBlock(worker, block, 40, TIER);
    fs.completeFile("/f", f.id(), 40);
    long w2 = register("w2");

    fs.commitBlock(w2, block, 40, "SSD");

    assertThat(bm.getBlock(block).locations()).extracting(l -> l.worker().id())
        .containsExactlyInAnyOrder(worker, w2);
  }

  // ---- completeFile ----

  @Test
  void completeFile_whenABlockWasNeverCommitted_isRefused_andTheFileStaysIncomplete() throws Exception {
    FileInfo f = create("/f");
    fs.commitBlock(worker, BlockId.of(f.id(), 0), BS, TIER);
    fs.commitBlock(worker, BlockId.of(f.id(), 2), 50, TIER);

    assertThatThrownBy(() -> fs.completeFile("/f", f.id(), 250))
        .isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("block 1 was never committed");

    assertThat(fs.getStatus("/f").complete()).isFalse();
    assertThat(bm.hasBlock(BlockId.of(f.id(), 2))).as("a refused completion drops nothing").isTrue();
  }

  @Test
  void completeFile_whenABlockHasTheWrongLength_isRefused() throws Exception {
    FileInfo f = create("/f");
    fs.commitBlock(worker, BlockId.of(f.id(), 0), BS, TIER);
    fs.commitBlock(worker, BlockId.of(f.id(), 1), 40, TIER);

    assertThatThrownBy(() -> fs.completeFile("/f", f.id(), 150))
        .isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("block 1 has 40 bytes, expected 50");
    assertThat(fs.getStatus("/f").complete()).isFalse();
  }

  @Test
  void completeFile_whenAFullBlockIsShort_isRefused() throws Exception {
    FileInfo f = create("/f");
    fs.commitBlock(worker, BlockId.of(f.id(), 0), BS - 1, TIER);
    fs.commitBlock(worker, BlockId.of(f.id(), 1), 50, TIER);

    assertThatThrownBy(() -> fs.completeFile("/f", f.id(), 150))
        .isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("block 0 has 99 bytes, expected 100");
  }

  @Test
  void completeFile_withEveryBlockCommitted_completes_andBlocksOfListsThem() throws Exception {
    FileInfo f = create("/f");
    fs.commitBlock(worker, BlockId.of(f.id(), 0), BS, TIER);
    fs.commitBlock(worker, BlockId.of(f.id(), 1), BS, TIER);
    fs.commitBlock(worker, BlockId.of(f.id(), 2), 1, TIER);

    FileInfo done = fs.completeFile("/f", f.id(), 201);

    assertThat(done.complete()).isTrue();
    assertThat(done.length()).isEqualTo(201);
    assertThat(done.blockCount()).isEqualTo(3);
    assertThat(fs.getStatus("/f").complete()).isTrue();
    List<BlockState> blocks = fs.blocksOf(done);
    assertThat(blocks).extracting(BlockState::blockId)
        .containsExactly(BlockId.of(f.id(), 0), BlockId.of(f.id(), 1), BlockId.of(f.id(), 2));
    assertThat(blocks).extracting(BlockState::length).containsExactly(BS, BS, 1L);
    for (BlockState b : blocks) {
      assertThat(b.locations()).singleElement().satisfies(l -> {
        assertThat(l.worker().id()).isEqualTo(worker);
        assertThat(l.tier()).isEqualTo(TIER);
      });
    }
  }

  @Test
  void completeFile_ofExactMultipleOfBlockSize_needsNoPartialBlock() throws Exception {
    FileInfo f = create("/f");
    fs.commitBlock(worker, BlockId.of(f.id(), 0), BS, TIER);
    fs.commitBlock(worker, BlockId.of(f.id(), 1), BS, TIER);

    assertThat(fs.completeFile("/f", f.id(), 2 * BS).blockCount()).isEqualTo(2);
  }

  @Test
  void completeFile_withLengthZero_needsNoBlocks() throws Exception {
    FileInfo f = create("/f");
    FileInfo done = fs.completeFile("/f", f.id(), 0);
    assertThat(done.complete()).isTrue();
    assertThat(fs.blocksOf(done)).isEmpty();
  }

  @Test
  void completeFile_dropsBlocksCommittedPastTheEnd_andTellsTheWorker() throws Exception {
    FileInfo f = create("/f");
    long b0 = BlockId.of(f.id(), 0);
    long b1 = BlockId.of(f.id(), 1);
    long b2 = BlockId.of(f.id(), 2);
    fs.commitBlock(worker, b0, BS, TIER);
    fs.commitBlock(worker, b1, 50, TIER);
    fs.commitBlock(worker, b2, 10, TIER);

    fs.completeFile("/f", f.id(), 150);

    assertThat(bm.hasBlock(b0)).isTrue();
    assertThat(bm.hasBlock(b1)).isTrue();
    assertThat(bm.hasBlock(b2)).isFalse();
    assertThat(removals(worker)).containsExactly(b2);
  }

  @Test
  void completeFile_withAHugeLength_isRefused_andDoesNotCompleteTheFile() throws Exception {
    FileInfo f = create("/f");
    fs.commitBlock(worker, BlockId.of(f.id(), 0), 10, TIER);

    assertThatThrownBy(() -> fs.completeFile("/f", f.id(), Long.MAX_VALUE))
        .isInstanceOf(InvalidArgumentException.class);

    FileInfo after = fs.getStatus("/f");
    assertThat(after.complete()).isFalse();
    assertThat(after.length()).isZero();
    assertThat(bm.hasBlock(BlockId.of(f.id(), 0))).isTrue();
    assertThat(fs.completeFile("/f", f.id(), 10).complete()).isTrue();
  }

  @Test
  void completeFile_oneBlockPastTheIndexLimit_isRefusedAsTooLarge() throws Exception {
    FileInfo f = create("/f");
    long tooLong = (BlockId.MAX_INDEX + 1) * BS + 1;
    assertThatThrownBy(() -> fs.completeFile("/f", f.id(), tooLong))
        .isInstanceOf(InvalidArgumentException.class);
    assertThat(fs.getStatus("/f").complete()).isFalse();
  }

  // ---- delete ----

  @Test
  void delete_removesTheFilesBlocks_andTheHoldingWorkerIsToldToRemoveThem() throws Exception {
    FileInfo f = create("/f");
    FileInfo other = create("/other");
    long b0 = BlockId.of(f.id(), 0);
    long b1 = BlockId.of(f.id(), 1);
    long kept = BlockId.of(other.id(), 0);
    fs.commitBlock(worker, b0, BS, TIER);
    fs.commitBlock(worker, b1, 5, TIER);
    fs.commitBlock(worker, kept, 5, TIER);
    fs.completeFile("/f", f.id(), BS + 5);

    fs.delete("/f", false);

    assertThat(bm.hasBlock(b0)).isFalse();
    assertThat(bm.hasBlock(b1)).isFalse();
    assertThat(bm.hasBlock(kept)).isTrue();
    assertThat(bm.blockCount()).isEqualTo(1);
    assertThat(removals(worker)).containsExactlyInAnyOrder(b0, b1);
    assertThat(bm.liveWorkers()).singleElement().extracting(w -> w.blockCount()).isEqualTo(1L);
  }

  @Test
  void delete_ofADirectoryRecursively_removesTheBlocksOfNestedFiles() throws Exception {
    FileInfo a = create("/d/a");
    FileInfo b = create("/d/sub/b");
    long w2 = register("w2");
    fs.commitBlock(worker, BlockId.of(a.id(), 0), 1, TIER);
    fs.commitBlock(w2, BlockId.of(b.id(), 0), 2, TIER);

    fs.delete("/d", true);

    assertThat(bm.blockCount()).isZero();
    assertThat(removals(worker)).containsExactly(BlockId.of(a.id(), 0));
    assertThat(removals(w2)).containsExactly(BlockId.of(b.id(), 0));
  }

  /**
   * A copy committed in place of another worker's (a shuffle replica sealed in place of its failed primary:
   * CommitBlockRequest.replaces) replaces it: the other's location goes, it is told to remove its copy, and its
   * report of that copy is refused, when it heartbeats and after it registers again (a restart, the same address).
   * A plain commit of the same block by a third worker replaces nothing.
   */
  @Test
  void commitBlock_inPlaceOfAnotherWorker_replacesItsCopy_forGood() throws Exception {
    long w2 = register("w2");
    long w3 = register("w3");
    FileInfo f = createShuffleFile("f");
    long block = BlockId.of(f.id(), 0);
    fs.commitBlock(worker, block, 30, TIER);
    fs.commitBlock(w2, block, 30, TIER, false, "w1:29999");
    assertThat(bm.getBlock(block).locations()).extracting(l -> l.worker().id()).containsExactly(w2);
    assertThat(removals(worker)).containsExactly(block);

    // Its heartbeat report of the copy (a commit that overlapped a beat is reported again) lists nothing.
    bm.heartbeat(worker, 1L << 30, 30, List.of(new BlockReport(block, 30, TIER)), List.of());
    assertThat(bm.getBlock(block).locations()).extracting(l -> l.worker().id()).containsExactly(w2);
    // Nor does its registration after a restart (the same address, a new id), which is asked to remove it.
    long again = bm.register(new WorkerAddress("w1", 29999), 1L << 30, 30, List.of(new BlockReport(block, 30, TIER)),
        clock.millis());
    assertThat(bm.getBlock(block).locations()).extracting(l -> l.worker().id()).containsExactly(w2);
    assertThat(removals(again)).containsExactly(block);

    // A plain commit by another worker (a block written again after a commit that seemed to fail) keeps both.
    fs.commitBlock(w3, block, 30, TIER);
    assertThat(bm.getBlock(block).locations()).extracting(l -> l.worker().id()).containsExactlyInAnyOrder(w2, w3);

    // Any other file's copy is never replaced: a commit in place of it (a worker's shuffle service sent a wrong file
    // id) is refused, and the genuine copy stays listed.
    FileInfo plain = create("/plain");
    long plainBlock = BlockId.of(plain.id(), 0);
    fs.commitBlock(again, plainBlock, 30, TIER);
    assertThatThrownBy(() -> fs.commitBlock(w2, plainBlock, 30, TIER, false, "w1:29999"))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("is not a shuffle partition file");
    assertThat(bm.getBlock(plainBlock).locations()).extracting(l -> l.worker().id()).containsExactly(again);
  }

  /**
   * A copy of another length than the block's is refused as a plain commit; committed in place of the only copy
   * listed (a shuffle replica shorter than its failed primary), it gives the block its length, and the old copy is
   * refused when reported again. With a third copy of the old length listed, it is refused and changes nothing.
   */
  @Test
  void commitBlock_ofAnotherLength_isTakenOnlyInPlaceOfTheOnlyCopy() throws Exception {
    long w2 = register("w2");
    long w3 = register("w3");
    FileInfo f = createShuffleFile("f");
    long block = BlockId.of(f.id(), 0);
    fs.commitBlock(worker, block, 30, TIER);
    assertThatThrownBy(() -> fs.commitBlock(w2, block, 20, TIER)).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("already committed with length 30, not 20");
    fs.commitBlock(w3, block, 30, TIER);
    assertThatThrownBy(() -> fs.commitBlock(w2, block, 20, TIER, false, "w1:29999"))
        .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("besides w1:29999");
    assertThat(bm.blockLength(block)).isEqualTo(30);
    assertThat(bm.getBlock(block).locations()).extracting(l -> l.worker().id()).containsExactlyInAnyOrder(worker, w3);

    FileInfo g = createShuffleFile("g");
    long other = BlockId.of(g.id(), 0);
    fs.commitBlock(worker, other, 30, TIER);
    fs.commitBlock(w2, other, 20, TIER, false, "w1:29999");
    assertThat(bm.blockLength(other)).isEqualTo(20);
    assertThat(bm.getBlock(other).locations()).extracting(l -> l.worker().id()).containsExactly(w2);
    assertThat(removals(worker)).contains(other);
    bm.heartbeat(worker, 1L << 30, 30, List.of(new BlockReport(other, 30, TIER)), List.of());
    assertThat(bm.getBlock(other).locations()).extracting(l -> l.worker().id()).containsExactly(w2);
    assertThat(fs.completeFile(g.path(), g.id(), 20).length()).isEqualTo(20);
  }

  /**
   * A worker lost (silent past the timeout) that another worker's copy is then committed in place of: when it
   * comes back with its store, its report of that copy is refused and it is told to remove it.
   */
  @Test
  void lostWorker_replacedMeanwhile_isRefusedItsCopyWhenItComesBack() throws Exception {
    long w2 = register("w2");
    FileInfo f = createShuffleFile("f");
    long block = BlockId.of(f.id(), 0);
    fs.commitBlock(worker, block, 30, TIER);
    loseFirstWorker(w2);
    assertThat(bm.getBlock(block).locations()).isEmpty();

    fs.commitBlock(w2, block, 30, TIER, false, "w1:29999");
    long back = bm.register(new WorkerAddress("w1", 29999), 1L << 30, 30, List.of(new BlockReport(block, 30, TIER)),
        clock.millis());
    assertThat(bm.getBlock(block).locations()).extracting(l -> l.worker().id()).containsExactly(w2);
    assertThat(removals(back)).containsExactly(block);
  }

  /** The first worker falls silent past the timeout and is marked lost; {@code alive} keeps heartbeating. */
  private void loseFirstWorker(long alive) {
    clock.advance(TIMEOUT.dividedBy(2));
    bm.heartbeat(alive, 1L << 30, 30, List.of(), List.of());
    clock.advance(TIMEOUT.dividedBy(2).plusMillis(1));
    assertThat(bm.detectLostWorkers()).extracting(w -> w.id()).containsExactly(worker);
  }

  // ---- blocksOf ----

  @Test
  void blocksOf_listsOnlyLiveWorkers() throws Exception {
    long w2 = register("w2");
    FileInfo f = create("/f");
    long block = BlockId.of(f.id(), 0);
    fs.commitBlock(worker, block, 30, TIER);
    fs.commitBlock(w2, block, 30, "SSD");
    FileInfo done = fs.completeFile("/f", f.id(), 30);
    assertThat(fs.blocksOf(done).get(0).locations()).hasSize(2);

    // w2 keeps heartbeating, w1 falls silent past the timeout.
    loseFirstWorker(w2);

    List<BlockState> blocks = fs.blocksOf(done);
    assertThat(blocks).singleElement().satisfies(b -> {
      assertThat(b.length()).isEqualTo(30);
      assertThat(b.locations()).singleElement().satisfies(l -> {
        assertThat(l.worker().id()).isEqualTo(w2);
        assertThat(l.tier()).isEqualTo("SSD");
      });
    });
  }
}
