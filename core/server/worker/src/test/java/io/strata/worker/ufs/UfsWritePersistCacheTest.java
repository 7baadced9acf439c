package io.strata.worker.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.id.BlockId;
import io.strata.master.file.WriteType;
import io.strata.server.ufs.UfsManager;
import io.strata.worker.InProcessMaster;
import io.strata.worker.store.TieredBlockStore;
import io.strata.worker.ufs.MasterClient.BlockInfo;
import io.strata.worker.ufs.MasterClient.PersistCommand;
import io.strata.worker.ufs.MasterClient.PersistResult;
import io.strata.worker.ufs.MasterClient.UfsTarget;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * UFS file writes, persisting and background caching, over a real tiered store, against a real master in this JVM
 * (one for the class) through the worker's master sync registered there (one registration a test, taking the place of
 * the last). Write targets are the master's, for files created there with a write type that writes the UFS; blocks
 * to cache are of files persisted in its root under file system (a local dir); commits are checked in its block
 * master.
 */
class UfsWritePersistCacheTest {
  private static final int BLOCK = 32 * 1024;

  @RegisterExtension
  static final UfsTestKit.MasterPerClass MASTER = new UfsTestKit.MasterPerClass(BLOCK);
  private InProcessMaster master;

  @TempDir
  Path tmp;
  private InProcessMaster.Worker worker;
  private TieredBlockStore store;
  private MasterClient client;
  private UfsManager ufs;
  private PeerClient peers;

  /** Runs nothing until told; refuses work past its capacity, like a full bounded queue. */
  private static final class ManualExecutor implements Executor {
    final List<Runnable> tasks = new ArrayList<>();
    final int capacity;

    ManualExecutor(int capacity) {
      this.capacity = capacity;
    }

    @Override
    public synchronized void execute(Runnable r) {
      if (tasks.size() >= capacity) {
        throw new RejectedExecutionException("full");
      }
      tasks.add(r);
    }

    void runAll() {
      List<Runnable> now;
      synchronized (this) {
        now = new ArrayList<>(tasks);
        tasks.clear();
      }
      now.forEach(Runnable::run);
    }
  }

  @BeforeEach
  void setUp() {
    master = MASTER.get();
    worker = UfsTestKit.worker(master, tmp.resolve("store"), 16L * BLOCK);
    store = worker.store();
    client = worker.client();
    ufs = new UfsManager();
    peers = new PeerClient(8 << 20, 10_000);
  }

  @AfterEach
  void tearDown() {
    peers.close();
    ufs.close();
    worker.close();
  }

  private void putBlock(long blockId, byte[] data) throws Exception {
    UfsTestKit.put(store, blockId, data);
  }

  /** A file {@code path} written ASYNC_THROUGH, under way: its blocks go to the cache, persisted later. */
  private long asyncFile(String path) throws Exception {
    return UfsTestKit.fileBeingWritten(master, path, BLOCK, WriteType.ASYNC_THROUGH);
  }

  // ---------------------------------------------------------------- UFS file writes

  @Test
  void fileWrite_writesWhereTheMasterSays_andReturnsTheLength() throws Exception {
    long fileId = UfsTestKit.fileBeingWritten(master, "/a/written", BLOCK, WriteType.THROUGH);
    byte[] data = UfsTestKit.content(3, 100_000);

    java.util.concurrent.atomic.LongAdder counted = new java.util.concurrent.atomic.LongAdder();
    UfsFileWrite w = UfsFileWriter.open(client, ufs, fileId, counted);
    w.write(ByteBuffer.wrap(data, 0, 40_000));
    w.write(ByteBuffer.wrap(data, 40_000, 60_000).asReadOnlyBuffer()); // no backing array: copied through
    assertThat(w.complete()).isEqualTo(100_000);
    assertThat(counted.sum()).isEqualTo(100_000); // the worker's UFS bytes-written metric
    List<Path> written = UfsTestKit.copiesBeingWritten(master, "/a/written"); // where the master said
    assertThat(written).hasSize(1);
    assertThat(Files.readAllBytes(written.get(0))).isEqualTo(data);
    // The master takes the copy: it completes the file persisted, its copy moved into place.
    assertThat(master.fs().completeFile("/a/written", fileId, 100_000).persisted()).isTrue();
    assertThat(Files.readAllBytes(master.ufs().resolve("a/written"))).isEqualTo(data);
  }

