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

  @Test
  void aHangingUnlink_blocksNothingElse_andKeepsTheIdClaimedUntilItEnds() throws Exception {
    CountDownLatch unlinking = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Durability holding = new StoreFixture.Fsync() {
      @Override
      public void unlink(Path file) throws IOException {
        if (file.getFileName().toString().equals("1")) {
          unlinking.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            throw new IOException(e);
          }
        }
        super.unlink(file);
      }
    };
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
}
