package io.strata.worker.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.worker.store.BlockStore.BlockMeta;
import io.strata.worker.store.BlockStore.TempBlock;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SingleDirStoreTest {
  private static final String TIER = "SSD";
  private static final long QUOTA = 1 << 20;

  @TempDir
  Path dir;

  private TieredBlockStore store;
  private final List<FileChannel> opened = new ArrayList<>();

  @BeforeEach
  void setUp() throws IOException {
    store = single(dir, TIER, QUOTA);
  }

  @AfterEach
  void closeChannels() throws IOException {
    for (FileChannel ch : opened) {
      ch.close();
    }
  }

  /** Deterministic, block-specific bytes, so a block read back with another's content is caught. */
  private static byte[] content(long blockId, int length) {
    byte[] b = new byte[length];
    for (int i = 0; i < length; i++) {
      b[i] = (byte) (blockId * 31 + i * 7 + (i >> 8));
    }
    return b;
  }

  private byte[] read(TieredBlockStore s, long blockId) throws IOException {
    try (BlockStore.ReadHandle h = s.openForRead(blockId, false)) {
      return readAll(h.channel());
    }
  }

  private static byte[] readAll(FileChannel ch) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteBuffer buf = ByteBuffer.allocate(4096);
    while (ch.read(buf) >= 0) {
      buf.flip();
      out.write(buf.array(), 0, buf.limit());
      buf.clear();
    }
    return out.toByteArray();
  }

  /** Writes {@code data} in chunks of at most {@code chunk} bytes and commits. */
  private static BlockMeta write(BlockStore s, long blockId, byte[] data, int chunk) throws IOException {
    TempBlock t = s.createTemp(blockId, Math.max(1, data.length));
    for (int off = 0; off < data.length; off += chunk) {
      t.append(ByteBuffer.wrap(data, off, Math.min(chunk, data.length - off)));
    }
    return s.commit(t);
  }

  private List<Path> tmpFiles() throws IOException {
    try (Stream<Path> s = Files.list(dir.resolve("tmp"))) {
      return s.toList();
    }
  }

  // ---- write, commit, read ----

  /** A store of one tier with one dir: what this suite checks holds for every single dir. */
  static TieredBlockStore single(java.nio.file.Path path, String tier, long quota) {
    return new TieredBlockStore(java.util.List.of(new TierSpec(tier, java.util.List.of(new TierSpec.Dir(path, quota)))),
        new MaxFreeAllocator(), new LruAnnotator(), StoreEvents.NONE, java.time.Clock.systemUTC());
  }

  @Test
  void write_inSeveralAppends_thenCommit_readsBackTheSameBytes() throws IOException {
    byte[] data = content(7, 351);
    TempBlock t = store.createTemp(7, 1000);
    t.append(ByteBuffer.wrap(data, 0, 100));
    t.append(ByteBuffer.wrap(data, 100, 1));
    t.append(ByteBuffer.wrap(data, 101, 250));
    assertThat(t.length()).isEqualTo(351);
    assertThat(t.blockId()).isEqualTo(7);

    BlockMeta meta = store.commit(t);

    assertThat(meta).isEqualTo(new BlockMeta(7, 351, TIER));
    assertThat(store.get(7)).isEqualTo(meta);
    assertThat(read(store, 7)).isEqualTo(data);
    assertThat(store.committedBlocks()).containsExactly(meta);
    assertThat(store.usedBytes()).isEqualTo(351);
    assertThat(Files.size(dir.resolve("blocks").resolve("7"))).isEqualTo(351);
    assertThat(tmpFiles()).isEmpty();
  }

  @Test
  void append_ofADirectBuffer_writesItsRemainingBytesOnly() throws IOException {
    byte[] data = content(3, 64);
    ByteBuffer direct = ByteBuffer.allocateDirect(80);
    direct.put(new byte[16]).put(data).flip().position(16);

    TempBlock t = store.createTemp(3, 64);
    t.append(direct);
    store.commit(t);

    assertThat(direct.hasRemaining()).isFalse();
    assertThat(read(store, 3)).isEqualTo(data);
  }

  @Test
  void usedBytes_countTempBytesAsTheyAreAppended() throws IOException {
    TempBlock t = store.createTemp(1, 100);
    t.append(ByteBuffer.wrap(new byte[30]));
    assertThat(store.usedBytes()).isEqualTo(30);
    t.append(ByteBuffer.wrap(new byte[20]));
    assertThat(store.usedBytes()).isEqualTo(50);

    store.commit(t);
    assertThat(store.usedBytes()).as("commit neither adds nor releases").isEqualTo(50);
  }

  @Test
  void tempBlock_isNotVisibleBeforeCommit() throws IOException {
    TempBlock t = store.createTemp(9, 10);
    t.append(ByteBuffer.wrap(new byte[5]));

    assertThatThrownBy(() -> store.get(9)).isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> store.openForRead(9, false)).isInstanceOf(NotFoundException.class);
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(tmpFiles()).hasSize(1);
    store.abort(t);
  }

  @Test
  void commit_ofAnEmptyBlock_givesAZeroLengthBlock() throws IOException {
    BlockMeta meta = store.commit(store.createTemp(4, 10));
    assertThat(meta.length()).isZero();
    assertThat(read(store, 4)).isEmpty();
  }

  @Test
  void commit_twice_isRefused_andDoesNotChangeUsedBytes() throws IOException {
    TempBlock t = store.createTemp(1, 10);
    t.append(ByteBuffer.wrap(new byte[10]));
    store.commit(t);

    assertThatThrownBy(() -> store.commit(t)).isInstanceOf(IllegalStateException.class);
    assertThat(store.usedBytes()).isEqualTo(10);
    assertThat(store.get(1).length()).isEqualTo(10);
  }

  // ---- abort ----

  @Test
  void abort_removesTheTempFile_andReleasesItsBytes() throws IOException {
    store.commit(store.createTemp(1, 10)); // an unrelated block that must survive
    TempBlock t = store.createTemp(2, 100);
    t.append(ByteBuffer.wrap(new byte[60]));
    assertThat(tmpFiles()).hasSize(1);

    store.abort(t);

    assertThat(tmpFiles()).isEmpty();
    assertThat(store.usedBytes()).isZero();
    assertThatThrownBy(() -> store.get(2)).isInstanceOf(NotFoundException.class);
    assertThat(store.committedBlocks()).extracting(BlockMeta::blockId).containsExactly(1L);
  }

  @Test
  void abort_twice_releasesTheBytesOnce() throws IOException {
    TempBlock keep = store.createTemp(1, 100);
    keep.append(ByteBuffer.wrap(new byte[40]));
    TempBlock t = store.createTemp(2, 100);
    t.append(ByteBuffer.wrap(new byte[60]));

    store.abort(t);
    store.abort(t);

    assertThat(store.usedBytes()).isEqualTo(40);
  }

  @Test
  void abort_freesTheBlockIdForANewWriter() throws IOException {
    TempBlock t = store.createTemp(5, 10);
    t.append(ByteBuffer.wrap(new byte[3]));
    store.abort(t);

    BlockMeta meta = write(store, 5, content(5, 8), 8);
    assertThat(meta.length()).isEqualTo(8);
    assertThat(read(store, 5)).isEqualTo(content(5, 8));
  }

  @Test
  void commit_afterAbort_isRefused() throws IOException {
    TempBlock t = store.createTemp(5, 10);
    store.abort(t);
    assertThatThrownBy(() -> store.commit(t)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> store.get(5)).isInstanceOf(NotFoundException.class);
  }

  // ---- limits ----

  @Test
  void append_pastTheQuota_isRefused_andReservesNothing() throws IOException {
    TieredBlockStore small = single(dir.resolve("small"), TIER, 100);
    TempBlock a = small.createTemp(1, 100);
    a.append(ByteBuffer.wrap(new byte[60]));
    TempBlock b = small.createTemp(2, 100);
    ByteBuffer tooMuch = ByteBuffer.wrap(new byte[41]);

    assertThatThrownBy(() -> b.append(tooMuch)).isInstanceOf(ResourceExhaustedException.class);

    assertThat(small.usedBytes()).isEqualTo(60);
    assertThat(b.length()).isZero();
    assertThat(tooMuch.remaining()).as("nothing was consumed").isEqualTo(41);
    b.append(ByteBuffer.wrap(new byte[40]));
    assertThat(small.usedBytes()).as("the quota can be filled exactly").isEqualTo(100);
    small.abort(b);
    assertThat(small.usedBytes()).isEqualTo(60);
    assertThat(small.commit(a).length()).isEqualTo(60);
    assertThat(small.usedBytes()).isEqualTo(60);
  }

  @Test
  void quota_fullOfPinnedBlocks_refusesAppends_untilOneIsRemoved() throws IOException {
    TieredBlockStore small = single(dir.resolve("small"), TIER, 100);
    write(small, 1, content(1, 100), 100);
    small.pin(1);
    TempBlock t = small.createTemp(2, 50);
    assertThatThrownBy(() -> t.append(ByteBuffer.wrap(new byte[1])))
        .isInstanceOf(ResourceExhaustedException.class);

    small.remove(1);
    t.append(ByteBuffer.wrap(new byte[50]));
    assertThat(small.commit(t).length()).isEqualTo(50);
    assertThat(small.usedBytes()).isEqualTo(50);
  }

  @Test
  void append_pastTheDeclaredMaxLength_isRefused_andReservesNothing() throws IOException {
    TempBlock t = store.createTemp(1, 10);
    t.append(ByteBuffer.wrap(new byte[8]));

    assertThatThrownBy(() -> t.append(ByteBuffer.wrap(new byte[3]))).isInstanceOf(InvalidArgumentException.class);

    assertThat(t.length()).isEqualTo(8);
    assertThat(store.usedBytes()).isEqualTo(8);
    t.append(ByteBuffer.wrap(new byte[2]));
    assertThat(store.commit(t).length()).isEqualTo(10);
  }

  @Test
  void createTemp_withBadArguments_isRefused() {
    assertThatThrownBy(() -> store.createTemp(-1, 10)).isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> store.createTemp(1, 0)).isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> store.createTemp(1, QUOTA + 1)).isInstanceOf(InvalidArgumentException.class);
    assertThat(store.usedBytes()).isZero();
  }

  @Test
  void createTemp_withBadArguments_doesNotHoldTheBlockId() throws IOException {
    assertThatThrownBy(() -> store.createTemp(1, QUOTA + 1)).isInstanceOf(InvalidArgumentException.class);
    TempBlock t = store.createTemp(1, QUOTA);
    assertThat(t.blockId()).isEqualTo(1);
    store.abort(t);
  }

  // ---- one writer per block ----

  @Test
  void createTemp_twiceForTheSameBlock_isRefused() throws IOException {
    TempBlock first = store.createTemp(1, 10);
    first.append(ByteBuffer.wrap(new byte[4]));

    assertThatThrownBy(() -> store.createTemp(1, 10)).isInstanceOf(AlreadyExistsException.class);

    assertThat(tmpFiles()).hasSize(1);
    assertThat(store.commit(first).length()).as("the first writer is undisturbed").isEqualTo(4);
  }

  @Test
  void createTemp_forACommittedBlock_isRefused() throws IOException {
    write(store, 1, content(1, 10), 10);

    assertThatThrownBy(() -> store.createTemp(1, 10)).isInstanceOf(AlreadyExistsException.class);

    assertThat(read(store, 1)).isEqualTo(content(1, 10));
    assertThat(tmpFiles()).isEmpty();
  }

  // ---- remove ----

  @Test
  void remove_forgetsTheBlock_deletesItsFile_andReleasesItsBytes() throws IOException {
    write(store, 1, content(1, 30), 30);
    write(store, 2, content(2, 20), 20);

    assertThat(store.remove(1)).isTrue();

    assertThatThrownBy(() -> store.get(1)).isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> store.openForRead(1, false)).isInstanceOf(NotFoundException.class);
    assertThat(Files.exists(dir.resolve("blocks").resolve("1"))).isFalse();
    assertThat(store.usedBytes()).isEqualTo(20);
    assertThat(store.committedBlocks()).extracting(BlockMeta::blockId).containsExactly(2L);
    assertThat(store.remove(1)).as("already gone").isFalse();
    assertThat(store.usedBytes()).isEqualTo(20);
  }

  @Test
  void remove_ofAnUnknownBlock_isFalse() throws IOException {
    assertThat(store.remove(42)).isFalse();
    assertThat(store.usedBytes()).isZero();
  }

  @Test
  void remove_leavesAnOpenReaderReadingTheWholeBlock() throws IOException {
    write(store, 1, content(1, 5000), 1000);
    BlockStore.ReadHandle handle = store.openForRead(1, false);
    FileChannel reader = handle.channel();
    opened.add(reader);

    store.remove(1);

    assertThat(readAll(reader)).isEqualTo(content(1, 5000));
    // The removal waited for the reader; once it is done the block is gone.
    assertThat(store.committedBlocks()).hasSize(1);
    handle.close(); // the removal is finished on the store's own thread, soon after
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(store.committedBlocks()).isEmpty());
    assertThat(store.usedBytes()).isZero();
  }

  @Test
  void remove_thenWriteAgain_servesTheNewContent() throws IOException {
    write(store, 1, content(1, 10), 10);
    store.remove(1);
    write(store, 1, content(99, 12), 5);

    assertThat(read(store, 1)).isEqualTo(content(99, 12));
    assertThat(store.usedBytes()).isEqualTo(12);
  }

  // ---- restart ----

  @Test
  void restart_reindexesCommittedBlocks_andDeletesLeftoverTempFiles() throws IOException {
    write(store, 1, content(1, 10), 3);
    write(store, 2, content(2, 20), 7);
    write(store, 3, content(3, 5), 5);
    store.remove(3);
    TempBlock unfinished = store.createTemp(4, 100);
    unfinished.append(ByteBuffer.wrap(new byte[50]));
    Files.write(dir.resolve("tmp").resolve("5-leftover"), new byte[17]);

    TieredBlockStore restarted = single(dir, "MEM", QUOTA);

    assertThat(restarted.committedBlocks()).containsExactlyInAnyOrder(
        new BlockMeta(1, 10, "MEM"), new BlockMeta(2, 20, "MEM"));
    assertThat(restarted.usedBytes()).isEqualTo(30);
    assertThat(tmpFiles()).isEmpty();
    assertThat(read(restarted, 1)).isEqualTo(content(1, 10));
    assertThat(read(restarted, 2)).isEqualTo(content(2, 20));
    assertThatThrownBy(() -> restarted.get(3)).isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> restarted.get(4)).isInstanceOf(NotFoundException.class);
    assertThat(write(restarted, 4, content(4, 9), 9).length()).as("the dead writer's id is free").isEqualTo(9);
    assertThatThrownBy(() -> restarted.createTemp(1, 10)).isInstanceOf(AlreadyExistsException.class);
    store.abort(unfinished); // closes the old store's channel; the file is already gone
  }

  @Test
  void restart_ignoresFilesInBlocksWhoseNameIsNotABlockId() throws IOException {
    write(store, 8, content(8, 10), 10);
    Path stray = dir.resolve("blocks").resolve("README");
    Files.write(stray, new byte[100]);

    TieredBlockStore restarted = single(dir, TIER, QUOTA);

    assertThat(restarted.committedBlocks()).extracting(BlockMeta::blockId).containsExactly(8L);
    assertThat(restarted.usedBytes()).isEqualTo(10);
    assertThat(Files.exists(stray)).as("left alone").isTrue();
  }

  @Test
  void start_inAnEmptyDirectory_createsTheLayout() throws IOException {
    Path fresh = dir.resolve("a/b");
    TieredBlockStore s = single(fresh, TIER, 10);
    assertThat(Files.isDirectory(fresh.resolve("blocks"))).isTrue();
    assertThat(Files.isDirectory(fresh.resolve("tmp"))).isTrue();
    assertThat(s.committedBlocks()).isEmpty();
    assertThat(s.capacityBytes()).isEqualTo(10);
  }

  // ---- concurrency ----

  @Test
  void concurrentWriters_ofDifferentBlocks_endWithExactUsageAndReadableContents() throws Exception {
    int threads = 8;
    int blocksPerThread = 20;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<Long>> results = new ArrayList<>();
    try {
      for (int t = 0; t < threads; t++) {
        int thread = t;
        Callable<Long> writer = () -> {
          start.await();
          long bytes = 0;
          for (int j = 0; j < blocksPerThread; j++) {
            long id = thread * 1000L + j;
            byte[] data = content(id, lengthOf(id));
            write(store, id, data, 17);
            bytes += data.length;
          }
          return bytes;
        };
        results.add(pool.submit(writer));
      }
      start.countDown();
      long expected = 0;
      for (Future<Long> f : results) {
        expected += f.get(30, TimeUnit.SECONDS);
      }

      assertThat(store.usedBytes()).isEqualTo(expected);
      assertThat(store.committedBlocks()).hasSize(threads * blocksPerThread);
      for (int t = 0; t < threads; t++) {
        for (int j = 0; j < blocksPerThread; j++) {
          long id = t * 1000L + j;
          assertThat(store.get(id).length()).isEqualTo(lengthOf(id));
          assertThat(read(store, id)).as("block %d", id).isEqualTo(content(id, lengthOf(id)));
        }
      }
      assertThat(tmpFiles()).isEmpty();
    } finally {
      pool.shutdownNow();
    }
  }

  private static int lengthOf(long blockId) {
    return 50 + (int) (blockId * 7 % 200);
  }

  @Test
  void concurrentWriters_raceForAFullQuota_evictToMakeRoom_neverOverbook_andLeakNothing() throws Exception {
    long quota = 10_000;
    TieredBlockStore small = single(dir.resolve("small"), TIER, quota);
    int threads = 8;
    int blocksPerThread = 20; // 160 blocks of 100 bytes: 16 000 bytes wanted, 10 000 available
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<Integer>> results = new ArrayList<>();
    try {
      for (int t = 0; t < threads; t++) {
        int thread = t;
        results.add(pool.submit(() -> {
          start.await();
          int committed = 0;
          for (int j = 0; j < blocksPerThread; j++) {
            TempBlock temp = small.createTemp(thread * 1000L + j, 100);
            for (int k = 0; k < 10; k++) {
              temp.append(ByteBuffer.wrap(new byte[10]));
            }
            small.commit(temp);
            small.markEvictable(List.of(thread * 1000L + j)); // persisted: eviction may drop it
            committed++;
            assertThat(small.usedBytes()).isLessThanOrEqualTo(quota);
          }
          return committed;
        }));
      }
      start.countDown();
      int committed = 0;
      for (Future<Integer> f : results) {
        committed += f.get(30, TimeUnit.SECONDS);
      }

      // The single tier is also the last: room is made by evicting the coldest committed blocks, so
      // every write commits, and what stays fits the quota (at most 8 blocks in flight at the end).
      assertThat(committed).isEqualTo(threads * blocksPerThread);
      assertThat(small.committedBlocks()).hasSizeBetween(92, 100);
      assertThat(small.committedBlocks()).extracting(BlockMeta::length).containsOnly(100L);
      assertThat(small.usedBytes()).isEqualTo(100L * small.committedBlocks().size());
      try (Stream<Path> tmp = Files.list(dir.resolve("small").resolve("tmp"))) {
        assertThat(tmp.toList()).isEmpty();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
