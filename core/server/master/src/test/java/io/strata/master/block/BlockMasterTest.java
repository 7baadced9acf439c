package io.strata.master.block;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.master.MutableClock;
import io.strata.master.block.FileLookup.FileState;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class BlockMasterTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final long CAPACITY = 1L << 30;
  private static final WorkerAddress A = new WorkerAddress("host-a", 29999);
  private static final WorkerAddress B = new WorkerAddress("host-b", 29999);
  private static final long OPEN_FILE = 5;
  private static final long DONE_FILE = 6;
  private static final long GONE_FILE = 7;

  private MutableClock clock;
  private final Map<Long, FileState> files = new HashMap<>();
  private BlockMaster bm;

  @BeforeEach
  void setUp() {
    clock = new MutableClock(1_000_000);
    files.put(OPEN_FILE, FileState.INCOMPLETE);
    files.put(DONE_FILE, FileState.COMPLETE);
    bm = new BlockMaster(clock, TIMEOUT, id -> files.getOrDefault(id, FileState.MISSING));
  }

  private long register(WorkerAddress addr, BlockReport... report) {
    return bm.register(addr, CAPACITY, 0, List.of(report), clock.millis());
  }

  private HeartbeatResult beat(long workerId) {
    return bm.heartbeat(workerId, CAPACITY, 0, List.of(), List.of());
  }

  private List<Long> locationsOf(long blockId) {
    return bm.getBlock(blockId).locations().stream().map(l -> l.worker().id()).toList();
  }

  // ---- registration ----

  @Test
  void register_returnsDistinctIds_andListsWorkersWithTheirReport() {
    long a = bm.register(A, 1000, 300, List.of(), 42);
    long b = register(B);

    assertThat(a).isNotEqualTo(b);
    assertThat(bm.liveWorkers()).extracting(WorkerState::id).containsExactly(a, b);
    WorkerState wa = bm.liveWorkers().get(0);
    assertThat(wa.address()).isEqualTo(A);
    assertThat(wa.capacityBytes()).isEqualTo(1000);
    assertThat(wa.usedBytes()).isEqualTo(300);
    assertThat(wa.startTimeMs()).isEqualTo(42);
    assertThat(wa.lastHeartbeatMs()).isEqualTo(1_000_000);
  }

  @Test
  void register_fromTheSameAddress_replacesTheOldRegistration() throws Exception {
    long old = register(A);
    long block = BlockId.of(OPEN_FILE, 0);
    bm.commitBlock(old, block, 10, "MEM");

    long fresh = register(A);

    assertThat(fresh).isNotEqualTo(old);
    assertThat(bm.liveWorkers()).extracting(WorkerState::id).containsExactly(fresh);
    assertThat(bm.lostWorkers()).isEmpty();
    assertThat(locationsOf(block)).as("the old registration's locations are dropped").isEmpty();
    assertThat(bm.hasBlock(block)).isTrue();
    assertThat(beat(old).reregister()).isTrue();
    assertThatThrownBy(() -> bm.commitBlock(old, BlockId.of(OPEN_FILE, 1), 10, "MEM"))
        .isInstanceOf(NotFoundException.class);
  }

  /**
   * A reported block with a negative length (of a file that does not exist, or one being written) is no copy: it is
   * told to go and no record is made. Before, length -1 matched the "no length may be cached" answer for a missing
   * file and became a record that nothing removed and that refused the real commit of that block id for good.
   */
  @Test
  void reportedBlocksWithANegativeLength_areRemoved_andMakeNoRecord() throws Exception {
    long missing = BlockId.of(GONE_FILE, 0);
    long open = BlockId.of(OPEN_FILE, 0);
    long a = register(A, new BlockReport(missing, -1, "MEM"), new BlockReport(open, -5, "MEM"));
    assertThat(bm.getBlock(missing)).isNull();
    assertThat(bm.getBlock(open)).isNull();
    assertThat(beat(a).removeBlockIds()).containsExactlyInAnyOrder(missing, open);
    bm.commitBlock(a, open, 10, "MEM"); // the real commit of that id goes through
    assertThat(bm.getBlock(open).length()).isEqualTo(10);
  }

  /**
   * A heartbeat that reports a block added after the master told that worker to remove it (the worker
   * collected its report before the removal reached it) lists no copy there; once the worker reports it
   * removed, a copy cached again is listed.
   */
  @Test
  void addedReport_ofABlockTheWorkerWasToldToRemove_listsNoCopyUntilItIsRemoved() {
    long block = BlockId.of(DONE_FILE, 0);
    BlockMaster m = new BlockMaster(clock, TIMEOUT, new FileLookup() {
      @Override
      public FileState stateOf(long fileId) {
        return files.getOrDefault(fileId, FileState.MISSING);
      }

      @Override
      public long cacheableLength(long blockId) {
        return blockId == block ? 10 : -1;
      }
    });
    long a = m.register(A, CAPACITY, 0, List.of(), clock.millis());
    m.heartbeat(a, CAPACITY, 0, List.of(new BlockReport(block, 10, "MEM")), List.of());
    assertThat(m.getBlock(block).locations()).hasSize(1);

    assertThat(m.removeFileBlocks(DONE_FILE, 0)).isEqualTo(1); // freed
    HeartbeatResult r = m.heartbeat(a, CAPACITY, 0, List.of(new BlockReport(block, 10, "MEM")), List.of());
    assertThat(m.hasBlock(block)).as("no copy listed: it is being removed").isFalse();
    assertThat(r.removeBlockIds()).containsExactly(block);

    m.heartbeat(a, CAPACITY, 0, List.of(), List.of(block));
    HeartbeatResult again = m.heartbeat(a, CAPACITY, 0, List.of(new BlockReport(block, 10, "MEM")), List.of());
    assertThat(again.removeBlockIds()).isEmpty();
    assertThat(m.getBlock(block).locations()).extracting(l -> l.worker().id()).containsExactly(a);
  }

  @Test
  void heartbeat_fromAnUnknownWorker_asksItToRegister() {
    HeartbeatResult r = beat(123456789L);
    assertThat(r.reregister()).isTrue();
    assertThat(r.removeBlockIds()).isEmpty();
  }

  @Test
  void heartbeat_fromALiveWorker_updatesItsStateAndDoesNotAskToRegister() {
    long a = register(A);
    clock.advanceMillis(500);

    HeartbeatResult r = bm.heartbeat(a, 2000, 700, List.of(), List.of());

    assertThat(r.reregister()).isFalse();
    WorkerState w = bm.liveWorkers().get(0);
    assertThat(w.capacityBytes()).isEqualTo(2000);
    assertThat(w.usedBytes()).isEqualTo(700);
    assertThat(w.lastHeartbeatMs()).isEqualTo(1_000_500);
  }

  // ---- lost workers ----

  @Test
  void detectLostWorkers_atExactlyTheTimeout_keepsTheWorker_andOneMillisecondLater_losesIt() {
    long a = register(A);

    clock.advance(TIMEOUT);
    assertThat(bm.detectLostWorkers()).isEmpty();
    assertThat(bm.liveWorkers()).extracting(WorkerState::id).containsExactly(a);

    clock.advanceMillis(1);
    assertThat(bm.detectLostWorkers()).extracting(WorkerState::id).containsExactly(a);
    assertThat(bm.liveWorkers()).isEmpty();
    assertThat(bm.lostWorkers()).extracting(WorkerState::id).containsExactly(a);
    assertThat(bm.detectLostWorkers()).as("reported lost once").isEmpty();
  }

  @Test
  void heartbeat_restartsTheTimeout() {
    long a = register(A);
    long b = register(B);
    clock.advance(TIMEOUT.minusSeconds(2));
    beat(a);
    clock.advance(Duration.ofSeconds(3));

    assertThat(bm.detectLostWorkers()).extracting(WorkerState::id).containsExactly(b);
    assertThat(bm.liveWorkers()).extracting(WorkerState::id).containsExactly(a);
  }

  @Test
  void lostWorker_losesItsLocations_butTheBlockStaysKnown() throws Exception {
    long a = register(A);
    long b = register(B);
    long block = BlockId.of(OPEN_FILE, 0);
    bm.commitBlock(a, block, 64, "MEM");
    bm.commitBlock(b, block, 64, "SSD");

    clock.advance(TIMEOUT.minusSeconds(1));
    beat(b);
    clock.advance(Duration.ofSeconds(2));
    bm.detectLostWorkers();

    assertThat(bm.hasBlock(block)).isTrue();
    assertThat(bm.blockLength(block)).isEqualTo(64);
    assertThat(locationsOf(block)).containsExactly(b);
    assertThat(beat(a).reregister()).as("a lost worker must register again").isTrue();
    assertThatThrownBy(() -> bm.commitBlock(a, BlockId.of(OPEN_FILE, 1), 1, "MEM"))
        .isInstanceOf(NotFoundException.class);
  }

  @Test
  void reRegistration_withABlockReport_restoresTheLocations() throws Exception {
    long a = register(A);
    long block = BlockId.of(OPEN_FILE, 0);
    bm.commitBlock(a, block, 64, "MEM");
    clock.advance(TIMEOUT.plusMillis(1));
    bm.detectLostWorkers();
    assertThat(locationsOf(block)).isEmpty();

    long back = register(A, new BlockReport(block, 64, "SSD"));

    assertThat(bm.getBlock(block).locations()).singleElement().satisfies(l -> {
      assertThat(l.worker().id()).isEqualTo(back);
      assertThat(l.tier()).isEqualTo("SSD");
    });
    assertThat(bm.lostWorkers()).as("the new registration supersedes the lost one").isEmpty();
    assertThat(bm.liveWorkers()).singleElement().extracting(WorkerState::blockCount).isEqualTo(1L);
    assertThat(beat(back).removeBlockIds()).isEmpty();
  }

  // ---- block reports ----

  @Test
  void blockReport_ofABlockWhoseFileIsMissing_isScheduledForRemoval() {
    long block = BlockId.of(GONE_FILE, 0);
    long a = register(A, new BlockReport(block, 10, "MEM"));

    assertThat(bm.hasBlock(block)).isFalse();
    assertThat(bm.liveWorkers().get(0).blockCount()).isZero();
    assertThat(beat(a).removeBlockIds()).containsExactly(block);
  }

  @Test
  void blockReport_ofAnUnknownBlockOfACompleteFile_isScheduledForRemoval() {
    long block = BlockId.of(DONE_FILE, 3);
    long a = register(A, new BlockReport(block, 10, "MEM"));

    assertThat(bm.hasBlock(block)).isFalse();
    assertThat(beat(a).removeBlockIds()).containsExactly(block);
  }

  @Test
  void blockReport_ofAnUnknownBlockOfAnIncompleteFile_isAccepted() {
    long block = BlockId.of(OPEN_FILE, 0);
    long a = register(A, new BlockReport(block, 10, "MEM"));

    assertThat(bm.blockLength(block)).isEqualTo(10);
    assertThat(locationsOf(block)).containsExactly(a);
    assertThat(beat(a).removeBlockIds()).isEmpty();
  }

  @Test
  void blockReport_withAConflictingLength_isScheduledForRemoval_andTheKnownCopyStays() throws Exception {
    long a = register(A);
    long block = BlockId.of(DONE_FILE, 0);
    bm.commitBlock(a, block, 100, "MEM");

    long b = register(B, new BlockReport(block, 50, "MEM"));

    assertThat(bm.blockLength(block)).isEqualTo(100);
    assertThat(locationsOf(block)).containsExactly(a);
    assertThat(beat(b).removeBlockIds()).containsExactly(block);
    assertThat(beat(a).removeBlockIds()).isEmpty();
  }

  @Test
  void heartbeat_addedBlocks_followTheSameRulesAsARegistrationReport() {
    long a = register(A);
    long good = BlockId.of(OPEN_FILE, 0);
    long orphan = BlockId.of(GONE_FILE, 0);

    HeartbeatResult r = bm.heartbeat(a, CAPACITY, 0,
        List.of(new BlockReport(good, 8, "MEM"), new BlockReport(orphan, 8, "MEM")), List.of());

    assertThat(r.removeBlockIds()).containsExactly(orphan);
    assertThat(locationsOf(good)).containsExactly(a);
    assertThat(bm.hasBlock(orphan)).isFalse();
  }

  @Test
  void removalCommands_repeatUntilTheWorkerReportsTheBlockRemoved() {
    long block = BlockId.of(GONE_FILE, 0);
    long a = register(A, new BlockReport(block, 10, "MEM"));

    assertThat(beat(a).removeBlockIds()).containsExactly(block);
    assertThat(beat(a).removeBlockIds()).as("still pending").containsExactly(block);

    HeartbeatResult confirmed = bm.heartbeat(a, CAPACITY, 0, List.of(), List.of(block));
    assertThat(confirmed.removeBlockIds()).isEmpty();
    assertThat(beat(a).removeBlockIds()).isEmpty();
  }

  @Test
  void heartbeat_removedBlocks_dropTheWorkersLocation() throws Exception {
    long a = register(A);
    long block = BlockId.of(OPEN_FILE, 0);
    bm.commitBlock(a, block, 10, "MEM");

    bm.heartbeat(a, CAPACITY, 0, List.of(), List.of(block));

    assertThat(locationsOf(block)).isEmpty();
    assertThat(bm.hasBlock(block)).isTrue();
    assertThat(bm.liveWorkers().get(0).blockCount()).isZero();
  }

  // ---- commitBlock ----

  @Test
  void commitBlock_fromAnUnregisteredWorker_isNotFound() {
    long block = BlockId.of(OPEN_FILE, 0);
    assertThatThrownBy(() -> bm.commitBlock(99, block, 10, "MEM")).isInstanceOf(NotFoundException.class);
    assertThat(bm.hasBlock(block)).isFalse();
  }

  @Test
  void commitBlock_withADifferentLengthThanTheKnownBlock_isRefused() throws Exception {
    long a = register(A);
    long b = register(B);
    long block = BlockId.of(OPEN_FILE, 0);
    bm.commitBlock(a, block, 10, "MEM");

    assertThatThrownBy(() -> bm.commitBlock(b, block, 11, "MEM"))
        .isInstanceOf(FailedPreconditionException.class);
    assertThat(bm.blockLength(block)).isEqualTo(10);
    assertThat(locationsOf(block)).containsExactly(a);
  }

  @Test
  void commitBlock_withNegativeLength_isRefused() {
    long a = register(A);
    long block = BlockId.of(OPEN_FILE, 0);
    assertThatThrownBy(() -> bm.commitBlock(a, block, -1, "MEM")).isInstanceOf(InvalidArgumentException.class);
    assertThat(bm.hasBlock(block)).isFalse();
  }

  @Test
  void commitBlock_ofABlockPendingRemoval_cancelsTheRemoval() throws Exception {
    long block = BlockId.of(GONE_FILE, 0);
    long a = register(A, new BlockReport(block, 10, "MEM"));
    assertThat(beat(a).removeBlockIds()).containsExactly(block);

    bm.commitBlock(a, block, 10, "MEM");

    assertThat(beat(a).removeBlockIds()).isEmpty();
    assertThat(locationsOf(block)).containsExactly(a);
  }

  @Test
  void announce_ofACopyDroppedAsCorrupt_isRefused_andItsRemovalStands_whileANewCopyIsListed() throws Exception {
    long a = register(A);
    long b = register(B);
    long block = BlockId.of(OPEN_FILE, 0);
    bm.commitBlock(a, block, 10, "MEM");
    bm.commitBlock(b, block, 10, "MEM");
    assertThat(bm.dropCorruptCopy(block, A, false, 0, "test")).isTrue();

    // A read of a's old copy makes a say it again: refused, the copy stays unlisted and down for removal.
    assertThatThrownBy(() -> bm.commitBlock(a, block, 10, "MEM", true))
        .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("told that worker to remove");
    assertThat(locationsOf(block)).containsExactly(b);
    assertThat(beat(a).removeBlockIds()).containsExactly(block);

    // b still holds the good copy; a's copy, once a reports it removed, may be cached again and listed.
    bm.heartbeat(a, CAPACITY, 0, List.of(), List.of(block));
    bm.commitBlock(a, block, 10, "MEM", true);
    assertThat(locationsOf(block)).containsExactlyInAnyOrder(a, b);
    assertThat(beat(a).removeBlockIds()).isEmpty();
  }

  @Test
  void getBlock_andBlockLength_ofAnUnknownBlock_sayNotCommitted() {
    assertThat(bm.getBlock(BlockId.of(OPEN_FILE, 0))).isNull();
    assertThat(bm.blockLength(BlockId.of(OPEN_FILE, 0))).isEqualTo(-1);
  }

  // ---- removeFileBlocks ----

  @Test
  void removeFileBlocks_removesOnlyThatFilesBlocksFromTheIndexOn() throws Exception {
    long a = register(A);
    long prevLast = BlockId.of(OPEN_FILE - 1, BlockId.MAX_INDEX);
    long nextFirst = BlockId.of(OPEN_FILE + 1, 0);
    files.put(OPEN_FILE - 1, FileState.INCOMPLETE);
    files.put(OPEN_FILE + 1, FileState.INCOMPLETE);
    bm.commitBlock(a, prevLast, 1, "MEM");
    bm.commitBlock(a, nextFirst, 1, "MEM");
    for (int i = 0; i < 4; i++) {
      bm.commitBlock(a, BlockId.of(OPEN_FILE, i), 1, "MEM");
    }
    bm.commitBlock(a, BlockId.of(OPEN_FILE, BlockId.MAX_INDEX), 1, "MEM");

    int removed = bm.removeFileBlocks(OPEN_FILE, 2);

    assertThat(removed).isEqualTo(3);
    assertThat(bm.hasBlock(BlockId.of(OPEN_FILE, 0))).isTrue();
    assertThat(bm.hasBlock(BlockId.of(OPEN_FILE, 1))).isTrue();
    assertThat(bm.hasBlock(BlockId.of(OPEN_FILE, 2))).isFalse();
    assertThat(bm.hasBlock(BlockId.of(OPEN_FILE, 3))).isFalse();
    assertThat(bm.hasBlock(BlockId.of(OPEN_FILE, BlockId.MAX_INDEX))).isFalse();
    assertThat(bm.hasBlock(prevLast)).isTrue();
    assertThat(bm.hasBlock(nextFirst)).isTrue();
    assertThat(bm.blockCount()).isEqualTo(4);
    assertThat(beat(a).removeBlockIds()).containsExactlyInAnyOrder(
        BlockId.of(OPEN_FILE, 2), BlockId.of(OPEN_FILE, 3), BlockId.of(OPEN_FILE, BlockId.MAX_INDEX));
    assertThat(bm.liveWorkers().get(0).blockCount()).isEqualTo(4);
  }

  @Test
  void removeFileBlocks_fromZero_removesAllOfTheFile_fromEveryWorker() throws Exception {
    long a = register(A);
    long b = register(B);
    long b0 = BlockId.of(OPEN_FILE, 0);
    long b1 = BlockId.of(OPEN_FILE, 1);
    bm.commitBlock(a, b0, 1, "MEM");
    bm.commitBlock(b, b0, 1, "MEM");
    bm.commitBlock(b, b1, 1, "MEM");

    assertThat(bm.removeFileBlocks(OPEN_FILE, 0)).isEqualTo(2);

    assertThat(bm.blockCount()).isZero();
    assertThat(beat(a).removeBlockIds()).containsExactly(b0);
    assertThat(beat(b).removeBlockIds()).containsExactlyInAnyOrder(b0, b1);
  }

  @Test
  void removeFileBlocks_pastTheLastIndex_removesNothing() throws Exception {
    long a = register(A);
    long last = BlockId.of(OPEN_FILE, BlockId.MAX_INDEX);
    bm.commitBlock(a, last, 1, "MEM");

    assertThat(bm.removeFileBlocks(OPEN_FILE, BlockId.MAX_INDEX + 1)).isZero();
    assertThat(bm.hasBlock(last)).isTrue();
    assertThat(bm.removeFileBlocks(OPEN_FILE, BlockId.MAX_INDEX)).isEqualTo(1);
    assertThat(bm.hasBlock(last)).isFalse();
  }
}
