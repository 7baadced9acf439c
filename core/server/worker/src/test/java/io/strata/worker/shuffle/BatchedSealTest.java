package io.strata.worker.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.id.BlockId;
import io.strata.common.shuffle.BatchHeader;
import io.strata.worker.rpc.Committer;
import io.strata.worker.store.Allocator;
import io.strata.worker.store.BlockAnnotator;
import io.strata.worker.store.StoreEvents;
import io.strata.worker.store.TierSpec;
import io.strata.worker.store.TieredBlockStore;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A seal request commits every copy's blocks at the master in one call ({@link Committer#commitAll}): a copy whose
 * block the master refuses fails alone, with every block of it removed from the store (the master does not list
 * them), while the other copies are sealed with their blocks committed; sealing the request again answers the same.
 * A real one-tier block store in a temp dir, the seal steps on a real pool; the master's side is a committer that
 * records what it is asked and refuses one file's blocks.
 */
class BatchedSealTest {
  @TempDir
  Path dir;
  private final ExecutorService pool = Executors.newFixedThreadPool(2);

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  /** Records each commitAll call and refuses every block of file {@code refusedFile}. */
  private static final class Master implements Committer {
    final List<List<Commit>> calls = new ArrayList<>();
    final long refusedFile;

    Master(long refusedFile) {
      this.refusedFile = refusedFile;
    }

    @Override
    public void commit(long blockId, long length, String tier) {
      throw new UnsupportedOperationException("one call per request is expected, not one per block");
    }

    @Override
    public synchronized List<Exception> commitAll(List<Commit> commits) {
      calls.add(List.copyOf(commits));
      List<Exception> out = new ArrayList<>();
      for (Commit c : commits) {
        out.add(BlockId.fileId(c.blockId()) == refusedFile
            ? new FailedPreconditionException("File " + refusedFile + " is already complete") : null);
      }
      return out;
    }
  }

  @Test
  void oneMasterCallCommitsEveryCopy_andARefusedCopyFailsAlone_withItsBlocksRemoved() throws Exception {
    TieredBlockStore blocks = new TieredBlockStore(List.of(new TierSpec("MEM", List.of(new TierSpec.Dir(dir,
        1 << 20)))), Allocator.create("MaxFree"), BlockAnnotator.create("LRU"), StoreEvents.NONE, Clock.systemUTC());
    Master master = new Master(22);
    ShuffleStore store = new ShuffleStore(blocks, master, null, 1 << 20, pool, 64 << 20, 256L << 20, 1L << 30);
    List<Long> files = List.of(21L, 22L, 23L);
    List<ShuffleStore.PartitionSpec> specs = new ArrayList<>();
    for (int p = 0; p < files.size(); p++) {
      // Blocks of 100 bytes: each copy below takes two.
      specs.add(new ShuffleStore.PartitionSpec("app", 5, p, files.get(p), 100, null));
    }
    store.open(specs);
    long[] lengths = new long[files.size()];
    for (int p = 0; p < files.size(); p++) {
      for (int i = 0; i < 3; i++) {
        byte[] b = ("partition " + p + " batch " + i + " of map 0").getBytes(StandardCharsets.UTF_8);
        ShuffleStore.Batch batch = new ShuffleStore.Batch(p, files.get(p), 0, 9, BatchHeader.batchId(i, i == 2),
            b.length, BatchHeader.crc32c(b, 0, b.length), ByteBuffer.wrap(b));
        long[] at = new long[1];
        store.append(List.of(store.check("app", 5, batch)), List.of(batch), at);
        lengths[p] += BatchHeader.BYTES + b.length;
      }
    }
    List<ShuffleStore.Sealed> out = store.seal("app", 5, files, false, List.of(), List.of());
    assertThat(master.calls).as("master calls").hasSize(1);
    assertThat(master.calls.get(0)).as("every block of the three copies, in one call").hasSize(6);
    assertThat(out).extracting(ShuffleStore.Sealed::fileId).containsExactly(21L, 22L, 23L);
    assertThat(out.get(0).error()).isNull();
    assertThat(out.get(0).length()).isEqualTo(lengths[0]);
    assertThat(out.get(2).error()).isNull();
    assertThat(out.get(2).length()).isEqualTo(lengths[2]);
    assertThat(out.get(1).error()).contains("File 22 is already complete");
    assertThat(out.get(1).committed()).isFalse();
    // What holds the bytes: the sealed copies' blocks, committed in the store; none of the refused copy's.
    for (long f : List.of(21L, 23L)) {
      for (int i = 0; i < 2; i++) {
        assertThat(blocks.get(BlockId.of(f, i)).length()).isPositive();
      }
    }
    for (int i = 0; i < 2; i++) {
      long id = BlockId.of(22L, i);
      assertThatThrownBy(() -> blocks.get(id)).as("block %d of the refused copy", id).isNotNull();
    }
    // Sealing again answers the same, without asking the master again.
    List<ShuffleStore.Sealed> again = store.seal("app", 5, files, false, List.of(), List.of());
    assertThat(master.calls).hasSize(1);
    assertThat(again.get(0).length()).isEqualTo(lengths[0]);
    assertThat(again.get(1).error()).contains("File 22 is already complete");
  }
}
