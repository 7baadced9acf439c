package io.strata.worker.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.id.BlockId;
import io.strata.server.ufs.UfsManager;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.TieredBlockStore;
import io.strata.worker.ufs.MasterClient.BlockSource;
import io.strata.worker.ufs.MasterClient.UfsSource;
import io.strata.worker.ufs.UfsTestKit.CollectingSink;
import io.strata.worker.ufs.UfsTestKit.FakeMaster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Read-through from a real local-dir under file system into a real tiered store. */
class UfsBlockLoaderTest {
  private static final int BLOCK = 64 * 1024;
  private static final int BUFFER = 4096;
  private static final long FILE_ID = 42;

  @TempDir
  Path tmp;
  private TieredBlockStore store;
  private Path storeDir;
  private FakeMaster master;
  private UfsManager ufs;
  private ThreadPoolExecutor executor;
  private UfsBlockLoader loader;
  private byte[] file;
  private String fileUri;

  @BeforeEach
  void setUp() throws Exception {
    storeDir = tmp.resolve("store");
    store = UfsTestKit.store(storeDir, 16L * BLOCK);
    master = new FakeMaster();
    ufs = new UfsManager();
    executor = new ThreadPoolExecutor(8, 8, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>());
    loader = new UfsBlockLoader(store, master, ufs, executor, BUFFER, 60_000);
    // Three blocks: two full, the last 10000 bytes.
    file = UfsTestKit.content(1, 2 * BLOCK + 10_000);
    Path f = tmp.resolve("ufs/dir/data.bin");
    Files.createDirectories(f.getParent());
    Files.write(f, file);
    fileUri = f.toUri().toString();
    for (int i = 0; i < 3; i++) {
      long len = Math.min(BLOCK, file.length - (long) i * BLOCK);
      master.sources.put(block(i), source(i, len, file.length));
    }
  }

  @AfterEach
  void tearDown() {
    executor.shutdownNow();
    ufs.close();
  }

  private static long block(int index) {
    return BlockId.of(FILE_ID, index);
  }

  private BlockSource source(int index, long length, long fileLength) {
    return new BlockSource(block(index), length, List.of(),
        new UfsSource(fileUri, Map.of(), (long) index * BLOCK, fileLength));
  }

  private byte[] fileRange(long from, long length) {
    return Arrays.copyOfRange(file, (int) from, (int) (from + length));
  }

  @Test
  void read_cachesTheWholeBlockByteExact_andStreamsTheRangeAsItLoads() throws Exception {
    CollectingSink sink = new CollectingSink(store, block(1), 1000, 50_000, null);
    loader.read(block(1), 1000, 50_000, false, false, sink);

    assertThat(sink.await()).isTrue();
    assertThat(sink.failure).isNull();
    assertThat(sink.completed).isTrue();
    assertThat(sink.servedFromStore).as("the first reader is streamed from the load").isFalse();
    assertThat(sink.received()).isEqualTo(fileRange(BLOCK + 1000, 50_000));
    await().atMost(Duration.ofSeconds(10)).until(() -> loader.loadsInFlight() == 0);
    assertThat(store.get(block(1)).length()).isEqualTo(BLOCK);
    assertThat(UfsTestKit.readBlock(store, block(1))).isEqualTo(fileRange(BLOCK, BLOCK));
    assertThat(master.commits).containsExactly(block(1) + ":" + BLOCK + ":MEM");
    assertThat(loader.ufsBlockReads()).isEqualTo(1);
  }

  @Test
  void read_ofTheShortLastBlock_cachesOnlyItsLength() throws Exception {
    CollectingSink sink = new CollectingSink(store, block(2), 0, 10_000, null);
    loader.read(block(2), 0, 10_000, false, false, sink);

    assertThat(sink.await()).isTrue();
    assertThat(sink.received()).isEqualTo(fileRange(2L * BLOCK, 10_000));
    await().atMost(Duration.ofSeconds(10)).until(() -> loader.loadsInFlight() == 0);
    assertThat(UfsTestKit.readBlock(store, block(2))).isEqualTo(fileRange(2L * BLOCK, 10_000));
  }

