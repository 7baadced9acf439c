package io.strata.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.common.master.MasterConnection;
import io.strata.common.net.WorkerAddress;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.HangingUnlink;
import io.strata.worker.store.LruAnnotator;
import io.strata.worker.store.MaxFreeAllocator;
import io.strata.worker.store.MutableClock;
import io.strata.worker.store.TierSpec;
import io.strata.worker.store.TieredBlockStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The removals a heartbeat reply asks for run off the heartbeat thread: an unlink that hangs (a dying disk) holds
 * neither the heartbeat that asked for it nor the ones after it, which the master would otherwise miss until it
 * declared the worker lost. The worker's master sync against a real master in this JVM on loopback
 * ({@link InProcessMaster}), over a real store whose unlink of block {@code a}'s file is held by a latch. The blocks
 * are of two persisted files, /a and /b (in the master's under file system), cached by the worker; the master asks
 * for their removal because a file is deleted or freed there.
 */
class MasterSyncRemovalsTest {
  private static final int BLOCK = 1000;

  @TempDir
  Path root;

  /** The store's fsync, whose unlink of block a's file hangs. */
  private final HangingUnlink holding = new HangingUnlink();
  /** The master's clock, moved by each {@link #beat()}: the master's record of the worker shows which beat it heard. */
  private final MutableClock masterClock = new MutableClock(1_700_000_000_000L);
  private InProcessMaster master;
  private MasterConnection connection;
  private MasterSync sync;
  private TieredBlockStore store;
  /** The blocks of /a (whose unlink hangs) and /b. */
  private long a;
  private long b;

  @BeforeEach
  void start() throws Exception {
    master = new InProcessMaster(root.resolve("master"), masterClock);
    a = master.persistedBlock("a", BLOCK);
    b = master.persistedBlock("b", BLOCK);
    holding.hang(Long.toString(a));
    connection = new MasterConnection(master.clientConf());
    sync = new MasterSync(connection, new WorkerAddress("localhost", 1), 10_000, Clock.systemUTC(), () -> { }, "",
        4 << 20);
    store = new TieredBlockStore(List.of(new TierSpec("SSD", List.of(new TierSpec.Dir(root.resolve("ssd"), 1 << 20)))),
        new MaxFreeAllocator(), new LruAnnotator(), sync, Clock.systemUTC(), holding);
    sync.attach(store, null);
  }

  @AfterEach
  void stop() {
    holding.release.countDown();
    if (sync != null) {
      sync.close();
      connection.close();
    }
    if (master != null) {
      master.close();
    }
  }

  private static void write(BlockStore s, long id) throws IOException {
    BlockStore.TempBlock t = s.createTemp(id, BLOCK);
    t.append(ByteBuffer.wrap(new byte[BLOCK]));
    s.commit(t);
  }

  /**
   * One heartbeat round, on another thread, the master's clock a second on: it must end within 10 s, whatever the
   * removals it starts do.
   */
  private void beat() throws Exception {
    masterClock.advance(Duration.ofSeconds(1));
    try {
      CompletableFuture.runAsync(sync::tick).get(10, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("A heartbeat round did not end in 10 s: it waits for a removal's unlink", e);
    }
  }

  @Test
  void aRemovalWhoseUnlinkHangs_holdsNoHeartbeat_isQueuedOnce_andIsReportedOnceItEnds() throws Exception {
    write(store, a);
    write(store, b);
    beat(); // registers
    assertThat(master.listed(a, b)).containsOnlyKeys(a, b);

    master.fs().delete("/a", false); // every reply asks for block a until a heartbeat reports it removed
    assertThat(master.toRemove()).containsExactly(a);
    beat();
    assertThat(holding.unlinking.await(10, TimeUnit.SECONDS)).as("the removal reached its unlink").isTrue();
    // Heartbeats go on while the unlink hangs, and reach the master; each reply asks for block a again, which is not
    // queued again.
    for (int i = 0; i < 3; i++) {
      beat();
      assertThat(master.lastHeartbeatMs()).as("heartbeat %d reached the master", i).isEqualTo(masterClock.millis());
    }
    assertThat(master.toRemove()).as("not reported removed yet").containsExactly(a);
    assertThat(sync.removalsQueued()).isEqualTo(1);
    assertThat(holding.unlinks()).isEqualTo(1);

    holding.release.countDown();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      beat();
      assertThat(master.toRemove()).as("a heartbeat reported block a removed").isEmpty();
    });
    assertThat(store.committedBlocks()).extracting(BlockStore.BlockMeta::blockId).containsExactly(b);
    assertThat(Files.exists(root.resolve("ssd/blocks/" + a))).isFalse();
    assertThat(master.listed(a, b)).containsOnlyKeys(b);
    await().atMost(Duration.ofSeconds(10)).until(() -> sync.removalsQueued() == 0);
    assertThat(holding.unlinks()).isEqualTo(1);
  }

  /**
   * A removal queued behind a hanging one whose block then left the store and was written and committed again (a new
   * copy, which the master takes in place of the removal) is moot when its turn comes: the new copy stays.
   */
  @Test
  void aQueuedRemovalOfABlockCommittedAgainMeanwhile_leavesTheNewCopy() throws Exception {
    write(store, a);
    write(store, b);
    beat(); // registers
    master.fs().delete("/a", false);
    master.fs().free("/b", false, false); // its bytes stay in the under file system; the worker's copy goes
    assertThat(master.toRemove()).containsExactlyInAnyOrder(a, b);
    beat(); // a's removal hangs in its unlink; b's waits behind it
    assertThat(holding.unlinking.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(sync.removalsQueued()).isEqualTo(2);

    store.remove(b); // gone by other means (a free's removal on another path, an eviction)
    write(store, b); // and cached again: a new copy
    sync.commitBlock(b, BLOCK, "SSD");
    assertThat(master.toRemove()).as("the new copy took the place of its removal").containsExactly(a);

    holding.release.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> sync.removalsQueued() == 0);
    beat();
    assertThat(store.committedBlocks()).extracting(BlockStore.BlockMeta::blockId).containsExactly(b);
    assertThat(master.listed(a, b)).isEqualTo(Map.of(b, "SSD"));
    assertThat(master.toRemove()).isEmpty();
  }
}
