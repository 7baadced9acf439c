package io.strata.worker.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.ReplicaUnavailableException;
import io.strata.common.net.WorkerAddress;
import io.strata.common.shuffle.BatchHeader;
import io.strata.worker.store.Allocator;
import io.strata.worker.store.BlockAnnotator;
import io.strata.worker.store.StoreEvents;
import io.strata.worker.store.TierSpec;
import io.strata.worker.store.TieredBlockStore;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica's copy of a partition holds its primary's bytes whatever order the forwards arrive in: each batch
 * is forwarded with the offset its primary appended it at and the replica appends it there, holding one that
 * comes early until the ones before it are in. A gap that will not fill breaks the replica's copy; a failed
 * forward makes the primary refuse the partition's pushes. Real one-tier block stores in temp dirs (a primary's
 * and a replica's), the pipeline's apply pool run inline.
 */
class OrderedReplicaTest {
  private static final WorkerAddress REPLICA = new WorkerAddress("localhost", 40_001);
  @TempDir
  Path dir;
  private ShuffleStore primary;
  private ShuffleStore replica;

  @BeforeEach
  void open() throws Exception {
    primary = store(dir.resolve("primary"));
    replica = store(dir.resolve("replica"));
    // Blocks of 100 bytes: batches straddle blocks, as they do in real files.
    primary.open(List.of(new ShuffleStore.PartitionSpec("app", 1, 0, 11, 100, REPLICA)));
    replica.open(List.of(new ShuffleStore.PartitionSpec("app", 1, 0, 11, 100, null)));
  }

  private static ShuffleStore store(Path d) {
    return store(d, 1L << 30);
  }

  private static ShuffleStore store(Path d, long parkedMax) {
    TieredBlockStore blocks = new TieredBlockStore(List.of(new TierSpec("MEM", List.of(new TierSpec.Dir(d, 1 << 20)))),
        Allocator.create("MaxFree"), BlockAnnotator.create("LRU"), StoreEvents.NONE, Clock.systemUTC());
    return new ShuffleStore(blocks, null, null, 1 << 20, Runnable::run, 64 << 20, 256L << 20, parkedMax);
  }

  private static ShuffleStore.Batch batch(int map, int id, String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    return new ShuffleStore.Batch(0, 11, map, 1, id, b.length, BatchHeader.crc32c(b, 0, b.length), ByteBuffer.wrap(b));
  }

  /** Pushes batches to the primary one by one; returns them as forwarded (with their offsets there). */
  private List<ShuffleStore.Batch> appendOnPrimary(int n) throws Exception {
    List<ShuffleStore.Batch> forwarded = new ArrayList<>();
    PushPipeline p = new PushPipeline(primary, (r, a, s, b) -> {
      forwarded.addAll(b);
      return CompletableFuture.completedFuture(null);
    }, Runnable::run, 1 << 20, 10);
    for (int i = 0; i < n; i++) {
      assertThat(p.push("app", 1, List.of(batch(i % 3, i, "batch " + i + " " + "x".repeat(7 * i))), false).get()
          .applied()).isTrue();
    }
    return forwarded;
  }

  /** The replica's pipeline, applying inline (it forwards nothing: a replica's copies have no replica). */
  private PushPipeline onReplica() {
    return new PushPipeline(replica, (r, a, s, b) -> null, Runnable::run, 1 << 20, 10);
  }

  private PartitionFile copy(ShuffleStore s) throws Exception {
    return s.find("app", 1, 0, 11);
  }

