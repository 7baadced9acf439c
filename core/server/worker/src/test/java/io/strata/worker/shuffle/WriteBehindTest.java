package io.strata.worker.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.shuffle.BatchHeader;
import io.strata.worker.store.Allocator;
import io.strata.worker.store.BlockAnnotator;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.StoreEvents;
import io.strata.worker.store.TierSpec;
import io.strata.worker.store.TieredBlockStore;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A partition file's write-behind buffer ({@code strata.worker.shuffle.append.buffer.max}): small acknowledged
 * batches wait in it, their room in the block reserved first, and reach the block in one write, in order, when
 * it fills or a batch comes that it does not take; the worker-wide budget bounds the buffers, and a drop gives the
 * heap back. Real one-tier block stores in temp dirs; what the block files hold is read back from disk.
 */
class WriteBehindTest {
  @TempDir
  Path dir;

  private BlockStore blocks(long quota) {
    return new TieredBlockStore(List.of(new TierSpec("MEM", List.of(new TierSpec.Dir(dir.resolve("t"), quota)))),
        Allocator.create("MaxFree"), BlockAnnotator.create("LRU"), StoreEvents.NONE, Clock.systemUTC());
  }

  private static ShuffleStore store(BlockStore blocks, long budget, long... fileIds) throws Exception {
    return storeOfBlocks(blocks, budget, 1 << 20, fileIds);
  }

  private static ShuffleStore storeOfBlocks(BlockStore blocks, long budget, long blockSize, long... fileIds)
      throws Exception {
    ShuffleStore s = new ShuffleStore(blocks, null, null, 1 << 20, Runnable::run, budget, 256L << 20, 1L << 30);
    for (long id : fileIds) {
      s.open(List.of(new ShuffleStore.PartitionSpec("app", 1, (int) id, id, blockSize, null)));
    }
    return s;
  }

  private static ShuffleStore.Batch batch(long fileId, int id, int size) {
    byte[] b = ("batch " + id + " ").repeat(size / 8 + 1).substring(0, size).getBytes(StandardCharsets.UTF_8);
    return new ShuffleStore.Batch((int) fileId, fileId, 0, 1, id, b.length, BatchHeader.crc32c(b, 0, b.length),
        ByteBuffer.wrap(b));
  }

  private static void push(ShuffleStore s, ShuffleStore.Batch b) throws Exception {
    PushPipeline p = new PushPipeline(s, (r, a, sh, x) -> null, Runnable::run, 1 << 30, 10);
    assertThat(p.push("app", 1, List.of(b), false).get().applied()).isTrue();
  }