  @Test
  void eightConcurrentReaders_causeOneUfsRead_andAllGetTheirRanges() throws Exception {
    CountDownLatch gate = new CountDownLatch(1); // holds the loading reader's flow control
    List<CollectingSink> sinks = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      long off = i * 4000L;
      CollectingSink s = new CollectingSink(store, block(0), off, 20_000, gate);
      sinks.add(s);
      loader.read(block(0), off, 20_000, false, false, s);
    }
    // One task stays in the load (blocked on its reader); the other seven joined it and returned.
    await().atMost(Duration.ofSeconds(10)).until(() -> executor.getCompletedTaskCount() == 7);
    assertThat(loader.loadsInFlight()).isEqualTo(1);
    assertThat(store.committedBlocks()).isEmpty();
    gate.countDown();

    for (CollectingSink s : sinks) {
      assertThat(s.await()).isTrue();
      assertThat(s.failure).isNull();
      assertThat(s.received()).isEqualTo(fileRange(s.offset, 20_000));
    }
    assertThat(sinks.stream().filter(s -> s.servedFromStore).count()).isEqualTo(7);
    assertThat(loader.ufsBlockReads()).isEqualTo(1);
    assertThat(master.commits).hasSize(1);
  }

  @Test
  void read_ofAFileWhoseLengthChanged_isRefused_andCachesNothing() throws Exception {
    master.sources.put(block(0), source(0, BLOCK, file.length + 1));
    CollectingSink sink = new CollectingSink(store, block(0), 0, 100, null);
    loader.read(block(0), 0, 100, false, false, sink);

    assertThat(sink.await()).isTrue();
    assertThat(sink.failure).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("changed in the under file system")
        .hasMessageContaining(String.valueOf(file.length + 1))
        .hasMessageContaining("loadMetadata");
    assertThat(loader.ufsBlockReads()).isZero();
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(UfsTestKit.tmpFiles(storeDir)).isEmpty();
  }

  /**
   * A file rewritten in place at the same length (its mtime moved on): the block is refused rather than cached from
   * the new bytes next to blocks cached from the old ones. The mtime Strata recorded still matching reads as usual.
   */
  @Test
  void read_ofAFileRewrittenAtTheSameLength_isRefusedByItsMtime_andCachesNothing() throws Exception {
    Path f = tmp.resolve("ufs/dir/data.bin");
    long recorded = Files.getLastModifiedTime(f).toMillis();
    master.sources.put(block(0), new BlockSource(block(0), BLOCK, List.of(),
        new UfsSource(fileUri, Map.of(), 0, file.length, recorded)));
    CollectingSink same = new CollectingSink(store, block(0), 0, 100, null);
    loader.read(block(0), 0, 100, false, false, same);
    assertThat(same.await()).isTrue();
    assertThat(same.failure).isNull();
    assertThat(same.received()).isEqualTo(fileRange(0, 100));

    byte[] rewritten = UfsTestKit.content(2, file.length);
    Files.write(f, rewritten);
    Files.setLastModifiedTime(f, java.nio.file.attribute.FileTime.fromMillis(recorded + 5_000));
    master.sources.put(block(1), new BlockSource(block(1), BLOCK, List.of(),
        new UfsSource(fileUri, Map.of(), BLOCK, file.length, recorded)));
    CollectingSink changed = new CollectingSink(store, block(1), 0, 100, null);
    loader.read(block(1), 0, 100, false, false, changed);

    assertThat(changed.await()).isTrue();
    assertThat(changed.failure).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("changed in the under file system")
        .hasMessageContaining("modified at")
        .hasMessageContaining("loadMetadata");
    await().atMost(Duration.ofSeconds(10)).until(() -> loader.loadsInFlight() == 0);
    assertThat(store.committedBlocks()).extracting(BlockStore.BlockMeta::blockId).containsExactly(block(0));
    assertThat(UfsTestKit.tmpFiles(storeDir)).isEmpty();
  }

  @Test
  void failedLoad_abortsItsTempBlock_andFailsEveryWaiter() throws Exception {
    // The master says block 2 is a full block, but the file ends 10000 bytes into it.
    master.sources.put(block(2), source(2, BLOCK, file.length));
    CountDownLatch gate = new CountDownLatch(1);
    CollectingSink first = new CollectingSink(store, block(2), 0, BLOCK, gate);
    loader.read(block(2), 0, BLOCK, false, false, first);
    await().atMost(Duration.ofSeconds(10)).until(() -> first.waitedForReady);
    CollectingSink second = new CollectingSink(store, block(2), 0, 100, null);
    loader.read(block(2), 0, 100, false, false, second);
    await().atMost(Duration.ofSeconds(10)).until(() -> executor.getCompletedTaskCount() == 1);
    gate.countDown();

    assertThat(first.await()).isTrue();
    assertThat(second.await()).isTrue();
    for (CollectingSink s : List.of(first, second)) {
      assertThat(s.failure).isInstanceOf(FailedPreconditionException.class)
          .hasMessageContaining("block " + block(2)).hasMessageContaining(fileUri);
    }
    assertThat(second.servedFromStore).isFalse();
    assertThat(UfsTestKit.tmpFiles(storeDir)).isEmpty();
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(store.usedBytes()).isZero();
    assertThat(master.commits).isEmpty();
    assertThat(loader.loadsInFlight()).isZero();
  }

  @Test
  void cancelledFirstReader_doesNotStopTheLoad() throws Exception {
    CollectingSink sink = new CollectingSink(store, block(0), 0, BLOCK, null);
    sink.cancelled = true;
    loader.read(block(0), 0, BLOCK, false, false, sink);

    await().atMost(Duration.ofSeconds(10)).until(() -> master.commits.size() == 1);
    assertThat(UfsTestKit.readBlock(store, block(0))).isEqualTo(fileRange(0, BLOCK));
    assertThat(sink.received()).isEmpty();
    assertThat(sink.failure).isNull();
  }

  @Test
  void noCache_streamsTheRangeFromTheUfs_andCachesNothing() throws Exception {
    CollectingSink sink = new CollectingSink(store, block(1), 7, 30_000, null);
    loader.read(block(1), 7, 30_000, true, false, sink);

    assertThat(sink.await()).isTrue();
    assertThat(sink.failure).isNull();
    assertThat(sink.received()).isEqualTo(fileRange(BLOCK + 7, 30_000));
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(master.commits).isEmpty();
    assertThat(loader.ufsBlockReads()).isEqualTo(1);
  }

  @Test
  void read_ofABlockOfAFileNotPersisted_isNotFound() throws Exception {
    master.sources.put(block(0), new BlockSource(block(0), BLOCK, List.of(), null));
    CollectingSink sink = new CollectingSink(store, block(0), 0, 10, null);
    loader.read(block(0), 0, 10, false, false, sink);

    assertThat(sink.await()).isTrue();
    assertThat(sink.failure).isInstanceOf(NotFoundException.class).hasMessageContaining("not persisted");
    assertThat(loader.ufsBlockReads()).isZero();
  }

  @Test
  void read_ofABlockAlreadyInTheStore_readsItThere() throws Exception {
    BlockStore.TempBlock t = store.createTemp(block(0), BLOCK);
    t.append(java.nio.ByteBuffer.wrap(fileRange(0, BLOCK)));
    store.commit(t);
    CollectingSink sink = new CollectingSink(store, block(0), 10, 10, null);
    loader.read(block(0), 10, 10, false, false, sink);

    assertThat(sink.await()).isTrue();
    assertThat(sink.servedFromStore).isTrue();
    assertThat(sink.received()).isEqualTo(fileRange(10, 10));
    assertThat(loader.ufsBlockReads()).isZero();
  }

  @Test
  void masterRefusingTheCommit_leavesNoBlock_andTheNextReadLoadsAgain() throws Exception {
    master.commitFailure = new UnavailableException("not registered");
    CollectingSink sink = new CollectingSink(store, block(0), 0, 10, null);
    loader.read(block(0), 0, 10, false, false, sink);
    assertThat(sink.await()).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> loader.loadsInFlight() == 0);
    assertThat(store.committedBlocks()).isEmpty();

    master.commitFailure = null;
    CollectingSink again = new CollectingSink(store, block(0), 0, 10, null);
    loader.read(block(0), 0, 10, false, false, again);
    assertThat(again.await()).isTrue();
    assertThat(again.received()).isEqualTo(fileRange(0, 10));
    await().atMost(Duration.ofSeconds(10)).until(() -> master.commits.size() == 1);
    assertThat(loader.ufsBlockReads()).isEqualTo(2);
  }
}
