package io.strata.master.block;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.master.MutableClock;
import io.strata.master.block.FileLookup.FileState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The block master's bounds (issue 9, point 6): heartbeat replies carry removals in bounded batches that
 * move on even when the worker cannot remove some blocks yet, and lost workers are forgotten after the
 * forget time.
 */
class BlockMasterBoundsTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final WorkerAddress A = new WorkerAddress("host-a", 29999);
  private static final long DONE_FILE = 6;

  private final MutableClock clock = new MutableClock(1_000_000);
  private final BlockMaster bm = new BlockMaster(clock, TIMEOUT, id -> id == DONE_FILE ? FileState.COMPLETE
      : FileState.MISSING);

  @Test
  void removalsBeyondTheBatch_arriveInBoundedBatches_untilAllAreRemoved() throws Exception {
    bm.limits(5, Duration.ofHours(1));
    long w = bm.register(A, 1 << 30, 0, List.of(), 0);
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      long id = BlockId.of(DONE_FILE, i);
      bm.commitBlock(w, id, 10, "MEM");
      ids.add(id);
    }
    assertThat(bm.removeFileBlocks(DONE_FILE, 0)).isEqualTo(12);
    Set<Long> removed = new HashSet<>();
    List<Long> report = List.of();
    int beats = 0;
    while (removed.size() < 12) {
      List<Long> batch = bm.heartbeat(w, 1 << 30, 0, List.of(), report).removeBlockIds();
      assertThat(batch).hasSizeLessThanOrEqualTo(5).doesNotHaveDuplicates().isNotEmpty();
      assertThat(ids).containsAll(batch);
      removed.addAll(batch);
      report = batch; // the worker removes what it was told and reports it next time
      assertThat(++beats).as("beats").isLessThanOrEqualTo(3);
    }
    assertThat(bm.heartbeat(w, 1 << 30, 0, List.of(), report).removeBlockIds()).isEmpty();
  }

  @Test
  void aBatchTheWorkerCannotRemoveYet_doesNotHoldBackTheRest() throws Exception {
    bm.limits(4, Duration.ofHours(1));
    long w = bm.register(A, 1 << 30, 0, List.of(), 0);
    for (int i = 0; i < 10; i++) {
      bm.commitBlock(w, BlockId.of(DONE_FILE, i), 10, "MEM");
    }
    bm.removeFileBlocks(DONE_FILE, 0);
    Set<Long> seen = new HashSet<>();
    for (int beat = 0; beat < 3; beat++) {
      List<Long> batch = bm.heartbeat(w, 1 << 30, 0, List.of(), List.of()).removeBlockIds(); // nothing removed
      assertThat(batch).hasSize(4);
      seen.addAll(batch);
    }
    assertThat(seen).hasSize(10); // every removal was sent within three replies
  }

  @Test
  void lostWorker_isForgottenAfterTheForgetTime() {
    bm.limits(100, Duration.ofMinutes(5));
    long w = bm.register(A, 1 << 30, 0, List.of(), 0);
    clock.advanceMillis(TIMEOUT.toMillis() + 1);
    assertThat(bm.detectLostWorkers()).extracting(WorkerState::id).containsExactly(w);
    assertThat(bm.lostWorkers()).extracting(WorkerState::id).containsExactly(w);
    clock.advanceMillis(Duration.ofMinutes(5).toMillis() - 1);
    bm.detectLostWorkers();
    assertThat(bm.lostWorkers()).as("lost for exactly the forget time").hasSize(1);
    clock.advanceMillis(2);
    bm.detectLostWorkers();
    assertThat(bm.lostWorkers()).isEmpty();
    // it may come back as any worker does
    long again = bm.register(A, 1 << 30, 0, List.of(), 0);
    assertThat(bm.liveWorkers()).extracting(WorkerState::id).containsExactly(again);
  }
}
