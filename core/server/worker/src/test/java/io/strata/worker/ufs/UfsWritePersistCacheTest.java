package io.strata.worker.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.NotFoundException;
import io.strata.common.id.BlockId;
import io.strata.server.ufs.UfsManager;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.TieredBlockStore;
import io.strata.worker.ufs.MasterClient.BlockInfo;
import io.strata.worker.ufs.MasterClient.BlockSource;
import io.strata.worker.ufs.MasterClient.PersistCommand;
import io.strata.worker.ufs.MasterClient.PersistResult;
import io.strata.worker.ufs.MasterClient.UfsSource;
import io.strata.worker.ufs.MasterClient.UfsTarget;
import io.strata.worker.ufs.UfsTestKit.FakeMaster;
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
import org.junit.jupiter.api.io.TempDir;

/** UFS file writes, persisting and background caching, over a local-dir UFS and a real tiered store. */
class UfsWritePersistCacheTest {
  private static final int BLOCK = 32 * 1024;

  @TempDir
  Path tmp;
  private TieredBlockStore store;
  private FakeMaster master;
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
    store = UfsTestKit.store(tmp.resolve("store"), 16L * BLOCK);
    master = new FakeMaster();
    ufs = new UfsManager();
    peers = new PeerClient(8 << 20, 10_000);
  }

  @AfterEach
  void tearDown() {
    peers.close();
    ufs.close();
  }

  private void putBlock(long blockId, byte[] data) throws Exception {
    BlockStore.TempBlock t = store.createTemp(blockId, data.length);
    t.append(ByteBuffer.wrap(data));
    store.commit(t);
  }

  // ---------------------------------------------------------------- UFS file writes

  @Test
  void fileWrite_writesWhereTheMasterSays_andReturnsTheLength() throws Exception {
    Path target = tmp.resolve("ufs/a/.strata_tmp_file");
    Files.createDirectories(target.getParent()); // the master makes the copy's directory
    master.targets.put(5L, new UfsTarget(target.toUri().toString(), Map.of()));
    byte[] data = UfsTestKit.content(3, 100_000);

    java.util.concurrent.atomic.LongAdder counted = new java.util.concurrent.atomic.LongAdder();
    UfsFileWrite w = UfsFileWriter.open(master, ufs, 5, counted);
    w.write(ByteBuffer.wrap(data, 0, 40_000));
    w.write(ByteBuffer.wrap(data, 40_000, 60_000).asReadOnlyBuffer()); // no backing array: copied through
    assertThat(w.complete()).isEqualTo(100_000);
    assertThat(counted.sum()).isEqualTo(100_000); // the worker's UFS bytes-written metric
    assertThat(Files.readAllBytes(target)).isEqualTo(data);
  }

  @Test
  void fileWrite_abort_deletesThePartialFile() throws Exception {
    Path target = tmp.resolve("ufs/b/partial");
    Files.createDirectories(target.getParent()); // the master makes the copy's directory
    master.targets.put(6L, new UfsTarget(target.toUri().toString(), Map.of()));
    UfsFileWrite w = UfsFileWriter.open(master, ufs, 6, new java.util.concurrent.atomic.LongAdder());
    w.write(ByteBuffer.wrap(new byte[1000]));
    assertThat(target).exists();

    w.abort();
    assertThat(target).doesNotExist();
    assertThatThrownBy(() -> w.write(ByteBuffer.wrap(new byte[1]))).hasMessageContaining("already finished");
  }

  @Test
  void fileWrite_forAFileTheMasterDoesNotWriteThrough_fails() {
    assertThatThrownBy(() -> UfsFileWriter.open(master, ufs, 99, new java.util.concurrent.atomic.LongAdder())).isInstanceOf(NotFoundException.class);
  }

  // ---------------------------------------------------------------- persisting

  @Test
  void persist_writesTheBlocksInOrder_andReportsTheLength() throws Exception {
    byte[] b0 = UfsTestKit.content(10, BLOCK);
    byte[] b1 = UfsTestKit.content(11, 1234);
    putBlock(BlockId.of(9, 0), b0);
    putBlock(BlockId.of(9, 1), b1);
    Path target = tmp.resolve("ufs/p/file.tmp");
    Files.createDirectories(target.getParent()); // the master makes the copy's directory
    ManualExecutor ex = new ManualExecutor(10);
    FilePersister p = new FilePersister(store, master, ufs, peers, ex);
    PersistCommand cmd = new PersistCommand(9, new UfsTarget(target.toUri().toString(), Map.of()),
        List.of(new BlockInfo(BlockId.of(9, 0), BLOCK, List.of()), new BlockInfo(BlockId.of(9, 1), 1234, List.of())));

    assertThat(p.submit(cmd)).isTrue();
    assertThat(p.submit(cmd)).as("a second command for a file in hand is ignored").isFalse();
    assertThat(p.active()).isEqualTo(1);
    ex.runAll();

    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    expected.write(b0);
    expected.write(b1);
    assertThat(Files.readAllBytes(target)).isEqualTo(expected.toByteArray());
    List<PersistResult> results = p.results();
    assertThat(results).containsExactly(new PersistResult(9, true, "", BLOCK + 1234, cmd.target().uri()));
    assertThat(p.submit(cmd)).as("ignored while its result is undelivered").isFalse();
    p.acknowledge(results);
    assertThat(p.results()).isEmpty();
    assertThat(p.active()).isZero();
  }

  @Test
  void persist_ofABlockNoWorkerHas_failsAndDeletesThePartialFile() throws Exception {
    putBlock(BlockId.of(8, 0), UfsTestKit.content(12, BLOCK));
    Path target = tmp.resolve("ufs/q/file.tmp");
    Files.createDirectories(target.getParent()); // the master makes the copy's directory
    FilePersister p = new FilePersister(store, master, ufs, peers, Runnable::run);
    PersistResult r = p.persist(new PersistCommand(8, new UfsTarget(target.toUri().toString(), Map.of()),
        List.of(new BlockInfo(BlockId.of(8, 0), BLOCK, List.of()), new BlockInfo(BlockId.of(8, 1), 10, List.of()))));

    assertThat(r.ok()).isFalse();
    assertThat(r.error()).contains("Block " + BlockId.of(8, 1)).contains("no other worker");
    assertThat(r.length()).isZero();
    assertThat(target).doesNotExist();
  }

  @Test
  void persist_intoADirectoryDeletedMeanwhile_failsAndDoesNotBringItBack() throws Exception {
    // The master made the directory; a delete of it raced the command. Creating the copy with its parents
    // would bring the directory back into the UFS, where the next listing would load it into Strata.
    putBlock(BlockId.of(6, 0), UfsTestKit.content(14, 100));
    Path target = tmp.resolve("ufs/gone/sub/file.tmp");
    FilePersister p = new FilePersister(store, master, ufs, peers, Runnable::run);
    PersistResult r = p.persist(new PersistCommand(6, new UfsTarget(target.toUri().toString(), Map.of()),
        List.of(new BlockInfo(BlockId.of(6, 0), 100, List.of()))));

    assertThat(r.ok()).isFalse();
    assertThat(tmp.resolve("ufs/gone")).doesNotExist();
  }

  @Test
  void persist_ofABlockWithAnotherLengthHere_fails() throws Exception {
    putBlock(BlockId.of(7, 0), UfsTestKit.content(13, 100));
    Path target = tmp.resolve("ufs/r/file.tmp");
    Files.createDirectories(target.getParent()); // the master makes the copy's directory
    FilePersister p = new FilePersister(store, master, ufs, peers, Runnable::run);
    PersistResult r = p.persist(new PersistCommand(7, new UfsTarget(target.toUri().toString(), Map.of()),
        List.of(new BlockInfo(BlockId.of(7, 0), 200, List.of()))));

    assertThat(r.ok()).isFalse();
    assertThat(r.error()).contains("has 100 bytes");
    assertThat(target).doesNotExist();
  }

  // ---------------------------------------------------------------- background caching

  @Test
  void cacheRequests_areDeduplicated_andRefusedWhenTheQueueIsFull() throws Exception {
    byte[] data = UfsTestKit.content(20, 5000);
    Path f = tmp.resolve("ufs/c/data");
    Files.createDirectories(f.getParent());
    Files.write(f, data);
    long id = BlockId.of(30, 0);
    master.sources.put(id, new BlockSource(id, 5000, List.of(),
        new UfsSource(f.toUri().toString(), Map.of(), 0, 5000)));
    ManualExecutor ex = new ManualExecutor(1);
    UfsBlockLoader loader = new UfsBlockLoader(store, master, ufs, Runnable::run, 1024, 10_000);
    AsyncCacheManager cache = new AsyncCacheManager(store, master, peers, loader, ex);

    assertThat(cache.submit(id)).isTrue();
    assertThat(cache.submit(id)).as("already queued: accepted, no new work").isTrue();
    assertThat(ex.tasks).hasSize(1);
    assertThat(cache.submit(BlockId.of(31, 0))).as("queue full").isFalse();
    assertThat(cache.pending()).isEqualTo(1);

    ex.runAll();
    assertThat(UfsTestKit.readBlock(store, id)).isEqualTo(data);
    assertThat(master.commits).containsExactly(id + ":5000:MEM");
    assertThat(cache.pending()).isZero();
    assertThat(cache.submit(id)).as("already cached: accepted, no new work").isTrue();
    assertThat(ex.tasks).isEmpty();
    assertThat(loader.ufsBlockReads()).isEqualTo(1);
  }

  @Test
  void cacheNow_withNoCopyAndNoUfsSource_givesUp() throws Exception {
    long id = BlockId.of(32, 0);
    master.sources.put(id, new BlockSource(id, 100, List.of(
        new MasterClient.Location(master.workerId, new io.strata.common.net.WorkerAddress("localhost", 1))), null));
    UfsBlockLoader loader = new UfsBlockLoader(store, master, ufs, Runnable::run, 1024, 10_000);
    AsyncCacheManager cache = new AsyncCacheManager(store, master, peers, loader, Runnable::run);

    // The only location is this worker itself: it is skipped, never contacted.
    assertThat(cache.cacheNow(id)).isEqualTo(AsyncCacheManager.Result.NO_SOURCE);
    assertThat(store.committedBlocks()).isEmpty();
  }
}