  @Test
  void fileWrite_abort_deletesThePartialFile() throws Exception {
    long fileId = UfsTestKit.fileBeingWritten(master, "/b/partial", BLOCK, WriteType.CACHE_THROUGH);
    UfsFileWrite w = UfsFileWriter.open(client, ufs, fileId, new java.util.concurrent.atomic.LongAdder());
    w.write(ByteBuffer.wrap(new byte[1000]));
    assertThat(UfsTestKit.copiesBeingWritten(master, "/b/partial")).hasSize(1);

    w.abort();
    assertThat(UfsTestKit.copiesBeingWritten(master, "/b/partial")).isEmpty();
    assertThatThrownBy(() -> w.write(ByteBuffer.wrap(new byte[1]))).hasMessageContaining("already finished");
  }

  @Test
  void fileWrite_forAFileTheMasterDoesNotWriteThrough_fails() throws Exception {
    long cacheOnly = UfsTestKit.fileBeingWritten(master, "/c/cached", BLOCK, WriteType.MUST_CACHE);
    assertThatThrownBy(() -> UfsFileWriter.open(client, ufs, cacheOnly, new java.util.concurrent.atomic.LongAdder()))
        .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("writes no under file system copy");
    long deleted = UfsTestKit.fileBeingWritten(master, "/c/deleted", BLOCK, WriteType.THROUGH);
    master.fs().delete("/c/deleted", false);
    assertThatThrownBy(() -> UfsFileWriter.open(client, ufs, deleted, new java.util.concurrent.atomic.LongAdder()))
        .isInstanceOf(NotFoundException.class);
  }

  // ---------------------------------------------------------------- persisting

  @Test
  void persist_writesTheBlocksInOrder_andReportsTheLength() throws Exception {
    long file = asyncFile("/p/file");
    byte[] b0 = UfsTestKit.content(10, BLOCK);
    byte[] b1 = UfsTestKit.content(11, 1234);
    putBlock(BlockId.of(file, 0), b0);
    putBlock(BlockId.of(file, 1), b1);
    client.commitBlock(BlockId.of(file, 0), BLOCK, "MEM");
    client.commitBlock(BlockId.of(file, 1), 1234, "MEM");
    Path target = UfsTestKit.target(worker, file); // the master makes the copy's directory
    ManualExecutor ex = new ManualExecutor(10);
    FilePersister p = new FilePersister(store, client, ufs, peers, ex);
    PersistCommand cmd = new PersistCommand(file, new UfsTarget(target.toUri().toString(), Map.of()),
        List.of(new BlockInfo(BlockId.of(file, 0), BLOCK, List.of()),
            new BlockInfo(BlockId.of(file, 1), 1234, List.of())));

    assertThat(p.submit(cmd)).isTrue();
    assertThat(p.submit(cmd)).as("a second command for a file in hand is ignored").isFalse();
    assertThat(p.active()).isEqualTo(1);
    ex.runAll();

    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    expected.write(b0);
    expected.write(b1);
    assertThat(Files.readAllBytes(target)).isEqualTo(expected.toByteArray());
    List<PersistResult> results = p.results();
    assertThat(results).containsExactly(new PersistResult(file, true, "", BLOCK + 1234, cmd.target().uri()));
    assertThat(p.submit(cmd)).as("ignored while its result is undelivered").isFalse();
    p.acknowledge(results);
    assertThat(p.results()).isEmpty();
    assertThat(p.active()).isZero();
  }

  @Test
  void persist_ofABlockNoWorkerHas_failsAndDeletesThePartialFile() throws Exception {
    long file = asyncFile("/q/file");
    putBlock(BlockId.of(file, 0), UfsTestKit.content(12, BLOCK));
    client.commitBlock(BlockId.of(file, 0), BLOCK, "MEM");
    assertThat(master.listed(BlockId.of(file, 1))).as("no worker has block 1").isEmpty();
    Path target = UfsTestKit.target(worker, file); // the master makes the copy's directory
    FilePersister p = new FilePersister(store, client, ufs, peers, Runnable::run);
    PersistResult r = p.persist(new PersistCommand(file, new UfsTarget(target.toUri().toString(), Map.of()),
        List.of(new BlockInfo(BlockId.of(file, 0), BLOCK, List.of()),
            new BlockInfo(BlockId.of(file, 1), 10, List.of()))));

    assertThat(r.ok()).isFalse();
    assertThat(r.error()).contains("Block " + BlockId.of(file, 1)).contains("no other worker");
    assertThat(r.length()).isZero();
    assertThat(target).doesNotExist();
  }

