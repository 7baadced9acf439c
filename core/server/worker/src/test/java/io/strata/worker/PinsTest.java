package io.strata.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.id.BlockId;
import io.strata.worker.store.BlockStore;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The master's pin list applied to the store's blocks. */
class PinsTest {
  /** A store that holds a list of block ids and records pins; nothing else. */
  private static final class PinRecordingStore implements BlockStore {
    final List<BlockMeta> blocks = new ArrayList<>();
    final Set<Long> pinned = new HashSet<>();

    @Override
    public TempBlock createTemp(long blockId, long maxLength) {
      throw new UnsupportedOperationException();
    }

    @Override
    public TempBlock createReserved(long blockId, long maxLength, long waitMs) {
      throw new UnsupportedOperationException();
    }

    @Override
    public TempBlock reserved(long blockId) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void markEvictable(java.util.Collection<Long> blockIds) {
      throw new UnsupportedOperationException();
    }

    @Override
    public long awaitedBytes() {
      return 0;
    }

    @Override
    public BlockMeta commit(TempBlock temp) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void abort(TempBlock temp) {
      throw new UnsupportedOperationException();
    }

    @Override
    public BlockMeta get(long blockId) {
      throw new UnsupportedOperationException();
    }

    @Override
    public ReadHandle openForRead(long blockId, boolean promote) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean remove(long blockId) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void pin(long blockId) {
      pinned.add(blockId);
    }

    @Override
    public void unpin(long blockId) {
      pinned.remove(blockId);
    }

    @Override
    public List<BlockMeta> committedBlocks() {
      return List.copyOf(blocks);
    }

    @Override
    public long capacityBytes() {
      return 0;
    }

    @Override
    public long usedBytes() {
      return 0;
    }

    @Override
    public List<DirReport> dirReports() {
      return List.of();
    }
  }

  @Test
  void update_pinsTheBlocksOfPinnedFiles_andUnpinsTheRest() {
    PinRecordingStore store = new PinRecordingStore();
    for (long file : new long[] {1, 2, 3}) {
      for (int i = 0; i < 2; i++) {
        store.blocks.add(new BlockStore.BlockMeta(BlockId.of(file, i), 10, "MEM"));
      }
    }
    Pins pins = new Pins();
    assertThat(pins.version()).isZero();

    pins.update(5, List.of(1L, 3L), store);
    assertThat(pins.version()).isEqualTo(5);
    assertThat(store.pinned).containsExactlyInAnyOrder(BlockId.of(1, 0), BlockId.of(1, 1), BlockId.of(3, 0),
        BlockId.of(3, 1));

    pins.update(6, List.of(2L), store);
    assertThat(store.pinned).containsExactlyInAnyOrder(BlockId.of(2, 0), BlockId.of(2, 1));
  }

  @Test
  void committed_pinsANewBlockOnlyWhenItsFileIsPinned() {
    PinRecordingStore store = new PinRecordingStore();
    Pins pins = new Pins();
    pins.update(1, List.of(4L), store);

    pins.committed(BlockId.of(4, 7), store);
    pins.committed(BlockId.of(5, 0), store);
    assertThat(store.pinned).containsExactly(BlockId.of(4, 7));
    assertThat(pins.isPinnedFile(4)).isTrue();
    assertThat(pins.isPinnedFile(5)).isFalse();
  }
}
