package io.strata.worker.store;

import static io.strata.worker.store.StoreFixture.content;
import static io.strata.worker.store.StoreFixture.read;
import static io.strata.worker.store.StoreFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.AlreadyExistsException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A removal whose unlink hangs (a dying disk) holds neither the store's monitor nor anything of the other dirs:
 * reports, reads and writes of other blocks go on meanwhile, and the removed block's id stays claimed until its files
 * are gone, so no new copy can start at the path the unlink is about to clear. A real store on real dirs; the unlink
 * is held by a latch.
 */
class RemovalOutsideTheMonitorTest {
  @TempDir
  Path root;

  /** The shared hanging unlink of block file "1", whose next dir sync fails if asked. */
  private static final class FailingSync extends HangingUnlink {
    final java.util.concurrent.atomic.AtomicBoolean failSync = new java.util.concurrent.atomic.AtomicBoolean();

    FailingSync() {
      super("1");
    }

    @Override
    public void syncDir(Path dir) throws IOException {
      if (failSync.getAndSet(false)) {
        throw new IOException("sync failed (test)");
      }
      super.syncDir(dir);
    }
  }


  @Test
  void aHangingUnlink_blocksNothingElse_andKeepsTheIdClaimedUntilItEnds() throws Exception {
    HangingUnlink holding = new HangingUnlink("1");
    CountDownLatch unlinking = holding.unlinking;
    CountDownLatch release = holding.release;
    TieredBlockStore store = StoreFixture.builder().tier("SSD", 1 << 20, root.resolve("a"), root.resolve("b"))
        .durability(holding).build();
    write(store, 1, 1000);
    write(store, 2, 1000);

    CompletableFuture<Boolean> removal = CompletableFuture.supplyAsync(() -> {
      try {
        return store.remove(1);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    });
    assertThat(unlinking.await(10, TimeUnit.SECONDS)).isTrue();
    // The store answers meanwhile (each call would wait for ever on a held monitor).
    CompletableFuture<Void> others = CompletableFuture.runAsync(() -> {
      try {
        assertThat(store.usedBytes()).isEqualTo(1000);
        assertThat(read(store, 2)).isEqualTo(content(2, 1000));
        write(store, 3, 500);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    });
    others.get(10, TimeUnit.SECONDS);
    assertThatThrownBy(() -> store.createTemp(1, 1000)).isInstanceOf(AlreadyExistsException.class)
        .hasMessageContaining("being written (or removed)");

    release.countDown();
    assertThat(removal.get(10, TimeUnit.SECONDS)).isTrue();
    write(store, 1, 700); // a new copy once the old one's files are gone: it stays whole
    assertThat(read(store, 1)).isEqualTo(content(1, 700));
  }

  /**
   * A commit that fails after its names were made (the dir's sync failed) unlinks them outside the store's monitor as
   * a removal does: while that unlink hangs, other blocks are read and written, and the id stays claimed. Before, the
   * unlink ran under the monitor and held every dir.
   */
  @Test
  void aFailedCommitsHangingUnlink_blocksNothingElse_andKeepsTheIdClaimedUntilItEnds() throws Exception {
    FailingSync holding = new FailingSync();
    CountDownLatch unlinking = holding.unlinking;
    CountDownLatch release = holding.release;
    java.util.concurrent.atomic.AtomicBoolean failSync = holding.failSync;
    TieredBlockStore store = StoreFixture.builder().tier("SSD", 1 << 20, root.resolve("a"), root.resolve("b"))
        .durability(holding).build();
    write(store, 2, 1000);
    failSync.set(true);
    CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> {
      try {
        write(store, 1, 1000);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    });
    assertThat(unlinking.await(10, TimeUnit.SECONDS)).as("the failed commit unlinks its names").isTrue();
    CompletableFuture<Void> others = CompletableFuture.runAsync(() -> {
      try {
        assertThat(read(store, 2)).isEqualTo(content(2, 1000));
        write(store, 3, 500);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    });
    others.get(10, TimeUnit.SECONDS);
    assertThatThrownBy(() -> store.createTemp(1, 1000)).isInstanceOf(AlreadyExistsException.class);

    release.countDown();
    assertThatThrownBy(() -> commit.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("sync failed (test)");
    write(store, 1, 700); // the retry's copy, once the failed one's names are gone: it stays whole
    assertThat(read(store, 1)).isEqualTo(content(1, 700));
  }

  /**
   * The last reader of a block removed while it read does not unlink on its own thread (a network thread: a transfer's
   * event loop releases its file region): its close returns while the removal's unlink hangs on the store's thread.
   */
  @Test
  void theLastReadersClose_leavesTheDeferredRemovalsUnlinkToTheStoresThread() throws Exception {
    HangingUnlink holding = new HangingUnlink("1");
    CountDownLatch unlinking = holding.unlinking;
    CountDownLatch release = holding.release;
    TieredBlockStore store = StoreFixture.builder().tier("SSD", 1 << 20, root.resolve("a"))
        .durability(holding).build();
    write(store, 1, 1000);
    BlockStore.ReadHandle reader = store.openForRead(1, false);
    assertThat(store.remove(1)).isTrue(); // deferred: the reader holds the block
    Thread readerThread = Thread.currentThread();
    CompletableFuture.runAsync(reader::close).get(10, TimeUnit.SECONDS); // returns, though the unlink hangs
    assertThat(unlinking.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(holding.unlinker()).isNotEqualTo(readerThread);
    assertThat(holding.unlinker().getName()).startsWith("worker-store-deferred-removals");
    write(store, 2, 500); // the store goes on meanwhile
    release.countDown();
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(store.committedBlocks()).extracting(BlockStore.BlockMeta::blockId).containsExactly(2L));
  }

  /** A deferred removal hung on one dir's disk holds up that dir's removals only: another dir's go on. */
  @Test
  void aHungDeferredRemoval_holdsUpOnlyItsOwnDirsRemovals() throws Exception {
    HangingUnlink holding = new HangingUnlink("1");
    TieredBlockStore store = StoreFixture.builder().tier("SSD", 1 << 20, root.resolve("a"), root.resolve("b"))
        .durability(holding).build();
    for (long id = 1; id <= 6; id++) {
      write(store, id, 100);
    }
    long other = java.util.stream.LongStream.rangeClosed(2, 6).filter(id -> store.dirOf(id) != store.dirOf(1))
        .findFirst().orElseThrow(); // the allocator spreads the blocks over both dirs
    BlockStore.ReadHandle r1 = store.openForRead(1, false);
    BlockStore.ReadHandle r2 = store.openForRead(other, false);
    assertThat(store.remove(1)).isTrue();
    assertThat(store.remove(other)).isTrue();
    r1.close(); // block 1's unlink hangs on its dir's lane
    assertThat(holding.unlinking.await(10, TimeUnit.SECONDS)).isTrue();
    r2.close();
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(store.committedBlocks()).extracting(BlockStore.BlockMeta::blockId).doesNotContain(other));
    holding.release.countDown();
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(store.committedBlocks()).extracting(BlockStore.BlockMeta::blockId).doesNotContain(1L, other));
  }
}
