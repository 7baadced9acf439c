package io.strata.worker.store;

import static io.strata.worker.store.StoreFixture.bytesOnDisk;
import static io.strata.worker.store.StoreFixture.content;
import static io.strata.worker.store.StoreFixture.read;
import static io.strata.worker.store.StoreFixture.readAll;
import static io.strata.worker.store.StoreFixture.tmpFiles;
import static io.strata.worker.store.StoreFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.worker.store.BlockStore.BlockMeta;
import io.strata.worker.store.BlockStore.DirReport;
import io.strata.worker.store.BlockStore.ReadHandle;
import io.strata.worker.store.BlockStore.TempBlock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every tier of a {@link BlockStore} must do, run once per tier type (habit 10: one suite over
 * every implementation). A subclass builds a store whose writes all land in one tier and names that
 * tier; the suite then checks the block life cycle, accounting, restart and temp-file hygiene there.
 */
abstract class BlockStoreContractTest {
  /**
   * The smallest maximum length the suite declares for a block: a subclass can keep a tier out of the
   * suite's way by giving its dirs a smaller quota.
   */
  static final int MIN_BLOCK = 16;

  @TempDir
  Path tempDir;

  protected Path base;
  protected RecordingEvents events;
  protected TieredBlockStore store;

  /** Where the store's dirs live; a fresh {@code @TempDir} unless the tier wants another file system. */
  protected Path baseDir(Path tempDir) throws IOException {
    return tempDir;
  }

  /** A new store over this test's dirs under {@code base}: the same dirs every call, so a second is a restart. */
  protected abstract TieredBlockStore newStore(Path base, StoreEvents events);

  /** The roots of every dir the store has, in every tier. */
  protected abstract List<Path> dirRoots(Path base);

  /** The alias of the tier that the suite's writes land in. */
  protected abstract String expectedTier();

  /** Bytes the dirs of {@link #expectedTier()} hold together. */
  protected abstract long tierCapacity();

  /** Checks where a committed block went; called for every block the suite commits or reads back. */
  protected void assertPlacedAsExpected(TieredBlockStore s, BlockMeta meta) {
    assertThat(meta.tier()).as("tier of block %d", meta.blockId()).isEqualTo(expectedTier());
    StorageDir dir = s.dirOf(meta.blockId());
    assertThat(dir).as("dir of block %d", meta.blockId()).isNotNull();
    assertThat(dir.tierAlias).isEqualTo(expectedTier());
    assertThat(Files.exists(dir.blockPath(meta.blockId()))).as("file of block %d", meta.blockId()).isTrue();
  }

  @BeforeEach
  void openStore() throws IOException {
    base = baseDir(tempDir);
    events = new RecordingEvents();
    store = newStore(base, events);
  }

  private BlockMeta writeChecked(long id, int length) throws IOException {
    BlockMeta meta = write(store, id, length);
    store.markEvictable(List.of(id)); // the eviction checks here are about blocks of persisted files
    assertThat(meta).isEqualTo(new BlockMeta(id, length, expectedTier()));
    assertPlacedAsExpected(store, meta);
    return meta;
  }

  private void assertNoTempFiles() {
    for (Path d : dirRoots(base)) {
      assertThat(tmpFiles(d)).as("tmp of %s", d).isEmpty();
    }
  }

  private int tempFileCount() {
    int n = 0;
    for (Path d : dirRoots(base)) {
      n += tmpFiles(d).size();
    }
    return n;
  }

  private long sumOfCommittedLengths(BlockStore s) {
    return s.committedBlocks().stream().mapToLong(BlockMeta::length).sum();
  }

  // ---------------------------------------------------------------- write, commit, read

