package io.strata.worker.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.id.BlockId;
import io.strata.server.ufs.UfsManager;
import io.strata.worker.InProcessMaster;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.TieredBlockStore;
import io.strata.worker.ufs.UfsTestKit.CollectingSink;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Read-through from a real local-dir under file system into a real tiered store. The blocks are of a file persisted
 * in the root under file system of a real master in this JVM (one for the class; a file a test), which the loader asks
 * through the worker's master sync registered there (one registration a test) and which takes its commits.
 */
class UfsBlockLoaderTest {
  private static final int BLOCK = 64 * 1024;
  private static final int BUFFER = 4096;

  @RegisterExtension
  static final UfsTestKit.MasterPerClass MASTER = new UfsTestKit.MasterPerClass(BLOCK);
  private InProcessMaster master;

  @TempDir
  Path tmp;
  private InProcessMaster.Worker worker;
  private TieredBlockStore store;
  private Path storeDir;
  private UfsManager ufs;
  private ThreadPoolExecutor executor;
  private UfsBlockLoader loader;
  private byte[] file;
  /** The file's path in Strata, its copy in the master's under file system, and its id there. */
  private String path;
  private Path ufsFile;
  private long fileId;
  private String fileUri;

  @BeforeEach
  void setUp(TestInfo test) throws Exception {
    master = MASTER.get();
    storeDir = tmp.resolve("store");
    worker = UfsTestKit.worker(master, storeDir, 16L * BLOCK);
    store = worker.store();
    ufs = new UfsManager();
    executor = new ThreadPoolExecutor(8, 8, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>());
    loader = new UfsBlockLoader(store, worker.client(), ufs, executor, BUFFER, 60_000);
    // Three blocks: two full, the last 10000 bytes.
    file = UfsTestKit.content(1, 2 * BLOCK + 10_000);
    String name = "dir/" + test.getTestMethod().orElseThrow().getName() + ".bin";
    path = "/" + name;
    fileId = master.persistedFile(name, file);
    ufsFile = master.ufs().resolve(name);
    fileUri = worker.client().blockSource(block(0)).ufs().uri();
  }

  @AfterEach
  void tearDown() {
    executor.shutdownNow();
    ufs.close();
    worker.close();
  }

  private long block(int index) {
    return BlockId.of(fileId, index);
  }

  /** Where the master lists the file's blocks: on this worker, by tier. */
  private Map<Long, String> listed() {
    return master.listed(block(0), block(1), block(2));
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
    assertThat(listed()).isEqualTo(Map.of(block(1), "MEM"));
    assertThat(master.fs().blockMaster().getBlock(block(1)).length()).isEqualTo(BLOCK);
    assertThat(worker.commitsSent()).isEqualTo(1);
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
    assertThat(master.fs().blockMaster().getBlock(block(2)).length()).isEqualTo(10_000);
  }