  /** The bytes a copy of these batches holds: each header, then its data. */
  private static byte[] expected(List<ShuffleStore.Batch> batches) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (ShuffleStore.Batch b : batches) {
      ByteBuffer h = new BatchHeader(b.mapIndex(), b.attemptId(), b.batchId(), b.length(), b.crc32c()).toBuffer();
      out.write(h.array(), h.arrayOffset() + h.position(), h.remaining());
      out.write(b.data().array(), b.data().arrayOffset(), b.length());
    }
    return out.toByteArray();
  }

  private byte[] onDisk(long fileId) throws Exception {
    try (var files = Files.walk(dir)) {
      // A temp block's file is tmp/<block id>-<sequence number>.
      String name = io.strata.common.id.BlockId.of(fileId, 0) + "-";
      Path p = files.filter(f -> f.getFileName().toString().startsWith(name)).findFirst().orElseThrow();
      return Files.readAllBytes(p);
    }
  }

  @Test
  void smallBatches_waitInTheBuffer_thenReachTheBlockInOrder_beforeABatchItDoesNotTake() throws Exception {
    ShuffleStore s = store(blocks(8 << 20), 1 << 20, 5);
    List<ShuffleStore.Batch> sent = new java.util.ArrayList<>();
    for (int i = 0; i < 20; i++) {
      sent.add(batch(5, i, 100 + i));
      push(s, sent.get(i));
    }
    PartitionFile f = s.find("app", 1, 5, 5);
    assertThat(f.length()).isEqualTo(expected(sent).length);
    assertThat(f.writtenBytes()).as("held back, acknowledged").isZero();
    assertThat(s.appendBufferBytes()).isPositive();
    // A batch bigger than the buffer goes straight to the block, after what waits.
    sent.add(batch(5, 20, 70_000));
    push(s, sent.get(20));
    assertThat(f.writtenBytes()).isEqualTo(f.length());
    assertThat(onDisk(5)).isEqualTo(expected(sent));
    // The buffer fills: what it held is written in one go, the new batch waits.
    for (int i = 21; i < 121; i++) {
      sent.add(batch(5, i, 1000));
      push(s, sent.get(i));
    }
    assertThat(f.writtenBytes()).isLessThan(f.length()).isGreaterThan(expected(sent.subList(0, 21)).length);
    s.drop("app", 1, List.of(), false);
    assertThat(s.appendBufferBytes()).as("given back at the drop").isZero();
  }

  @Test
  void theBudget_boundsEveryBuffer_andWithNoneLeftBatchesAreWrittenAsTheyCome() throws Exception {
    ShuffleStore s = store(blocks(8 << 20), 8192, 5, 6, 7);
    List<ShuffleStore.Batch> five = List.of(batch(5, 0, 3000), batch(5, 1, 3000));
    for (ShuffleStore.Batch b : five) {
      push(s, b);
    }
    push(s, batch(6, 0, 100));
    // File 5 took 8 KiB of buffer (two doublings from 4 KiB): nothing is left for file 6.
    assertThat(s.appendBufferBytes()).isEqualTo(8192);
    assertThat(s.find("app", 1, 5, 5).writtenBytes()).isZero();
    PartitionFile six = s.find("app", 1, 6, 6);
    assertThat(six.writtenBytes()).isEqualTo(six.length()).isPositive();
    assertThat(onDisk(6)).isEqualTo(expected(List.of(batch(6, 0, 100))));
    s.drop("app", 1, List.of(5L), false);
    assertThat(s.appendBufferBytes()).isZero();
    push(s, batch(7, 0, 100));
    assertThat(s.find("app", 1, 7, 7).writtenBytes()).as("the budget came back").isZero();
  }

  @Test
  void aSmallBatchAfterOneWrittenThrough_reservesAStepAhead_notTheBigOnesSizeAgain() throws Exception {
    BlockStore blocks = blocks(64 << 20);
    ShuffleStore s = storeOfBlocks(blocks, 1 << 20, 32 << 20, 5);
    push(s, batch(5, 0, 100));
    long afterFirst = blocks.usedBytes();
    assertThat(afterFirst).as("one step reserved for the buffer").isEqualTo(64 << 10);
    for (int i = 1; i <= 4; i++) {
      push(s, batch(5, i, 1 << 20)); // written through (bigger than the buffer), after the first
    }
    push(s, batch(5, 5, 100));
    PartitionFile f = s.find("app", 1, 5, 5);
    assertThat(f.writtenBytes()).isEqualTo(f.length() - expected(List.of(batch(5, 5, 100))).length);
    // What is reserved: the bytes written, and one step ahead for the buffer (not another 4 MiB).
    assertThat(blocks.usedBytes()).isBetween(f.writtenBytes(), f.writtenBytes() + (64 << 10) + 4096);
  }

  @Test
  void noBudget_writesEveryBatchAtOnce() throws Exception {
    ShuffleStore s = store(blocks(8 << 20), 0, 5);
    List<ShuffleStore.Batch> sent = List.of(batch(5, 0, 10), batch(5, 1, 20), batch(5, 2, 30));
    for (ShuffleStore.Batch b : sent) {
      push(s, b);
      assertThat(s.find("app", 1, 5, 5).writtenBytes()).isEqualTo(s.find("app", 1, 5, 5).length());
    }
    assertThat(onDisk(5)).isEqualTo(expected(sent));
    assertThat(s.appendBufferBytes()).isZero();
  }

  @Test
  void aBatchIsOnlyHeldBack_withItsRoomReserved_soWithNoRoomItFailsAtOnce() throws Exception {
    // A dir of 64 KiB and blocks of 64 KiB: the first batch reserves the whole block's room (one step); once the
    // batches fill it, the next cannot be reserved anywhere and is refused at its push, not lost after its
    // acknowledgement.
    ShuffleStore s = storeOfBlocks(blocks(64 << 10), 1 << 20, 64 << 10, 5);
    push(s, batch(5, 0, 1000));
    PartitionFile f = s.find("app", 1, 5, 5);
    assertThat(f.writtenBytes()).isZero();
    PushPipeline p = new PushPipeline(s, (r, a, sh, x) -> null, Runnable::run, 1 << 30, 10);
    int refused = 0;
    long acknowledged = f.length();
    for (int i = 1; i < 100 && refused == 0; i++) {
      var outcome = p.push("app", 1, List.of(batch(5, i, 1000)), false);
      try {
        if (outcome.get().applied()) {
          acknowledged = f.length();
        }
      } catch (java.util.concurrent.ExecutionException e) {
        refused++;
      }
    }
    assertThat(refused).as("a push past the dir's room fails").isEqualTo(1);
    assertThat(acknowledged).isLessThanOrEqualTo(64 << 10);
    assertThatThrownBy(() -> push(s, batch(5, 200, 10))).hasMessageContaining("broken");
  }
}