  @Test
  void forwardsArrivingInAnyOrder_giveTheReplicaThePrimarysBytes() throws Exception {
    List<ShuffleStore.Batch> sent = appendOnPrimary(6);
    assertThat(sent).extracting(ShuffleStore.Batch::offset).isSorted().doesNotHaveDuplicates().startsWith(0L);
    PushPipeline onReplica = onReplica();
    // Last first, then the middle ones, then the first: every one waits until the first arrives.
    List<CompletableFuture<PushPipeline.Outcome>> answers = new ArrayList<>();
    for (int i : new int[] {5, 3, 4, 1, 2}) {
      answers.add(onReplica.push("app", 1, List.of(sent.get(i)), true));
    }
    assertThat(answers).noneMatch(CompletableFuture::isDone);
    assertThat(copy(replica).parkedBatches()).isEqualTo(5);
    assertThat(copy(replica).length()).isZero();
    assertThat(onReplica.push("app", 1, List.of(sent.get(0)), true).get().applied()).isTrue();
    for (CompletableFuture<PushPipeline.Outcome> a : answers) {
      assertThat(a.get().applied()).isTrue();
    }
    assertThat(copy(replica).parkedBatches()).isZero();
    assertThat(copy(replica).current()).isEqualTo(copy(primary).current());
    assertThat(copy(replica).batches()).isEqualTo(6);
    assertThat(onReplica.appliedBatches()).isEqualTo(6);
  }

  @Test
  void aSecondBatchForATakenPlace_breaksTheReplicasCopy_andLetsGoOfWaitingOnes() throws Exception {
    List<ShuffleStore.Batch> sent = appendOnPrimary(3);
    PushPipeline onReplica = onReplica();
    assertThat(onReplica.push("app", 1, List.of(sent.get(0)), true).get().applied()).isTrue();
    CompletableFuture<PushPipeline.Outcome> waiting = onReplica.push("app", 1, List.of(sent.get(2)), true);
    assertThat(waiting).isNotDone();
    CompletableFuture<PushPipeline.Outcome> again = onReplica.push("app", 1, List.of(sent.get(0)), true);
    assertThatThrownBy(again::get).cause().isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("already holds bytes at offset 0");
    assertThatThrownBy(waiting::get).isInstanceOf(ExecutionException.class);
    assertThat(copy(replica).parkedBatches()).isZero();
    // Broken: the batch that would have filled the gap is refused too, and the buffered bytes are let go.
    assertThatThrownBy(() -> onReplica.push("app", 1, List.of(sent.get(1)), true).get()).cause()
        .hasMessageContaining("is broken");
    assertThat(onReplica.bufferedBytes()).isZero();
  }

  @Test
  void aForwardGivenUpWhileItWaits_freezesTheReplicasCopy_whichStaysFitToSeal() throws Exception {
    List<ShuffleStore.Batch> sent = appendOnPrimary(3);
    PushPipeline onReplica = onReplica();
    CompletableFuture<PushPipeline.Outcome> waiting = onReplica.push("app", 1, List.of(sent.get(2)), true);
    assertThat(copy(replica).parkedBatches()).isEqualTo(1);
    waiting.cancel(false); // what the service does when the primary's call is cancelled
    assertThat(copy(replica).parkedBatches()).isZero();
    assertThat(onReplica.bufferedBytes()).isZero();
    assertThatThrownBy(() -> onReplica.push("app", 1, List.of(sent.get(0)), true).get()).cause()
        .hasMessageContaining("has a gap at offset 0");
    // Frozen, not broken: a prefix of the primary's copy can still be sealed in the primary's place.
    assertThat(copy(replica).broken()).isFalse();
  }

  @Test
  void aForwardCancelledWhileQueued_freezesTheCopy_soTheOnesBehindItDoNotWait() throws Exception {
    List<ShuffleStore.Batch> sent = appendOnPrimary(2);
    java.util.ArrayDeque<Runnable> queued = new java.util.ArrayDeque<>();
    PushPipeline onReplica = new PushPipeline(replica, (r, a, s, b) -> null, queued::add, 1 << 20, 10);
    CompletableFuture<PushPipeline.Outcome> first = onReplica.push("app", 1, List.of(sent.get(0)), true);
    first.cancel(false); // given up by its primary before an apply thread took it
    CompletableFuture<PushPipeline.Outcome> second = onReplica.push("app", 1, List.of(sent.get(1)), true);
    while (!queued.isEmpty()) {
      queued.poll().run();
    }
    assertThat(copy(replica).length()).isZero();
    assertThat(copy(replica).parkedBatches()).isZero();
    assertThat(second).isCompletedExceptionally();
    assertThatThrownBy(second::get).cause().hasMessageContaining("has a gap at offset 0");
  }