  @Test
  void eightConcurrentReaders_causeOneUfsRead_andAllGetTheirRanges() throws Exception {
    CountDownLatch gate = new CountDownLatch(1); // holds the load in its first send
    List<CollectingSink> sinks = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      long off = i * 4000L;
      CollectingSink s = CollectingSink.holding(store, block(0), off, 20_000, gate);
      sinks.add(s);
      loader.read(block(0), off, 20_000, false, false, s);
    }
    // One task stays in the load (held in its send to its reader); the other seven joined it and returned.
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
    assertThat(worker.commitsSent()).isEqualTo(1);
    assertThat(listed()).isEqualTo(Map.of(block(0), "MEM"));
  }

  /**
   * The load's first reader takes the start of its range (part of block 0), then stops reading (its stream not
   * ready): the load does not wait for it. A second reader of the whole block, waiting for that load, gets it from
   * the store while the first is still stalled; once the first reads again it gets the rest of its range from the
   * store, from the first byte it was not sent, byte-exact, with no gap or repeat. One UFS read in all.
   */
  @Test
  void stalledFirstReader_doesNotHoldUpAWaiter_andGetsTheRestFromTheStoreLater() throws Exception {
    CountDownLatch hold = new CountDownLatch(1); // the first send, until the second reader waits for the load
    CountDownLatch gate = new CountDownLatch(1); // the first reader's flow control: closed after its first send
    CollectingSink first = new CollectingSink(store, block(0), 1000, 40_000, gate);
    first.readySends = 1;
    first.hold = hold;
    loader.read(block(0), 1000, 40_000, false, false, first);
    await().atMost(Duration.ofSeconds(10)).until(() -> first.held);
    CollectingSink second = new CollectingSink(store, block(0), 0, BLOCK, null);
    loader.read(block(0), 0, BLOCK, false, false, second);
    await().atMost(Duration.ofSeconds(10)).until(() -> executor.getCompletedTaskCount() == 1); // it waits
    assertThat(store.committedBlocks()).isEmpty();
    hold.countDown();

    assertThat(second.done.await(20, TimeUnit.SECONDS)).as("the waiter is answered while the first reader stalls")
        .isTrue();
    assertThat(first.foundNotReady.getCount()).as("the load found the first reader not ready").isZero();
    assertThat(gate.getCount()).as("the first reader has not read again").isEqualTo(1);
    assertThat(first.done.getCount()).isEqualTo(1);
    assertThat(second.failure).isNull();
    assertThat(second.servedFromStore).isTrue();
    assertThat(second.received()).isEqualTo(fileRange(0, BLOCK));
    assertThat(first.received()).as("only its first chunk's share so far").isEqualTo(fileRange(1000, BUFFER - 1000));
    // Resumed after the waiters, from the first byte it was not sent; its store read waits for it to read again.
    await().atMost(Duration.ofSeconds(10)).until(() -> first.resumedAt != -1);
    assertThat(first.resumedAt).isEqualTo(BUFFER);
    assertThat(first.done.getCount()).isEqualTo(1);

    first.open();
    assertThat(first.await()).isTrue();
    assertThat(first.failure).isNull();
    assertThat(first.completed).isTrue();
    assertThat(first.servedFromStore).isFalse();
    assertThat(first.received()).isEqualTo(fileRange(1000, 40_000));
    assertThat(loader.ufsBlockReads()).isEqualTo(1);
    assertThat(loader.ufsBytesRead()).isEqualTo(BLOCK);
    assertThat(worker.commitsSent()).isEqualTo(1);
    assertThat(listed()).isEqualTo(Map.of(block(0), "MEM"));
  }

  @Test
  void read_ofAFileWhoseLengthChanged_isRefused_andCachesNothing() throws Exception {
    // A byte appended in the under file system since the master loaded the file.
    Files.write(ufsFile, new byte[1], StandardOpenOption.APPEND);
    CollectingSink sink = new CollectingSink(store, block(0), 0, 100, null);
    loader.read(block(0), 0, 100, false, false, sink);

    assertThat(sink.await()).isTrue();
    assertThat(sink.failure).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("changed in the under file system")
        .hasMessageContaining(String.valueOf(file.length + 1))
        .hasMessageContaining("loadMetadata");
    assertThat(loader.ufsBlockReads()).isZero();
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(listed()).isEmpty();
    assertThat(UfsTestKit.tmpFiles(storeDir)).isEmpty();
  }

  /**
   * A file rewritten in place at the same length (its mtime moved on): the block is refused rather than cached from
   * the new bytes next to blocks cached from the old ones. The mtime Strata recorded still matching reads as usual.
   */
  @Test
  void read_ofAFileRewrittenAtTheSameLength_isRefusedByItsMtime_andCachesNothing() throws Exception {
    long recorded = worker.client().blockSource(block(0)).ufs().mtimeMs();
    assertThat(recorded).as("the master recorded the file's mtime").isEqualTo(Files.getLastModifiedTime(ufsFile)
        .toMillis());
    assertThat(worker.client().blockSource(block(0)).ufs().contentTag())
        .as("a local dir offers no content fingerprint: the length and the mtime decide").isEmpty();
    CollectingSink same = new CollectingSink(store, block(0), 0, 100, null);
    loader.read(block(0), 0, 100, false, false, same);
    assertThat(same.await()).isTrue();
    assertThat(same.failure).isNull();
    assertThat(same.received()).isEqualTo(fileRange(0, 100));
    // Block 0's load may go on past its reader's range: it ends before the rewrite (else it would not be cached).
    await().atMost(Duration.ofSeconds(10)).until(() -> loader.loadsInFlight() == 0);

    byte[] rewritten = UfsTestKit.content(2, file.length);
    Files.write(ufsFile, rewritten);
    Files.setLastModifiedTime(ufsFile, java.nio.file.attribute.FileTime.fromMillis(recorded + 5_000));
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

  /** Rewrites the file in the under file system in place: the same length, other bytes, its mtime moved on. */
  private byte[] rewriteInPlace() throws Exception {
    byte[] rewritten = UfsTestKit.content(3, file.length);
    long recorded = Files.getLastModifiedTime(ufsFile).toMillis();
    Files.write(ufsFile, rewritten); // the same inode: a stream open on it reads the new bytes from here on
    Files.setLastModifiedTime(ufsFile, java.nio.file.attribute.FileTime.fromMillis(recorded + 5_000));
    return rewritten;
  }

  /**
   * The file is rewritten in place at the same length while block 0 loads (its reader, who asked for the whole block,
   * holding the load after the first chunk): the rest of the block would come from the new bytes. The load checks the
   * file again after its last byte: nothing is cached, the reader and a waiter fail, and once the master has synced the
   * new version its block loads from it.
   */
  @Test
  void fileRewrittenAtTheSameLengthWhileLoading_failsTheLoad_andCachesNothing() throws Exception {
    CountDownLatch gate = new CountDownLatch(1);
    CollectingSink first = CollectingSink.holding(store, block(0), 0, BLOCK, gate);
    loader.read(block(0), 0, BLOCK, false, false, first);
    await().atMost(Duration.ofSeconds(10)).until(() -> first.held);
    CollectingSink second = new CollectingSink(store, block(0), 100, 100, null);
    loader.read(block(0), 100, 100, false, false, second);
    await().atMost(Duration.ofSeconds(10)).until(() -> executor.getCompletedTaskCount() == 1);
    byte[] rewritten = rewriteInPlace();
    gate.countDown();

    assertThat(first.await()).isTrue();
    assertThat(second.await()).isTrue();
    for (CollectingSink s : List.of(first, second)) {
      assertThat(s.completed).isFalse();
      assertThat(s.failure).isInstanceOf(FailedPreconditionException.class)
          .hasMessageContaining("changed in the under file system while block " + block(0) + " was being read")
          .hasMessageContaining(fileUri).hasMessageContaining("loadMetadata");
    }
    assertThat(second.servedFromStore).isFalse();
    await().atMost(Duration.ofSeconds(10)).until(() -> loader.loadsInFlight() == 0);
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(UfsTestKit.tmpFiles(storeDir)).isEmpty();
    assertThat(worker.commitsSent()).isZero();
    assertThat(listed()).isEmpty();

    // The master syncs the new version (a new file): its block loads from the new bytes.
    long reloaded = BlockId.of(master.fs().getStatus(path, 0).id(), 0);
    assertThat(reloaded).isNotEqualTo(block(0));
    CollectingSink again = new CollectingSink(store, reloaded, 0, BLOCK, null);
    loader.read(reloaded, 0, BLOCK, false, false, again);
    assertThat(again.await()).isTrue();
    assertThat(again.failure).isNull();
    assertThat(again.received()).isEqualTo(Arrays.copyOfRange(rewritten, 0, BLOCK));
    await().atMost(Duration.ofSeconds(10)).until(() -> master.listed(reloaded).equals(Map.of(reloaded, "MEM")));
    assertThat(UfsTestKit.readBlock(store, reloaded)).isEqualTo(Arrays.copyOfRange(rewritten, 0, BLOCK));
  }

  /**
   * A reader whose range ends in the first chunk is told it has it only after the file is checked again: a rewrite in
   * place while it was held fails it, although each of its bytes was read before the rewrite.
   */
  @Test
  void fileRewrittenWhileAShortRangeIsSent_failsThatReader() throws Exception {
    readOfAFileRewrittenMidway_fails(10, false);
    await().atMost(Duration.ofSeconds(10)).until(() -> loader.loadsInFlight() == 0);
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(UfsTestKit.tmpFiles(storeDir)).isEmpty();
  }

  /** The same for a NO_CACHE read held mid-way: the reader fails instead of completing with mixed bytes. */
  @Test
  void noCache_ofAFileRewrittenWhileStreaming_failsTheReader() throws Exception {
    readOfAFileRewrittenMidway_fails(BLOCK, true);
    assertThat(store.committedBlocks()).isEmpty();
  }

  /** A read of block 1's first {@code length} bytes, held after its first chunk while the file is rewritten: fails. */
  private void readOfAFileRewrittenMidway_fails(long length, boolean noCache) throws Exception {
    CountDownLatch gate = new CountDownLatch(1);
    // A load never waits for its reader: it is held in its send. A NO_CACHE stream waits for its reader's flow
    // control.
    CollectingSink sink = noCache ? new CollectingSink(store, block(1), 0, length, gate)
        : CollectingSink.holding(store, block(1), 0, length, gate);
    loader.read(block(1), 0, length, noCache, false, sink);
    await().atMost(Duration.ofSeconds(10)).until(() -> noCache ? sink.waitedForReady : sink.held);
    rewriteInPlace();
    gate.countDown();

    assertThat(sink.await()).isTrue();
    assertThat(sink.completed).isFalse();
    assertThat(sink.failure).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("changed in the under file system while block " + block(1) + " was being read")
        .hasMessageContaining(fileUri);
  }

  /**
   * A busy worker's UFS pool (one thread, held by a load; room for one waiting task): one more read is refused
   * UNAVAILABLE naming the queue's key (a failure of this worker, which a client takes to another), and the queued
   * read, whose reader cancels while it waits, does nothing when its turn comes (no UFS read, nothing cached).
   */
  @Test
  void busyUfsPool_refusesUnavailable_andSkipsAQueuedReadWhoseReaderWent() throws Exception {
    ThreadPoolExecutor one = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
        new java.util.concurrent.ArrayBlockingQueue<>(1));
    try {
      UfsBlockLoader busy = new UfsBlockLoader(store, worker.client(), ufs, one, BUFFER, 60_000);
      CountDownLatch gate = new CountDownLatch(1);
      CollectingSink holding = CollectingSink.holding(store, block(0), 0, 10, gate);
      busy.read(block(0), 0, 10, false, false, holding);
      await().atMost(Duration.ofSeconds(10)).until(() -> holding.held);
      CollectingSink gone = new CollectingSink(store, block(1), 0, 10, null);
      busy.read(block(1), 0, 10, false, false, gone);
      CollectingSink refused = new CollectingSink(store, block(2), 0, 10, null);
      busy.read(block(2), 0, 10, false, false, refused);

      assertThat(refused.await()).isTrue();
      assertThat(refused.failure).isInstanceOf(io.strata.common.exception.UnavailableException.class)
          .hasMessageContaining("strata.worker.ufs.io.queue.max").hasMessageContaining("block " + block(2));
      gone.cancelled = true;
      gate.countDown();
      assertThat(holding.await()).isTrue();
      assertThat(holding.received()).isEqualTo(fileRange(0, 10));
      await().atMost(Duration.ofSeconds(10)).until(() -> one.getCompletedTaskCount() == 2);
      assertThat(busy.ufsBlockReads()).isEqualTo(1);
      assertThat(store.committedBlocks()).extracting(BlockStore.BlockMeta::blockId).containsExactly(block(0));
      assertThat(gone.done.getCount()).as("a reader that went is not answered").isEqualTo(1);
      assertThat(gone.received()).isEmpty();
    } finally {
      one.shutdownNow();
    }
  }

  @Test
  void failedLoad_abortsItsTempBlock_andFailsEveryWaiter() throws Exception {
    // The file is cut short in the under file system while block 2 loads (its reader holding the load after the
    // first chunk): the load finds the file's end before the block's.
    CountDownLatch gate = new CountDownLatch(1);
    CollectingSink first = CollectingSink.holding(store, block(2), 0, 10_000, gate);
    loader.read(block(2), 0, 10_000, false, false, first);
    await().atMost(Duration.ofSeconds(10)).until(() -> first.held);
    CollectingSink second = new CollectingSink(store, block(2), 0, 100, null);
    loader.read(block(2), 0, 100, false, false, second);
    await().atMost(Duration.ofSeconds(10)).until(() -> executor.getCompletedTaskCount() == 1);
    try (FileChannel ch = FileChannel.open(ufsFile, StandardOpenOption.WRITE)) {
      ch.truncate(2L * BLOCK);
    }
    gate.countDown();

    assertThat(first.await()).isTrue();
    assertThat(second.await()).isTrue();
    for (CollectingSink s : List.of(first, second)) {
      assertThat(s.failure).isInstanceOf(FailedPreconditionException.class)
          .hasMessageContaining("block " + block(2)).hasMessageContaining(fileUri);
      assertThat(s.failure).hasMessageContaining("ended at byte");
    }
    assertThat(second.servedFromStore).isFalse();
    assertThat(UfsTestKit.tmpFiles(storeDir)).isEmpty();
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(store.usedBytes()).isZero();
    assertThat(worker.commitsSent()).isZero();
    assertThat(listed()).isEmpty();
    assertThat(loader.loadsInFlight()).isZero();
  }

  @Test
  void cancelledFirstReader_doesNotStopTheLoad() throws Exception {
    // The reader cancels while the load sends it the first chunk: it gets that chunk, then nothing.
    CountDownLatch gate = new CountDownLatch(1);
    CollectingSink sink = CollectingSink.holding(store, block(0), 0, BLOCK, gate);
    loader.read(block(0), 0, BLOCK, false, false, sink);
    await().atMost(Duration.ofSeconds(10)).until(() -> sink.held);
    sink.cancelled = true;
    gate.countDown();

    await().atMost(Duration.ofSeconds(10)).until(() -> listed().equals(Map.of(block(0), "MEM")));
    assertThat(UfsTestKit.readBlock(store, block(0))).isEqualTo(fileRange(0, BLOCK));
    assertThat(sink.received()).isEqualTo(fileRange(0, BUFFER));
    assertThat(sink.failure).isNull();
    assertThat(sink.completed).isFalse();
    assertThat(sink.resumedAt).as("a reader that went is not served the rest").isEqualTo(-1);
  }

  @Test
  void noCache_streamsTheRangeFromTheUfs_andCachesNothing() throws Exception {
    CollectingSink sink = new CollectingSink(store, block(1), 7, 30_000, null);
    loader.read(block(1), 7, 30_000, true, false, sink);

    assertThat(sink.await()).isTrue();
    assertThat(sink.failure).isNull();
    assertThat(sink.received()).isEqualTo(fileRange(BLOCK + 7, 30_000));
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(worker.commitsSent()).isZero();
    assertThat(loader.ufsBlockReads()).isEqualTo(1);
  }

  @Test
  void read_ofABlockOfAFileNotPersisted_isNotFound() throws Exception {
    long id = UfsTestKit.unpersistedBlockGoneHere(master, worker, "/cached/only", 100);
    CollectingSink sink = new CollectingSink(store, id, 0, 10, null);
    loader.read(id, 0, 10, false, false, sink);

    assertThat(sink.await()).isTrue();
    assertThat(sink.failure).isInstanceOf(NotFoundException.class).hasMessageContaining("not persisted");
    assertThat(loader.ufsBlockReads()).isZero();
  }

  @Test
  void read_ofABlockAlreadyInTheStore_readsItThere() throws Exception {
    UfsTestKit.put(store, block(0), fileRange(0, BLOCK));
    CollectingSink sink = new CollectingSink(store, block(0), 10, 10, null);
    loader.read(block(0), 10, 10, false, false, sink);

    assertThat(sink.await()).isTrue();
    assertThat(sink.servedFromStore).isTrue();
    assertThat(sink.received()).isEqualTo(fileRange(10, 10));
    assertThat(loader.ufsBlockReads()).isZero();
  }

  @Test
  void masterRefusingTheCommit_leavesNoBlock_andTheNextReadLoadsAgain() throws Exception {
    // The file leaves Strata (its under file system copy stays) while block 0 loads, its reader holding the load
    // after the first chunk: the master refuses the commit of a block of a file it no longer has.
    CountDownLatch gate = new CountDownLatch(1);
    CollectingSink sink = CollectingSink.holding(store, block(0), 0, 10, gate);
    loader.read(block(0), 0, 10, false, false, sink);
    await().atMost(Duration.ofSeconds(10)).until(() -> sink.held);
    master.fs().delete(path, false, true);
    gate.countDown();
    assertThat(sink.await()).isTrue();
    assertThat(sink.received()).isEqualTo(fileRange(0, 10));
    await().atMost(Duration.ofSeconds(10)).until(() -> loader.loadsInFlight() == 0);
    assertThat(worker.commitsSent()).isEqualTo(1);
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(master.fs().blockMaster().getBlock(block(0))).isNull();

    // Loaded again by a look-up, as a new file: its block loads again.
    long reloaded = BlockId.of(master.fs().getStatus(path).id(), 0);
    assertThat(reloaded).isNotEqualTo(block(0));
    CollectingSink again = new CollectingSink(store, reloaded, 0, 10, null);
    loader.read(reloaded, 0, 10, false, false, again);
    assertThat(again.await()).isTrue();
    assertThat(again.received()).isEqualTo(fileRange(0, 10));
    await().atMost(Duration.ofSeconds(10)).until(() -> master.listed(reloaded).equals(Map.of(reloaded, "MEM")));
    assertThat(store.committedBlocks()).extracting(BlockStore.BlockMeta::blockId).containsExactly(reloaded);
    assertThat(loader.ufsBlockReads()).isEqualTo(2);
  }
}
