package io.strata.worker.store;

import static io.strata.worker.store.StoreFixture.content;
import static io.strata.worker.store.StoreFixture.read;
import static io.strata.worker.store.StoreFixture.tmpFiles;
import static io.strata.worker.store.StoreFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.worker.store.BlockStore.TempBlock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Temp blocks written from outside the store (short-circuit writes): space is granted through the
 * store's own accounting, a full dir refuses a grant with the store's message, and the store takes the
 * file only at exactly the length written and within the grant.
 */
class GrantedWriteTest {
  @TempDir
  Path root;

  private static void writeFile(TempBlock t, byte[] data) throws IOException {
    try (FileChannel ch = FileChannel.open(t.path(), StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.wrap(data);
      while (b.hasRemaining()) {
        ch.write(b, b.position());
      }
    }
  }

  /**
   * strata.worker.write.blocks.max: blocks written at once are bounded whatever their lengths (each holds a
   * descriptor), over streamed temps and whole-block reservations alike; one more is refused naming the key,
   * an aborted or committed one makes room, and a committed block's bytes stay readable.
   */
  @Test
  void blocksWrittenAtOnce_areBounded_andAnEndedOneMakesRoom() throws IOException {
    TieredBlockStore store = StoreFixture.builder().tier("MEM", 1 << 20, root.resolve("mem")).build();
    store.limitWrites(3, "strata.worker.write.blocks.max");
    TempBlock a = store.createTemp(11, 1);
    store.createReserved(12, 1, 0);
    TempBlock c = store.createTemp(13, 100);
    assertThatThrownBy(() -> store.createReserved(14, 1, 0)).isInstanceOf(ResourceExhaustedException.class)
        .hasMessageContaining("3 blocks are being written").hasMessageContaining("strata.worker.write.blocks.max=3");
    assertThatThrownBy(() -> store.createTemp(14, 1)).isInstanceOf(ResourceExhaustedException.class);
    assertThat(tmpFiles(root.resolve("mem"))).hasSize(3);

    store.abort(a);
    TempBlock d = store.createTemp(14, 1);
    assertThatThrownBy(() -> store.createTemp(15, 1)).isInstanceOf(ResourceExhaustedException.class);
    byte[] data = content(13, 100);
    c.append(ByteBuffer.wrap(data));
    store.commit(c);
    assertThat(read(store, 13)).isEqualTo(data);
    store.createTemp(15, 1);
    store.abort(d);
  }

  @Test
  void grants_areCountedAsUsed_cappedAtTheMaximum_andTheUnusedPartComesBackAtCommit() throws IOException {
    TieredBlockStore store = StoreFixture.builder().tier("MEM", 10_000, root.resolve("mem")).build();
    TempBlock t = store.createTemp(1, 5000);
    assertThat(store.usedBytes()).isZero();
    assertThat(t.grant(2000)).isEqualTo(2000);
    assertThat(store.usedBytes()).isEqualTo(2000);
    assertThat(t.grant(10_000)).isEqualTo(5000);
    assertThat(store.usedBytes()).isEqualTo(5000);

    writeFile(t, content(1, 3000));
    t.written(3000, sums(content(1, 3000)));
    assertThat(store.commit(t).length()).isEqualTo(3000);
    assertThat(store.usedBytes()).isEqualTo(3000);
    assertThat(read(store, 1)).isEqualTo(content(1, 3000));
  }

  @Test
  void theWritersChecksums_becomeTheBlocksStoredChecksums_oneChunkEach() throws IOException {
    TieredBlockStore store = StoreFixture.builder().tier("MEM", 1 << 20, root.resolve("mem")).build();
    int length = 2 * ChunkChecksums.CHUNK_BYTES + 100; // three chunks, the last partial
    byte[] data = content(5, length);
    TempBlock t = store.createTemp(5, length);
    t.grant(length);
    writeFile(t, data);
    assertThatThrownBy(() -> t.written(length, new int[2])).isInstanceOf(InvalidArgumentException.class)
        .hasMessage("Block 5: the writer sent 2 checksums for " + length + " bytes, which are 3 checksum chunks "
            + "of 65536 bytes");
    int[] sent = sums(data);
    t.written(length, sent);
    store.commit(t);
    try (BlockStore.ReadHandle r = store.openForRead(5, false)) {
      assertThat(r.checksums()).containsExactly(sent);
    }
    assertThat(sent[2]).isEqualTo(ChunkChecksums.crc(data, 2 * ChunkChecksums.CHUNK_BYTES, 100));
  }

  private static int[] sums(byte[] data) {
    return ChunkChecksums.of(java.nio.ByteBuffer.wrap(data));
  }

  @Test
  void grant_onAFullDir_isRefusedWithWhatHoldsTheSpace() throws IOException {
    TieredBlockStore store = StoreFixture.builder().tier("MEM", 4000, root.resolve("mem")).build();
    write(store, 1, 3000); // protected: its file is not persisted
    TempBlock t = store.createTemp(2, 2000);
    assertThat(t.grant(500)).isEqualTo(500);
    assertThatThrownBy(() -> t.grant(1000)).isInstanceOf(ResourceExhaustedException.class)
        .hasMessageContaining("Tier MEM").hasMessageContaining("is full")
        .hasMessageContaining("3000 bytes of blocks of files not yet persisted")
        .hasMessageContaining("block 2 needs 1000 more bytes");
    assertThat(store.usedBytes()).isEqualTo(3500);
    store.abort(t);
    assertThat(store.usedBytes()).isEqualTo(3000);
  }

  @Test
  void written_refusesMoreThanGranted_andALengthTheFileDoesNotHave() throws IOException {
    Path mem = root.resolve("mem");
    TieredBlockStore store = StoreFixture.builder().tier("MEM", 10_000, mem).build();
    TempBlock t = store.createTemp(3, 5000);
    t.grant(100);
    writeFile(t, content(3, 200));

    assertThatThrownBy(() -> t.written(200, sums(content(3, 200)))).isInstanceOf(FailedPreconditionException.class)
        .hasMessage("Block 3: the writer wrote 200 bytes but was granted only 100 (ask for space before writing)");
    assertThatThrownBy(() -> t.written(150, sums(content(3, 150)))).isInstanceOf(InvalidArgumentException.class)
        .hasMessage("Block 3: the writer says it wrote 150 bytes but its temp file holds 200");
    store.abort(t);
    assertThat(tmpFiles(mem)).isEmpty();
    assertThat(store.usedBytes()).isZero();
  }

  @Test
  void aBlockReservedWhole_isGrantedItsWholeLengthAtOnce() throws IOException {
    TieredBlockStore store = StoreFixture.builder().tier("MEM", 10_000, root.resolve("mem")).build();
    store.createReserved(4, 5000, 0);
    TempBlock t = store.reserved(4);
    assertThat(t.grant(0)).isEqualTo(5000);
    assertThat(t.grant(1000)).isEqualTo(5000);
    assertThat(store.usedBytes()).isEqualTo(5000);
  }
}