  @Test
  void aForwardedBatchInsideTheOneBeforeIt_breaksTheCopy() throws Exception {
    List<ShuffleStore.Batch> sent = appendOnPrimary(2);
    PushPipeline onReplica = onReplica();
    ShuffleStore.Batch inside = batch(0, 7, "not the primary's").at(5);
    CompletableFuture<PushPipeline.Outcome> bogus = onReplica.push("app", 1, List.of(inside), true);
    assertThat(bogus).isNotDone();
    assertThatThrownBy(() -> onReplica.push("app", 1, List.of(sent.get(0)), true).get()).cause()
        .hasMessageContaining("inside the batch before it");
    assertThatThrownBy(bogus::get).isInstanceOf(ExecutionException.class);
    assertThat(copy(replica).broken()).isTrue();
    assertThat(onReplica.bufferedBytes()).isZero();
  }

  @Test
  void anAppendFailingPartWay_leavesNoGapOnAPartitionWithoutReplica() throws Exception {
    primary.open(List.of(new ShuffleStore.PartitionSpec("app", 1, 1, 12, 100, null)));
    PushPipeline p = new PushPipeline(primary, (r, a, s, b) -> CompletableFuture.completedFuture(null), Runnable::run,
        1 << 20, 10);
    copy(primary).drop(false); // partition 0 takes no more batches, though it is still open here
    byte[] one = "alone".getBytes(StandardCharsets.UTF_8);
    ShuffleStore.Batch lone = new ShuffleStore.Batch(1, 12, 0, 1, 0, one.length, BatchHeader.crc32c(one, 0, one.length),
        ByteBuffer.wrap(one));
    assertThatThrownBy(() -> p.push("app", 1, List.of(lone, batch(0, 1, "late")), false).get()).cause()
        .hasMessageContaining("is sealed");
    assertThat(primary.find("app", 1, 1, 12).replicaGap()).isNull();
    assertThat(p.push("app", 1, List.of(lone), false).get().applied()).isTrue();
    assertThat(primary.appendedBytes(12)).isEqualTo(2L * (BatchHeader.BYTES + one.length));
  }

  @Test
  void theSeal_letsGoOfBatchesStillWaiting_andTheCopyIsTheShorterPrefix() throws Exception {
    List<ShuffleStore.Batch> sent = appendOnPrimary(3);
    PushPipeline onReplica = onReplica();
    assertThat(onReplica.push("app", 1, List.of(sent.get(0)), true).get().applied()).isTrue();
    CompletableFuture<PushPipeline.Outcome> waiting = onReplica.push("app", 1, List.of(sent.get(2)), true);
    PartitionFile.Seal expect = copy(primary).current();
    // The replica differs from its primary (it misses batch 1): its seal drops it, committing nothing.
    List<ShuffleStore.Sealed> out = replica.seal("app", 1, List.of(11L), false, List.of(expect.length()),
        List.of(expect.crc32c()));
    assertThat(out.get(0).error()).contains("differs from its primary's copy");
    assertThat(out.get(0).dropped()).isTrue();
    assertThatThrownBy(waiting::get).cause().hasMessageContaining("was sealed before the batches before this one");
    assertThat(onReplica.bufferedBytes()).isZero();
  }

  @Test
  void aFailedForward_makesThePrimaryRefuseThePartition_withNothingApplied_namingTheReplica() throws Exception {
    List<ShuffleStore.Batch> forwarded = new ArrayList<>();
    boolean[] fail = {true};
    PushPipeline p = new PushPipeline(primary, (r, a, s, b) -> {
      forwarded.addAll(b);
      return fail[0] ? CompletableFuture.failedFuture(new java.io.IOException("connection reset"))
          : CompletableFuture.completedFuture(null);
    }, Runnable::run, 1 << 20, 10);
    assertThatThrownBy(() -> p.push("app", 1, List.of(batch(0, 0, "one")), false).get()).cause()
        .isInstanceOf(ReplicaUnavailableException.class).hasMessageContaining("connection reset");
    long before = copy(primary).length();
    assertThat(before).isPositive(); // applied here before the forward failed
    fail[0] = false;
    assertThatThrownBy(() -> p.push("app", 1, List.of(batch(0, 1, "two")), false).get()).cause()
        .isInstanceOf(ReplicaUnavailableException.class).hasMessageContaining("has a gap")
        .satisfies(e -> assertThat(((ReplicaUnavailableException) e).replica()).isEqualTo("localhost:40001"));
    assertThat(copy(primary).length()).isEqualTo(before);
    assertThat(forwarded).hasSize(1);
  }

