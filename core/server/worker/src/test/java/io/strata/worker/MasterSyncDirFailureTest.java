package io.strata.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.master.MasterConnection;
import io.strata.common.net.WorkerAddress;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.Durability;
import io.strata.worker.store.LruAnnotator;
import io.strata.worker.store.MaxFreeAllocator;
import io.strata.worker.store.StoreEvents;
import io.strata.worker.store.StoreHooks;
import io.strata.worker.store.TierSpec;
import io.strata.worker.store.TieredBlockStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A dir's report of its lost blocks crossing a move's announcement of the same block, in the worker's master sync.
 * Block three, in the HDD, is promoted into the SSD while one of the two dirs fails:
 * <ul>
 *   <li>the HDD (the source) fails once the copy has its name in the SSD: the move keeps that whole copy as the block
 *       (adopts it) and announces it as moved, while the dir's failure reports it lost. The sync asks the store whether
 *       it holds a lost block before it queues the loss; an adoption between that look-up and the queueing had its
 *       announcement cancelled by the loss (or, announced in a beat before the loss, undone by it): the master no
 *       longer listed a block the worker holds, and would never hear of it again short of a registration.
 *   <li>the SSD (the target) fails right after the move listed the block there, before the move's announcement: the
 *       loss is reported first, and the late announcement listed a lost block again.
 * </ul>
 * The sync against a real master in this JVM on loopback ({@link InProcessMaster}; it applies a beat's removals
 * before its additions), over a real store; the blocks are of persisted files in the master's under file system,
 * cached by the worker. Each crossing is made by hooks (a sync of the move, the sync's look-up in the store, the
 * store's event), not by timing.
 */
class MasterSyncDirFailureTest {
  private static final int BLOCK = 1000;

  @TempDir
  Path root;

  private Path fast;
  private Path slow;
  private InProcessMaster master;
  /** Blocks of three files: {@code one} and {@code two} fill the SSD, so {@code three} lands in the HDD. */
  private long one;
  private long two;
  private long three;
  private MasterConnection connection;
  private MasterSync sync;
  private TieredBlockStore store;
  /** Runs once on the mover's thread after the sync of the SSD's blocks/ (the copy has its name there), if set. */
  private volatile Runnable afterCopyNamed;
  /** Runs once when the store says block three moved, before the sync hears it, if set. */
  private volatile Runnable beforeMovedEvent;
  /** Runs once after the sync's look-up of block three found nothing, before it answers, if set. */
  private volatile Runnable afterLookupMissed;

  @BeforeEach
  void start() throws Exception {
    fast = root.resolve("ssd");
    slow = root.resolve("hdd");
    Durability hooked = new Durability() {
      @Override
      public void syncFile(FileChannel channel) throws IOException {
        FSYNC.syncFile(channel);
      }

      @Override
      public void syncDir(Path dir) throws IOException {
        FSYNC.syncDir(dir);
        Runnable r = afterCopyNamed;
        if (r != null && dir.startsWith(fast)) {
          afterCopyNamed = null;
          r.run();
        }
      }
    };
    master = new InProcessMaster(root.resolve("master"), Clock.systemUTC());
    one = master.persistedBlock("one", BLOCK);
    two = master.persistedBlock("two", BLOCK);
    three = master.persistedBlock("three", BLOCK);
    connection = new MasterConnection(master.clientConf());
    sync = new MasterSync(connection, new WorkerAddress("localhost", 1), 10_000, Clock.systemUTC(), () -> { }, "",
        4 << 20);
    StoreEvents events = new StoreEvents() {
      @Override
      public void blockRemoved(long blockId) {
        sync.blockRemoved(blockId);
      }

      @Override
      public void blockMoved(long blockId, long length, String tier) {
        Runnable r = beforeMovedEvent;
        if (r != null && blockId == three) {
          beforeMovedEvent = null;
          r.run();
        }
        sync.blockMoved(blockId, length, tier);
      }

      @Override
      public void dirFailed(String path, List<Long> lostBlocks) {
        sync.dirFailed(path, lostBlocks);
      }

      @Override
      public void allDirsFailed() {
        sync.allDirsFailed();
      }
    };
    store = new TieredBlockStore(List.of(new TierSpec("SSD", List.of(new TierSpec.Dir(fast, 2 * BLOCK))),
        new TierSpec("HDD", List.of(new TierSpec.Dir(slow, 10 * BLOCK)))), new MaxFreeAllocator(), new LruAnnotator(),
        events, Clock.systemUTC(), hooked);
    sync.attach(new LookupHook(store), null);
    write(one);
    write(two); // the SSD is full
    write(three); // so this one lands in the HDD
    store.remove(one);
    store.remove(two); // room in the SSD again
    sync.tick(); // registers
    sync.tick(); // and reports the removals
    assertThat(master.listed(one, two, three)).isEqualTo(Map.of(three, "HDD"));
  }

  @AfterEach
  void stop() {
    if (sync != null) {
      sync.close();
      connection.close();
    }
    if (master != null) {
      master.close();
    }
  }

  private void write(long id) throws IOException {
    BlockStore.TempBlock t = store.createTemp(id, BLOCK);
    t.append(ByteBuffer.wrap(content(id)));
    store.commit(t);
  }

  private static byte[] content(long id) {
    byte[] b = new byte[BLOCK];
    new java.util.Random(id).nextBytes(b);
    return b;
  }

  private static void deleteTree(Path p) throws IOException {
    try (Stream<Path> s = Files.walk(p)) {
      for (Path f : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(f);
      }
    }
  }

  private byte[] readThree() throws IOException {
    try (BlockStore.ReadHandle h = store.openForRead(three, false)) {
      return java.nio.channels.Channels.newInputStream(h.channel()).readAllBytes();
    }
  }

  /**
   * The HDD fails once the promotion's copy has its name in the SSD; the sync's look-up of block three (not held: the
   * failure took it out of the index) is answered only after the move adopted the copy and announced it, so the
   * adoption crosses the report of the loss. With {@code beatBetween}, a heartbeat carries the announcement before the
   * loss is queued.
   */
  private void adoptionCrossesTheLossReport(boolean beatBetween) throws Exception {
    CountDownLatch copyNamed = new CountDownLatch(1);
    CountDownLatch failed = new CountDownLatch(1);
    afterCopyNamed = () -> {
      copyNamed.countDown();
      await(failed); // the HDD fails and its report of block three is under way on the test's thread
    };
    CompletableFuture<Void> promotion = CompletableFuture.runAsync(() -> {
      try (BlockStore.ReadHandle h = store.openForRead(three, true)) { // promotes: a move into the SSD
        assertThat(h.meta().tier()).isEqualTo("SSD");
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    assertThat(copyNamed.await(10, TimeUnit.SECONDS)).isTrue();
    afterLookupMissed = () -> {
      failed.countDown();
      try {
        promotion.get(10, TimeUnit.SECONDS); // the move adopted the copy and announced it
      } catch (Exception e) {
        throw new AssertionError(e);
      }
      if (beatBetween) {
        sync.tick();
        assertThat(master.listed(one, two, three)).as("the announcement went first").isEqualTo(Map.of(three, "SSD"));
      }
    };
    deleteTree(slow);
    StoreHooks.failDir(store, slow); // reports block three lost, on this thread
    assertThat(afterLookupMissed).as("the look-up was answered after the adoption").isNull();
    promotion.get(10, TimeUnit.SECONDS);

    // What holds the bytes: the move's copy in the SSD, kept as block three; the master must list it there.
    assertThat(store.get(three).tier()).isEqualTo("SSD");
    assertThat(readThree()).isEqualTo(content(three));
    sync.tick();
    sync.tick();
    assertThat(master.listed(one, two, three)).isEqualTo(Map.of(three, "SSD"));
  }

  @Test
  void anAdoptionCrossingTheLossReport_staysListed() throws Exception {
    adoptionCrossesTheLossReport(false);
  }

  @Test
  void anAdoptionAnnouncedInABeatBeforeTheLossIsQueued_staysListed() throws Exception {
    adoptionCrossesTheLossReport(true);
  }

  /** A move's announcement that comes after its target dir reported the block lost does not list it again. */
  @Test
  void aMoveAnnouncedAfterItsTargetDirReportedTheBlockLost_isNotListedAgain() throws Exception {
    beforeMovedEvent = () -> {
      try {
        deleteTree(fast); // the block is listed in the SSD now; the SSD's disk goes
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      StoreHooks.failDir(store, fast); // reports block three lost, before the move's event
    };
    assertThatThrownBy(() -> store.openForRead(three, true)).isInstanceOf(NotFoundException.class);
    assertThat(beforeMovedEvent).isNull();

    // Nothing holds the bytes: the move deleted the HDD's copy once the SSD's was listed, and the SSD failed.
    assertThatThrownBy(() -> store.get(three)).isInstanceOf(NotFoundException.class);
    sync.tick();
    sync.tick();
    assertThat(master.listed(one, two, three)).isEmpty();
  }

  private static void await(CountDownLatch l) {
    try {
      if (!l.await(10, TimeUnit.SECONDS)) {
        throw new AssertionError("timed out");
      }
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /** The store as the sync sees it, whose look-up of block three runs {@link #afterLookupMissed} when it misses. */
  private final class LookupHook implements BlockStore {
    private final BlockStore s;

    LookupHook(BlockStore s) {
      this.s = s;
    }

    @Override
    public BlockMeta get(long blockId) throws StrataException {
      try {
        return s.get(blockId);
      } catch (NotFoundException e) {
        Runnable r = afterLookupMissed;
        if (r != null && blockId == three) {
          afterLookupMissed = null;
          r.run();
        }
        throw e;
      }
    }

    @Override
    public TempBlock createTemp(long blockId, long maxLength) throws StrataException {
      return s.createTemp(blockId, maxLength);
    }

    @Override
    public TempBlock createReserved(long blockId, long maxLength, long waitMs) throws StrataException {
      return s.createReserved(blockId, maxLength, waitMs);
    }

    @Override
    public TempBlock reserved(long blockId) throws StrataException {
      return s.reserved(blockId);
    }

    @Override
    public void markEvictable(Collection<Long> blockIds) {
      s.markEvictable(blockIds);
    }

    @Override
    public long awaitedBytes() {
      return s.awaitedBytes();
    }

    @Override
    public BlockMeta commit(TempBlock temp) throws IOException {
      return s.commit(temp);
    }

    @Override
    public void abort(TempBlock temp) {
      s.abort(temp);
    }

    @Override
    public void abortWritesOf(Collection<Long> fileIds) {
      s.abortWritesOf(fileIds);
    }

    @Override
    public ReadHandle openForRead(long blockId, boolean promote) throws IOException {
      return s.openForRead(blockId, promote);
    }

    @Override
    public boolean remove(long blockId) throws IOException {
      return s.remove(blockId);
    }

    @Override
    public void pin(long blockId) {
      s.pin(blockId);
    }

    @Override
    public void unpin(long blockId) {
      s.unpin(blockId);
    }

    @Override
    public List<BlockMeta> committedBlocks() {
      return s.committedBlocks();
    }

    @Override
    public long capacityBytes() {
      return s.capacityBytes();
    }

    @Override
    public long usedBytes() {
      return s.usedBytes();
    }

    @Override
    public List<DirReport> dirReports() {
      return s.dirReports();
    }
  }
}
