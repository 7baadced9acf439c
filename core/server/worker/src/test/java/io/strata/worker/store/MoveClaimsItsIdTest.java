package io.strata.worker.store;

import static io.strata.worker.store.StoreFixture.blockFiles;
import static io.strata.worker.store.StoreFixture.content;
import static io.strata.worker.store.StoreFixture.deleteTree;
import static io.strata.worker.store.StoreFixture.read;
import static io.strata.worker.store.StoreFixture.sidecarFiles;
import static io.strata.worker.store.StoreFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.worker.store.BlockStore.ReadHandle;
import io.strata.worker.store.RecordingEvents.DirFailed;
import io.strata.worker.store.RecordingEvents.Moved;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A block's source dir fails in the middle of its move, which takes the block out of the index and frees its id; a
 * new copy of the block written then would land at the very paths the move renames into and deletes. The move keeps
 * the id claimed (as a removal does while it unlinks) until its last file operation, so that new copy is refused
 * until the move is done. Before, the new copy was committed in the move's target dir at the move's own path, and the
 * move then deleted it as a stale copy (the index kept pointing at the deleted file), or, when its copy failed,
 * deleted the new copy's checksum sidecar.
 *
 * <p>A real store: block 3 in the HDD is promoted into an SSD with room for two blocks, and the test's hook runs at
 * one step of the move (a sync of the {@link Durability}, on the mover's thread), where it fails the HDD and writes
 * block 3 again, as a client retrying it on this worker would. No timing: each step happens at its hook.
 */
class MoveClaimsItsIdTest {
  private static final int BLOCK = 1000;

  @TempDir
  Path root;

  private final RecordingEvents events = new RecordingEvents();
  private Path fast;
  private Path slow;
  private TieredBlockStore store;
  /** What the new write of block 3 at the hook came to: null, or why it was refused. */
  private Exception newCopyRefused;
  private boolean newCopyCommitted;

  /** What the hook does, once, on the mover's thread. */
  private void failSourceAndWriteAgain() throws IOException {
    deleteTree(slow); // the disk under the HDD dir is gone
    assertThat(store.dirFailed(store.tier(1).get(0), null)).isTrue();
    assertThat(events.dirFailures()).extracting(DirFailed::lostBlocks).containsExactly(List.of(3L));
    try {
      write(store, 3, BLOCK); // the SSD has room: without the claim this copy lands at the move's own path
      newCopyCommitted = true;
    } catch (AlreadyExistsException e) {
      newCopyRefused = e;
    }
  }

  /**
   * A store whose SSD dir (two blocks' room) is empty and whose HDD holds block 3, with {@code hook} armed on the
   * sync it names: {@code afterDirSync} the sync of the SSD's {@code blocks/} once the moved copy has its name there,
   * else the sync of the copied checksum sidecar in the SSD's {@code tmp/} (before the block's bytes are copied).
   */
  private void build(boolean afterDirSync) throws IOException {
    fast = root.resolve("ssd");
    slow = root.resolve("hdd");
    AtomicBoolean armed = new AtomicBoolean();
    Durability hooked = new StoreFixture.Fsync() {
      @Override
      public void syncFile(Path file) throws IOException {
        super.syncFile(file);
        if (!afterDirSync && file.startsWith(fast.resolve("tmp")) && armed.getAndSet(false)) {
          failSourceAndWriteAgain();
        }
      }

      @Override
      public void syncDir(Path dir) throws IOException {
        super.syncDir(dir);
        if (afterDirSync && dir.startsWith(fast) && armed.getAndSet(false)) {
          failSourceAndWriteAgain();
        }
      }
    };
    store = StoreFixture.builder().tier("SSD", 2 * BLOCK, fast).tier("HDD", 10 * BLOCK, slow).events(events)
        .durability(hooked).build();
    write(store, 1, BLOCK);
    write(store, 2, BLOCK); // the SSD is full
    write(store, 3, BLOCK); // so this one lands in the HDD
    assertThat(store.dirOf(3).root).isEqualTo(slow);
    store.remove(1);
    store.remove(2); // room in the SSD again, for the move and for one more block
    events.clear();
    armed.set(true);
  }

  @Test
  void aNewCopyWrittenWhenTheSourceFailsAfterTheCopyLanded_isRefused_andTheMovedCopyIsKept() throws IOException {
    build(true);

    byte[] seen;
    try (ReadHandle h = store.openForRead(3, true)) { // promotes: a move into the SSD
      seen = StoreFixture.readAll(h.channel());
    }

    assertThat(newCopyCommitted).as("a new copy of block 3 committed in the middle of its move").isFalse();
    assertThat(newCopyRefused).hasMessageContaining("being written (or removed)");
    // What holds the bytes: the move's copy in the SSD (copied, synced and named before the HDD failed), adopted as
    // the block, listed, read whole and announced; the HDD's copy went with its dir.
    assertThat(seen).isEqualTo(content(3, BLOCK));
    assertThat(store.dirOf(3).root).isEqualTo(fast);
    assertThat(read(store, 3)).isEqualTo(content(3, BLOCK));
    assertThat(blockFiles(fast)).extracting(p -> p.getFileName().toString()).containsExactly("3");
    assertThat(sidecarFiles(fast)).hasSize(1);
    assertThat(events.moved()).containsExactly(new Moved(3, BLOCK, "SSD"));
    assertThat(store.usedBytes()).isEqualTo(BLOCK);
    assertThatThrownBy(() -> store.createTemp(3, BLOCK)).isInstanceOf(AlreadyExistsException.class)
        .hasMessageContaining("already committed");
  }

  @Test
  void aNewCopyWrittenWhenTheSourceFailsBeforeItsBytesAreCopied_isRefused_andCanBeWrittenOnceTheMoveGaveUp()
      throws IOException {
    build(false);

    assertThatThrownBy(() -> store.openForRead(3, true)).isInstanceOf(io.strata.common.exception.NotFoundException.class)
        .hasMessageContaining("does not exist");

    assertThat(newCopyCommitted).as("a new copy of block 3 committed in the middle of its move").isFalse();
    assertThat(newCopyRefused).hasMessageContaining("being written (or removed)");
    // Nothing holds the bytes here any more: the HDD's copy went with its dir, and the move, unable to read it, left
    // nothing of its own (its sidecar copy was deleted, which is no other copy's since the id was claimed).
    assertThat(store.dirOf(3)).isNull();
    assertThat(blockFiles(fast)).isEmpty();
    assertThat(sidecarFiles(fast)).isEmpty();
    assertThat(store.usedBytes()).isZero();
    // The move gave the id back: the client's retry writes it, whole and with its checksums.
    write(store, 3, BLOCK);
    assertThat(store.dirOf(3).root).isEqualTo(fast);
    try (ReadHandle h = store.openForRead(3, false)) {
      assertThat(StoreFixture.readAll(h.channel())).isEqualTo(content(3, BLOCK));
      assertThat(h.checksums()).isNotEmpty();
    }
  }
}