  @Test
  void forwards_areCountedApartFromTheClientsWatermark() throws Exception {
    List<ShuffleStore.Batch> sent = appendOnPrimary(3);
    // A watermark of 1 byte for clients' pushes: a replica holding a waiting forward still takes the one that fills
    // the gap (forwards count against a bound of their own, here 1 MiB).
    PushPipeline onReplica = new PushPipeline(replica, (r, a, s, b) -> null, Runnable::run, 1, 1 << 20, 10);
    CompletableFuture<PushPipeline.Outcome> waiting = onReplica.push("app", 1, List.of(sent.get(1)), true);
    assertThat(waiting).as("parked, waiting for the batch before it").isNotDone();
    // Parked, it counts against the parking budget, no longer against the forwards' bound: parked forwards filling
    // that bound would refuse the very forwards they wait for.
    assertThat(onReplica.bufferedBytes()).isZero();
    assertThat(onReplica.push("app", 1, List.of(sent.get(0)), true).get().applied()).isTrue();
    assertThat(waiting.get().applied()).isTrue();
  }

  @Test
  void batchesWaitingOnAReplica_areBoundedOverAllItsCopies_andAForwardPastTheBoundFreezesOnlyItsCopy()
      throws Exception {
    List<ShuffleStore.Batch> sent = appendOnPrimary(3);
    // A parked batch counts its data and a fixed overhead for what holds it on the heap.
    long oneWaits = PartitionFile.PARKED_OVERHEAD + sent.get(2).data().remaining();
    // Room for that one batch waiting, over the whole worker: each copy's own bound is far larger.
    ShuffleStore small = store(dir.resolve("small"), oneWaits);
    small.open(List.of(new ShuffleStore.PartitionSpec("app", 1, 0, 11, 100, null),
        new ShuffleStore.PartitionSpec("app", 1, 1, 12, 100, null)));
    PushPipeline onSmall = new PushPipeline(small, (r, a, s, b) -> null, Runnable::run, 1 << 20, 10);
    CompletableFuture<PushPipeline.Outcome> waiting = onSmall.push("app", 1, List.of(sent.get(2)), true);
    assertThat(waiting).isNotDone();
    assertThat(small.parkedBytes()).isEqualTo(oneWaits);
    byte[] b = "of partition one".getBytes(StandardCharsets.UTF_8);
    ShuffleStore.Batch other = new ShuffleStore.Batch(1, 12, 0, 1, 0, b.length, BatchHeader.crc32c(b, 0, b.length),
        ByteBuffer.wrap(b), 40);
    assertThatThrownBy(() -> onSmall.push("app", 1, List.of(other), true).get()).cause()
        .isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("strata.worker.shuffle.replica.parked.max");
    PartitionFile otherCopy = small.find("app", 1, 1, 12);
    assertThat(otherCopy.parkedBatches()).isZero();
    assertThat(otherCopy.broken()).isFalse(); // frozen: its (empty) prefix can still be sealed
    // The copy whose batch waits is untouched: the batches before it arrive and all are appended, the room given back.
    assertThat(onSmall.push("app", 1, List.of(sent.get(0)), true).get().applied()).isTrue();
    assertThat(onSmall.push("app", 1, List.of(sent.get(1)), true).get().applied()).isTrue();
    assertThat(waiting.get().applied()).isTrue();
    assertThat(small.parkedBytes()).isZero();
    assertThat(small.find("app", 1, 0, 11).current()).isEqualTo(copy(primary).current());
    assertThat(onSmall.bufferedBytes()).isZero();
  }

  @Test
  void anOffset_onAPushFromAClient_isRefused() throws Exception {
    List<ShuffleStore.Batch> sent = appendOnPrimary(1);
    PushPipeline p = onReplica();
    assertThatThrownBy(() -> p.push("app", 1, List.of(sent.get(0)), false).get()).cause()
        .hasMessageContaining("names an offset");
    assertThat(copy(replica).length()).isZero();
  }
}