  @Test
  void commit_afterAppendsOfMixedSizes_readsBackByteExact_inTheExpectedTier() throws IOException {
    byte[] data = content(7, 3001);
    TempBlock t = store.createTemp(7, 4000);
    t.append(ByteBuffer.wrap(data, 0, 1));
    t.append(ByteBuffer.wrap(data, 1, 1999));
    t.append(ByteBuffer.wrap(data, 2000, 1001));
    assertThat(t.length()).isEqualTo(3001);

    BlockMeta meta = store.commit(t);

    assertThat(meta).isEqualTo(new BlockMeta(7, 3001, expectedTier()));
    assertPlacedAsExpected(store, meta);
    assertThat(store.get(7)).isEqualTo(meta);
    assertThat(read(store, 7)).isEqualTo(data);
    try (ReadHandle h = store.openForRead(7, false)) {
      assertThat(h.meta()).isEqualTo(meta);
      assertThat(h.channel().size()).isEqualTo(3001);
    }
  }

  @Test
  void commit_ofAnEmptyBlock_givesAReadableZeroLengthBlock() throws IOException {
    BlockMeta meta = store.commit(store.createTemp(4, MIN_BLOCK));
    assertThat(meta).isEqualTo(new BlockMeta(4, 0, expectedTier()));
    assertPlacedAsExpected(store, meta);
    assertThat(read(store, 4)).isEmpty();
  }

  @Test
  void blocks_ofManyIds_eachReadBackTheirOwnBytes() throws IOException {
    for (long id = 1; id <= 6; id++) {
      writeChecked(id, 500 + (int) id * 97);
    }
    for (long id = 1; id <= 6; id++) {
      assertThat(read(store, id)).as("block %d", id).isEqualTo(content(id, 500 + (int) id * 97));
    }
  }

