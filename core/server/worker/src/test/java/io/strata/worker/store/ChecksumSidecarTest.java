package io.strata.worker.store;

import static io.strata.worker.store.StoreFixture.blockFiles;
import static io.strata.worker.store.StoreFixture.content;
import static io.strata.worker.store.StoreFixture.sidecarFiles;
import static io.strata.worker.store.StoreFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.CorruptBlockException;
import io.strata.worker.store.BlockStore.ReadHandle;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checksum sidecar of each block in a real store on disk: written at commit with the checksums of the
 * bytes appended (in pieces of any size), moved with the block between tiers, deleted with it, found again
 * by a new store on the same dirs, rebuilt at start for a block that has none (a block whose sidecar cannot be
 * rebuilt left out alone), debris without a block removed at start, and the second copy a move cut short by a crash
 * deleted at start.
 */
class ChecksumSidecarTest {
  @TempDir
  Path root;

  private static final int LEN = 3 * ChunkChecksums.CHUNK_BYTES + 4321;

  private static int[] stored(BlockStore store, long id) throws IOException {
    try (ReadHandle h = store.openForRead(id, false)) {
      return h.checksums();
    }
  }

  @Test
  void commit_writesTheChecksumsOfTheBytes_inPiecesOfAnySize() throws IOException {
    Path mem = root.resolve("mem");
    TieredBlockStore store = StoreFixture.builder().tier("MEM", 10 << 20, mem).build();
    byte[] data = content(5, LEN);
    write(store, 5, data, 1000); // 1000-byte appends never line up with the 64 KiB chunks
    assertThat(stored(store, 5)).containsExactly(ChunkChecksums.of(ByteBuffer.wrap(data)));
    assertThat(stored(store, 5)).hasSize(4);
    assertThat(sidecarFiles(mem)).containsExactly(mem.resolve("blocks/5.crc"));
  }

  @Test
  void sidecar_movesWithTheBlock_andIsDeletedWithIt() throws IOException {
    Path mem = root.resolve("mem");
    Path hdd = root.resolve("hdd");
    TieredBlockStore store = StoreFixture.builder().tier("MEM", LEN + 10, mem).tier("HDD", 10 << 20, hdd).build();
    byte[] data = content(1, LEN);
    write(store, 1, data, 4096);
    assertThat(store.freeSpace(store.dirOf(1), LEN + 10)).isTrue(); // evicted down to HDD
    assertThat(store.dirOf(1).root).isEqualTo(hdd);
    assertThat(sidecarFiles(mem)).isEmpty();
    assertThat(sidecarFiles(hdd)).containsExactly(hdd.resolve("blocks/1.crc"));
    assertThat(stored(store, 1)).containsExactly(ChunkChecksums.of(ByteBuffer.wrap(data)));

    assertThat(store.remove(1)).isTrue();
    assertThat(blockFiles(hdd)).isEmpty();
    assertThat(sidecarFiles(hdd)).isEmpty();
  }

  @Test
  void restart_findsTheSidecars_rebuildsAMissingOne_andDropsOrphans() throws IOException {
    Path ssd = root.resolve("ssd");
    StoreFixture fixture = StoreFixture.builder().tier("SSD", 10 << 20, ssd);
    TieredBlockStore before = fixture.build();
    byte[] one = content(1, LEN);
    byte[] two = content(2, 100);
    write(before, 1, one, 777);
    write(before, 2, two, 777);
    write(before, 3, 0); // an empty block: a sidecar with no checksums
    Files.delete(ssd.resolve("blocks/2.crc")); // as if written before checksums existed
    Files.write(ssd.resolve("blocks/99.crc"), new byte[] {1, 2, 3}); // a crash left a sidecar, no block

    TieredBlockStore after = fixture.build();
    assertThat(stored(after, 1)).containsExactly(ChunkChecksums.of(ByteBuffer.wrap(one)));
    assertThat(stored(after, 2)).containsExactly(ChunkChecksums.of(ByteBuffer.wrap(two)));
    assertThat(stored(after, 3)).isEmpty();
    assertThat(sidecarFiles(ssd)).containsExactlyInAnyOrder(ssd.resolve("blocks/1.crc"),
        ssd.resolve("blocks/2.crc"), ssd.resolve("blocks/3.crc"));
  }

