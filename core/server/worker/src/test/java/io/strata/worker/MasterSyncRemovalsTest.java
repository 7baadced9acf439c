package io.strata.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.common.master.MasterConnection;
import io.strata.common.net.WorkerAddress;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.Durability;
import io.strata.worker.store.LruAnnotator;
import io.strata.worker.store.MaxFreeAllocator;
import io.strata.worker.store.TierSpec;
import io.strata.worker.store.TieredBlockStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The removals a heartbeat reply asks for run off the heartbeat thread: an unlink that hangs (a dying disk) holds
 * neither the heartbeat that asked for it nor the ones after it, which the master would otherwise miss until it
 * declared the worker lost. The worker's master sync against a {@link FakeMaster} on a real gRPC port, over a real
 * store whose unlink of block 5's file is held by a latch.
 */
class MasterSyncRemovalsTest {
  private static final int BLOCK = 1000;

  @TempDir
  Path root;

  private final CountDownLatch unlinking = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);
  private final AtomicInteger unlinksOf5 = new AtomicInteger();
  private FakeMaster master;
  private MasterConnection connection;
  private MasterSync sync;
  private TieredBlockStore store;

  @BeforeEach
  void start() throws IOException {
    Durability holding = new Durability() {
      @Override
      public void syncFile(FileChannel channel) throws IOException {
        FSYNC.syncFile(channel);
      }

      @Override
      public void syncDir(Path dir) throws IOException {
        FSYNC.syncDir(dir);
      }

      @Override
      public void unlink(Path file) throws IOException {
        if (file.getFileName().toString().equals("5")) {
          unlinksOf5.incrementAndGet();
          unlinking.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            throw new IOException(e);
          }
        }
        Durability.super.unlink(file);
      }
    };
    master = new FakeMaster();
    connection = new MasterConnection(master.clientConf());
    sync = new MasterSync(connection, new WorkerAddress("localhost", 1), 10_000, Clock.systemUTC(), () -> { }, "",
        4 << 20);
    store = new TieredBlockStore(List.of(new TierSpec("SSD", List.of(new TierSpec.Dir(root.resolve("ssd"), 1 << 20)))),
        new MaxFreeAllocator(), new LruAnnotator(), sync, Clock.systemUTC(), holding);
    sync.attach(store, null);
  }

  @AfterEach
  void stop() {
    release.countDown();
    sync.close();
    connection.close();
    master.close();
  }

  private static void write(BlockStore s, long id) throws IOException {
    BlockStore.TempBlock t = s.createTemp(id, BLOCK);
    t.append(ByteBuffer.wrap(new byte[BLOCK]));
    s.commit(t);
  }

  /** One heartbeat round, on another thread: it must end within 10 s, whatever the removals it starts do. */
  private void beat() throws Exception {
    try {
      CompletableFuture.runAsync(sync::tick).get(10, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("A heartbeat round did not end in 10 s: it waits for a removal's unlink", e);
    }
  }

  @Test
  void aRemovalWhoseUnlinkHangs_holdsNoHeartbeat_isQueuedOnce_andIsReportedOnceItEnds() throws Exception {
    write(store, 5);
    write(store, 6);
    beat(); // registers
    assertThat(master.listed()).containsOnlyKeys(5L, 6L);

    master.remove(5); // the file is deleted: every reply asks for block 5 until a heartbeat reports it removed
    beat();
    assertThat(unlinking.await(10, TimeUnit.SECONDS)).as("the removal reached its unlink").isTrue();
    // Heartbeats go on while the unlink hangs; each reply asks for block 5 again, which is not queued again.
    int before = master.heartbeats().size();
    for (int i = 0; i < 3; i++) {
      beat();
    }
    assertThat(master.heartbeats()).hasSize(before + 3);
    assertThat(master.heartbeats().get(before + 2).getRemovedBlockIdsList()).as("not removed yet").isEmpty();
    assertThat(sync.removalsQueued()).isEqualTo(1);
    assertThat(unlinksOf5).hasValue(1);
    assertThat(master.toRemove()).containsExactly(5L);

    release.countDown();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      beat();
      assertThat(master.toRemove()).as("a heartbeat reported block 5 removed").isEmpty();
    });
    assertThat(master.heartbeats()).anySatisfy(h -> assertThat(h.getRemovedBlockIdsList()).containsExactly(5L));
    assertThat(store.committedBlocks()).extracting(BlockStore.BlockMeta::blockId).containsExactly(6L);
    assertThat(Files.exists(root.resolve("ssd/blocks/5"))).isFalse();
    assertThat(master.listed()).containsOnlyKeys(6L);
    await().atMost(Duration.ofSeconds(10)).until(() -> sync.removalsQueued() == 0);
    assertThat(unlinksOf5).hasValue(1);
  }

  /**
   * A removal queued behind a hanging one whose block then left the store and was written and committed again (a new
   * copy, which the master takes in place of the removal) is moot when its turn comes: the new copy stays.
   */
  @Test
  void aQueuedRemovalOfABlockCommittedAgainMeanwhile_leavesTheNewCopy() throws Exception {
    write(store, 5);
    write(store, 6);
    beat(); // registers
    master.remove(5);
    master.remove(6);
    beat(); // 5's removal hangs in its unlink; 6's waits behind it
    assertThat(unlinking.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(sync.removalsQueued()).isEqualTo(2);

    store.remove(6); // gone by other means (a free's removal on another path, an eviction)
    write(store, 6); // and cached again: a new copy
    sync.commitBlock(6, BLOCK, "SSD");
    assertThat(master.toRemove()).containsExactly(5L);

    release.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> sync.removalsQueued() == 0);
    beat();
    assertThat(store.committedBlocks()).extracting(BlockStore.BlockMeta::blockId).containsExactly(6L);
    assertThat(master.listed()).containsOnlyKeys(6L);
    assertThat(master.toRemove()).isEmpty();
  }
}