  @Test
  void persist_intoADirectoryDeletedMeanwhile_failsAndDoesNotBringItBack() throws Exception {
    // The master made the directory; a delete of it raced the command. Creating the copy with its parents
    // would bring the directory back into the UFS, where the next listing would load it into Strata.
    long file = asyncFile("/gone/sub/file");
    putBlock(BlockId.of(file, 0), UfsTestKit.content(14, 100));
    Path target = UfsTestKit.target(worker, file);
    assertThat(target.getParent()).isDirectory();
    master.fs().delete("/gone", true); // and its directories in the UFS
    assertThat(master.ufs().resolve("gone")).doesNotExist();
    FilePersister p = new FilePersister(store, client, ufs, peers, Runnable::run);
    PersistResult r = p.persist(new PersistCommand(file, new UfsTarget(target.toUri().toString(), Map.of()),
        List.of(new BlockInfo(BlockId.of(file, 0), 100, List.of()))));

    assertThat(r.ok()).isFalse();
    assertThat(master.ufs().resolve("gone")).doesNotExist();
  }

  @Test
  void persist_ofABlockWithAnotherLengthHere_fails() throws Exception {
    long file = asyncFile("/r/file");
    putBlock(BlockId.of(file, 0), UfsTestKit.content(13, 100));
    Path target = UfsTestKit.target(worker, file); // the master makes the copy's directory
    FilePersister p = new FilePersister(store, client, ufs, peers, Runnable::run);
    PersistResult r = p.persist(new PersistCommand(file, new UfsTarget(target.toUri().toString(), Map.of()),
        List.of(new BlockInfo(BlockId.of(file, 0), 200, List.of()))));

    assertThat(r.ok()).isFalse();
    assertThat(r.error()).contains("has 100 bytes");
    assertThat(target).doesNotExist();
  }

  // ---------------------------------------------------------------- background caching

  @Test
  void cacheRequests_areDeduplicated_andRefusedWhenTheQueueIsFull() throws Exception {
    byte[] data = UfsTestKit.content(20, 5000);
    long id = BlockId.of(master.persistedFile("c/data", data), 0);
    long other = BlockId.of(master.persistedFile("c/other", data), 0);
    ManualExecutor ex = new ManualExecutor(1);
    UfsBlockLoader loader = new UfsBlockLoader(store, client, ufs, Runnable::run, 1024, 10_000);
    AsyncCacheManager cache = new AsyncCacheManager(store, client, peers, loader, ex);

    assertThat(cache.submit(id)).isTrue();
    assertThat(cache.submit(id)).as("already queued: accepted, no new work").isTrue();
    assertThat(ex.tasks).hasSize(1);
    assertThat(cache.submit(other)).as("queue full").isFalse();
    assertThat(cache.pending()).isEqualTo(1);

    ex.runAll();
    assertThat(UfsTestKit.readBlock(store, id)).isEqualTo(data);
    assertThat(master.fs().blockMaster().getBlock(id).length()).isEqualTo(5000);
    assertThat(master.listed(id, other)).isEqualTo(Map.of(id, "MEM"));
    assertThat(worker.commitsSent()).isEqualTo(1);
    assertThat(cache.pending()).isZero();
    assertThat(cache.submit(id)).as("already cached: accepted, no new work").isTrue();
    assertThat(ex.tasks).isEmpty();
    assertThat(loader.ufsBlockReads()).isEqualTo(1);
  }

  @Test
  void cacheNow_withNoCopyAndNoUfsSource_givesUp() throws Exception {
    long id = UfsTestKit.unpersistedBlockGoneHere(master, worker, "/s/cached", 100);
    UfsBlockLoader loader = new UfsBlockLoader(store, client, ufs, Runnable::run, 1024, 10_000);
    AsyncCacheManager cache = new AsyncCacheManager(store, client, peers, loader, Runnable::run);

    // The only location is this worker itself: it is skipped, never contacted.
    assertThat(client.blockSource(id).locations()).extracting(MasterClient.Location::workerId)
        .containsExactly(client.workerId());
    assertThat(cache.cacheNow(id)).isEqualTo(AsyncCacheManager.Result.NO_SOURCE);
    assertThat(store.committedBlocks()).isEmpty();
  }
}