  @Test
  void aSidecarThatCannotBeRebuilt_leavesOutOnlyItsBlock_keepingItsFile() throws IOException {
    Path ssd = root.resolve("ssd");
    StoreFixture fixture = StoreFixture.builder().tier("SSD", 10 << 20, ssd);
    TieredBlockStore before = fixture.build();
    byte[] one = content(1, LEN);
    write(before, 1, one, 777);
    write(before, 2, content(2, 100), 777);
    // Block 2's sidecar is damaged and its place cannot take a new one (a directory with something in it).
    Files.delete(ssd.resolve("blocks/2.crc"));
    Files.createDirectories(ssd.resolve("blocks/2.crc/x"));

    TieredBlockStore after = fixture.build();
    assertThat(after.dirOf(1)).isNotNull();
    assertThat(stored(after, 1)).containsExactly(ChunkChecksums.of(ByteBuffer.wrap(one)));
    assertThatThrownBy(() -> after.get(2)).isInstanceOf(io.strata.common.exception.NotFoundException.class);
    assertThat(ssd.resolve("blocks/2")).hasSize(100); // its bytes are still there
    assertThat(after.dirReports()).allMatch(BlockStore.DirReport::good);
  }

  @Test
  void aSidecarLostWhileRunning_makesReadsOfTheCopyFailAsCorrupt() throws IOException {
    Path mem = root.resolve("mem");
    TieredBlockStore store = StoreFixture.builder().tier("MEM", 10 << 20, mem).build();
    write(store, 4, 5000);
    Files.delete(mem.resolve("blocks/4.crc"));
    assertThatThrownBy(() -> stored(store, 4)).isInstanceOf(CorruptBlockException.class)
        .hasMessageContaining("Block 4").hasMessageContaining("checksums cannot be read");
  }

  /**
   * A store of a MEM and an HDD tier holding block {@code id} ({@link #LEN} bytes) in both, as a move that a crash cut
   * short between the copy's rename into HDD and the source's delete leaves them; {@code crash} then damages what it
   * likes, and the store is opened again.
   */
  private TieredBlockStore afterACrashMidMove(long id, byte[] data, CrashDamage crash) throws IOException {
    Path mem = root.resolve("mem");
    Path hdd = root.resolve("hdd");
    StoreFixture fixture = StoreFixture.builder().tier("MEM", 10 << 20, mem).tier("HDD", 10 << 20, hdd);
    write(fixture.build(), id, data, 4096);
    Files.copy(mem.resolve("blocks/" + id), hdd.resolve("blocks/" + id));
    Files.copy(mem.resolve("blocks/" + id + ".crc"), hdd.resolve("blocks/" + id + ".crc"));
    crash.damage(mem.resolve("blocks/" + id));
    return fixture.build();
  }

  private interface CrashDamage {
    void damage(Path memCopy) throws IOException;
  }

  @Test
  void aMoveCutShortByACrash_leavesOneCopyAfterTheRestart() throws IOException {
    byte[] data = content(8, LEN);
    TieredBlockStore after = afterACrashMidMove(8, data, memCopy -> { });
    assertThat(after.dirOf(8).root).isEqualTo(root.resolve("mem"));
    assertThat(stored(after, 8)).containsExactly(ChunkChecksums.of(ByteBuffer.wrap(data)));
    assertThat(blockFiles(root.resolve("hdd"))).isEmpty();
    assertThat(sidecarFiles(root.resolve("hdd"))).isEmpty();
  }

  /**
   * The same, where the crash took the bytes of the copy in a tier without fsync (its size kept, its pages zero): the
   * copy whose bytes match its checksums stays, wherever it is, and reads give the block's bytes.
   */
  @Test
  void aMoveCutShortByACrash_keepsTheCopyWhoseBytesMatchItsChecksums() throws IOException {
    byte[] data = content(9, LEN);
    TieredBlockStore after = afterACrashMidMove(9, data, memCopy -> Files.write(memCopy, new byte[LEN]));
    assertThat(after.dirOf(9).root).isEqualTo(root.resolve("hdd"));
    assertThat(StoreFixture.read(after, 9)).isEqualTo(data);
    assertThat(blockFiles(root.resolve("mem"))).isEmpty();
    assertThat(after.usedBytes()).isEqualTo(LEN);
  }

  /**
   * The same with the MEM copy's sidecar lost too (rebuilt at start from the zeroed bytes, so it proves nothing): the
   * copy in the tier that fsyncs stays.
   */
  @Test
  void aMoveCutShortByACrash_withTheSidecarLostToo_keepsTheCopyInTheTierThatFsyncs() throws IOException {
    byte[] data = content(10, LEN);
    TieredBlockStore after = afterACrashMidMove(10, data, memCopy -> {
      Files.write(memCopy, new byte[LEN]);
      Files.delete(ChecksumSidecar.of(memCopy));
    });
    assertThat(after.dirOf(10).root).isEqualTo(root.resolve("hdd"));
    assertThat(StoreFixture.read(after, 10)).isEqualTo(data);
    assertThat(blockFiles(root.resolve("mem"))).isEmpty();
  }
}