  @Test
  void get_andOpenForRead_ofAnUnknownBlock_areNotFound() {
    assertThatThrownBy(() -> store.get(42)).isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> store.openForRead(42, false)).isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> store.openForRead(42, true)).isInstanceOf(NotFoundException.class);
    assertThat(store.locks.poolSize()).as("a refused read leaves no lock behind").isZero();
  }

  @Test
  void tempBlock_isInvisibleUntilCommitted() throws IOException {
    TempBlock t = store.createTemp(9, 100);
    t.append(ByteBuffer.wrap(content(9, 50)));

    assertThatThrownBy(() -> store.get(9)).isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> store.openForRead(9, false)).isInstanceOf(NotFoundException.class);
    assertThat(store.committedBlocks()).isEmpty();

    store.commit(t);
    assertThat(store.get(9).length()).isEqualTo(50);
  }

  @Test
  void append_pastTheDeclaredMaximum_isInvalid_andReservesNothing() throws IOException {
    TempBlock t = store.createTemp(1, 100);
    t.append(ByteBuffer.wrap(content(1, 90)));
    ByteBuffer tooMuch = ByteBuffer.wrap(new byte[11]);

    assertThatThrownBy(() -> t.append(tooMuch)).isInstanceOf(InvalidArgumentException.class);

    assertThat(tooMuch.remaining()).isEqualTo(11);
    assertThat(store.usedBytes()).isEqualTo(90);
    assertThat(store.commit(t).length()).isEqualTo(90);
    assertThat(read(store, 1)).isEqualTo(content(1, 90));
  }

  @Test
  void commit_twice_isRefused_andChangesNothing() throws IOException {
    TempBlock t = store.createTemp(1, 100);
    t.append(ByteBuffer.wrap(content(1, 100)));
    store.commit(t);

    assertThatThrownBy(() -> store.commit(t)).isInstanceOf(IllegalStateException.class);
    assertThat(store.usedBytes()).isEqualTo(100);
    assertThat(read(store, 1)).isEqualTo(content(1, 100));
  }

  // ---------------------------------------------------------------- one writer per id

  @Test
  void createTemp_whileAnotherWriterHasTheId_isAlreadyExists_andTheFirstWriterIsUndisturbed() throws IOException {
    TempBlock first = store.createTemp(1, 100);
    first.append(ByteBuffer.wrap(content(1, 40)));

    assertThatThrownBy(() -> store.createTemp(1, 100)).isInstanceOf(AlreadyExistsException.class);

    assertThat(tempFileCount()).as("the refused writer made no temp file").isEqualTo(1);
    first.append(ByteBuffer.wrap(content(1, 100), 40, 60));
    assertThat(store.commit(first).length()).isEqualTo(100);
    assertThat(read(store, 1)).isEqualTo(content(1, 100));
  }

  @Test
  void createTemp_ofACommittedId_isAlreadyExists_andTheBlockIsUnchanged() throws IOException {
    writeChecked(1, 300);

    assertThatThrownBy(() -> store.createTemp(1, 100)).isInstanceOf(AlreadyExistsException.class);

    assertThat(read(store, 1)).isEqualTo(content(1, 300));
    assertThat(store.usedBytes()).isEqualTo(300);
    assertNoTempFiles();
  }

  // ---------------------------------------------------------------- abort

  @Test
  void abort_releasesTheReservedBytes_deletesTheTempFile_andFreesTheId() throws IOException {
    writeChecked(1, 200); // an unrelated block that must survive
    TempBlock t = store.createTemp(2, 1000);
    t.append(ByteBuffer.wrap(content(2, 700)));
    assertThat(store.usedBytes()).isEqualTo(900);
    assertThat(tempFileCount()).isEqualTo(1);

    store.abort(t);

    assertThat(store.usedBytes()).isEqualTo(200);
    assertNoTempFiles();
    assertThatThrownBy(() -> store.get(2)).isInstanceOf(NotFoundException.class);
    assertThat(store.committedBlocks()).extracting(BlockMeta::blockId).containsExactly(1L);
    writeChecked(2, 123);
    assertThat(read(store, 2)).isEqualTo(content(2, 123));
  }

  @Test
  void abort_twice_releasesOnce_andCommitAfterAbortIsRefused() throws IOException {
    TempBlock keep = store.createTemp(1, 100);
    keep.append(ByteBuffer.wrap(new byte[40]));
    TempBlock t = store.createTemp(2, 100);
    t.append(ByteBuffer.wrap(new byte[60]));

    store.abort(t);
    store.abort(t);

    assertThat(store.usedBytes()).isEqualTo(40);
    assertThatThrownBy(() -> store.commit(t)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> store.get(2)).isInstanceOf(NotFoundException.class);
    store.abort(keep);
    assertThat(store.usedBytes()).isZero();
  }

  // ---------------------------------------------------------------- remove

  @Test
  void remove_ofAnUnreadBlock_deletesItAtOnce_andReportsIt() throws IOException {
    writeChecked(1, 300);
    writeChecked(2, 200);
    Path file = store.dirOf(1).blockPath(1);

    assertThat(store.remove(1)).isTrue();

    assertThatThrownBy(() -> store.get(1)).isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> store.openForRead(1, false)).isInstanceOf(NotFoundException.class);
    assertThat(Files.exists(file)).isFalse();
    assertThat(store.usedBytes()).isEqualTo(200);
    assertThat(store.committedBlocks()).extracting(BlockMeta::blockId).containsExactly(2L);
    assertThat(events.removed()).containsExactly(1L);
    assertThat(store.remove(1)).as("already gone").isFalse();
    assertThat(events.removed()).containsExactly(1L);
    assertThat(read(store, 2)).isEqualTo(content(2, 200));
  }

  @Test
  void remove_whileAReadHandleIsOpen_waitsForIt_thenDeletesTheBlock() throws IOException {
    writeChecked(1, 5000);
    ReadHandle h = store.openForRead(1, false);
    Path file = store.dirOf(1).blockPath(1);

    assertThat(store.remove(1)).isTrue();

    // Deferred: the open handle still reads the whole block and nothing is released yet...
    assertThat(readAll(h.channel())).isEqualTo(content(1, 5000));
    assertThat(Files.exists(file)).isTrue();
    assertThat(store.usedBytes()).isEqualTo(5000);
    assertThat(events.removed()).isEmpty();
    // ...but no new reader is let in.
    assertThatThrownBy(() -> store.openForRead(1, false)).isInstanceOf(NotFoundException.class);

    h.close(); // the removal is finished on the store's own thread, soon after

    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(events.removed()).containsExactly(1L));
    assertThatThrownBy(() -> store.get(1)).isInstanceOf(NotFoundException.class);
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(store.usedBytes()).isZero();
    assertThat(Files.exists(file)).isFalse();
    assertThat(events.removed()).containsExactly(1L);
    assertThat(store.locks.poolSize()).isZero();
    h.close(); // a second close does nothing
    assertThat(events.removed()).containsExactly(1L);
  }

  @Test
  void remove_thenWriteTheSameIdAgain_servesTheNewBytes() throws IOException {
    write(store, 1, content(1, 400), 100);
    store.remove(1);
    BlockMeta again = write(store, 1, content(1001, 250), 100);

    assertPlacedAsExpected(store, again);
    assertThat(read(store, 1)).isEqualTo(content(1001, 250));
    assertThat(store.usedBytes()).isEqualTo(250);
  }

  // ---------------------------------------------------------------- pin, eviction in the tier

  @Test
  void pinnedBlock_survivesWritesThatOverflowTheTier_andIsEvictableOnceUnpinned() throws IOException {
    int size = (int) (tierCapacity() / 8);
    writeChecked(1, size);
    store.pin(1);

    for (long id = 2; id <= 21; id++) { // 20 more blocks: 2.5 times what the tier holds
      writeChecked(id, size);
      assertThat(store.usedBytes()).isLessThanOrEqualTo(tierCapacity());
    }

    assertThat(read(store, 1)).isEqualTo(content(1, size));
    // The tier holds exactly 8 such blocks: 21 written, 13 left the worker, never the pinned one.
    assertThat(events.removed()).hasSize(13).doesNotContain(1L);
    assertThat(store.committedBlocks()).hasSize(8).extracting(BlockMeta::blockId).contains(1L, 21L);

    store.unpin(1);
    for (long id = 22; id <= 37; id++) { // two tierfuls: every older block goes
      writeChecked(id, size);
    }
    assertThat(events.removed()).contains(1L);
    assertThatThrownBy(() -> store.get(1)).isInstanceOf(NotFoundException.class);
  }

  // ---------------------------------------------------------------- accounting and reports

  @Test
  void accounting_committedBlocks_usedBytes_capacity_andDirReports_agree_withTheFilesOnDisk() throws IOException {
    long[] lengths = {MIN_BLOCK, 100, 1000, 2047, 333, 4096, 17};
    Set<BlockMeta> written = new HashSet<>();
    for (int i = 0; i < lengths.length; i++) {
      written.add(writeChecked(100 + i, (int) lengths[i]));
    }
    long total = 0;
    for (long l : lengths) {
      total += l;
    }

    assertThat(new HashSet<>(store.committedBlocks())).isEqualTo(written);
    assertThat(store.usedBytes()).isEqualTo(total);
    List<DirReport> reports = store.dirReports();
    assertThat(reports).extracting(DirReport::path)
        .containsExactlyElementsOf(dirRoots(base).stream().map(Path::toString).toList());
    assertThat(reports).allMatch(DirReport::good).allMatch(r -> r.lostBlocks() == 0);
    assertThat(reports.stream().mapToLong(DirReport::capacityBytes).sum()).isEqualTo(store.capacityBytes());
    assertThat(reports.stream().filter(r -> r.tier().equals(expectedTier())).mapToLong(DirReport::capacityBytes)
        .sum()).isEqualTo(tierCapacity());
    assertThat(reports.stream().mapToLong(DirReport::usedBytes).sum()).isEqualTo(total);
    for (DirReport r : reports) {
      assertThat(r.usedBytes()).as("used of %s", r.path()).isEqualTo(bytesOnDisk(Path.of(r.path())));
    }

    // A write in flight counts its appended bytes, and only those.
    TempBlock t = store.createTemp(999, 4000);
    t.append(ByteBuffer.wrap(new byte[250]));
    assertThat(store.usedBytes()).isEqualTo(total + 250);
    assertThat(store.dirReports().stream().mapToLong(DirReport::usedBytes).sum()).isEqualTo(total + 250);
    store.abort(t);
    assertThat(store.usedBytes()).isEqualTo(total);
    assertThat(sumOfCommittedLengths(store)).isEqualTo(total);
  }

  // ---------------------------------------------------------------- restart

  @Test
  void restart_reindexesEveryBlockInItsTier_withItsLength_andEmptiesTmp() throws IOException {
    for (long id = 1; id <= 5; id++) {
      writeChecked(id, 300 * (int) id);
    }
    store.remove(3);
    TempBlock unfinished = store.createTemp(6, 1000);
    unfinished.append(ByteBuffer.wrap(content(6, 500)));
    for (Path d : dirRoots(base)) {
      Files.write(d.resolve("tmp").resolve("77-leftover"), new byte[33]);
    }
    Set<BlockMeta> before = new HashSet<>(store.committedBlocks());
    long committedBytes = sumOfCommittedLengths(store);

    TieredBlockStore restarted = newStore(base, new RecordingEvents());

    assertThat(new HashSet<>(restarted.committedBlocks())).isEqualTo(before);
    assertThat(before).extracting(BlockMeta::blockId).containsExactlyInAnyOrder(1L, 2L, 4L, 5L);
    assertThat(restarted.usedBytes()).isEqualTo(committedBytes).isEqualTo(300L * (1 + 2 + 4 + 5));
    for (BlockMeta m : before) {
      assertPlacedAsExpected(restarted, restarted.get(m.blockId()));
      assertThat(read(restarted, m.blockId())).as("block %d", m.blockId())
          .isEqualTo(content(m.blockId(), (int) m.length()));
    }
    for (DirReport r : restarted.dirReports()) {
      assertThat(r.usedBytes()).isEqualTo(bytesOnDisk(Path.of(r.path())));
    }
    assertNoTempFiles();
    assertThatThrownBy(() -> restarted.get(3)).isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> restarted.get(6)).isInstanceOf(NotFoundException.class);
    assertThat(write(restarted, 6, 100).length()).as("the dead writer's id is free").isEqualTo(100);
    assertThatThrownBy(() -> restarted.createTemp(1, 100)).isInstanceOf(AlreadyExistsException.class);
    store.abort(unfinished); // closes the old store's channel; its file is already gone
  }

  // ---------------------------------------------------------------- temp files

  @Test
  void tempFiles_existOnlyWhileWriting_neverAfterCommitOrAbort() throws IOException {
    List<TempBlock> open = new ArrayList<>();
    for (long id = 1; id <= 6; id++) {
      TempBlock t = store.createTemp(id, 1000);
      t.append(ByteBuffer.wrap(content(id, 600)));
      open.add(t);
    }
    assertThat(tempFileCount()).isEqualTo(6);
    for (TempBlock t : open) {
      if (t.blockId() % 2 == 0) {
        store.commit(t);
      } else {
        store.abort(t);
      }
    }

    assertNoTempFiles();
    assertThat(store.committedBlocks()).extracting(BlockMeta::blockId).containsExactlyInAnyOrder(2L, 4L, 6L);
    assertThat(store.usedBytes()).isEqualTo(3 * 600);
    for (long id = 2; id <= 6; id += 2) {
      assertThat(read(store, id)).isEqualTo(content(id, 600));
    }
  }
}
