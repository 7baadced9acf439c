package io.strata.worker.store;

import static io.strata.worker.store.StoreFixture.blockFiles;
import static io.strata.worker.store.StoreFixture.content;
import static io.strata.worker.store.StoreFixture.read;
import static io.strata.worker.store.StoreFixture.tmpFiles;
import static io.strata.worker.store.StoreFixture.write;
import static org.assertj.core.api.Assertions.assertThat;

import io.strata.worker.store.BlockStore.BlockMeta;
import io.strata.worker.store.BlockStore.TempBlock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Durable commits (issue 9, point 4): a commit into a tier that is not memory fsyncs the block file
 * before it gets its committed name and the {@code blocks/} dir after, before the caller (who tells the
 * master) sees it; a move fsyncs the copy and its target dir before the source goes; a MEM tier is not
 * fsynced. The real {@link Durability#FSYNC} does the work; a wrapper records what it was asked, and in
 * what state the file was at that moment.
 */
class DurableCommitTest {
  @TempDir
  Path root;

  /** The real fsync, recording each call with whether the synced file already had its committed name. */
  private static final class Recording implements Durability {
    final List<String> calls = new CopyOnWriteArrayList<>();

    @Override
    public void syncFile(FileChannel channel) throws IOException {
      calls.add("file size=" + channel.size());
      FSYNC.syncFile(channel);
    }

    @Override
    public void syncFile(Path file) throws IOException {
      calls.add("file " + file.getParent().getFileName() + " size=" + Files.size(file));
      FSYNC.syncFile(file);
    }

    @Override
    public void syncDir(Path dir) throws IOException {
      calls.add("dir " + dir.getParent().getFileName() + "/" + dir.getFileName());
      FSYNC.syncDir(dir);
    }
  }

  @Test
  void commitToSsd_fsyncsTheFileBeforeItsNameAndTheDirAfter() throws IOException {
    Recording sync = new Recording();
    Path ssd = root.resolve("ssd");
    TieredBlockStore store = StoreFixture.builder().tier("SSD", 100_000, ssd).durability(sync).build();
    TempBlock t = store.createTemp(7, 5000);
    t.append(ByteBuffer.wrap(content(7, 3000)));
    assertThat(sync.calls).isEmpty();
    BlockMeta meta = store.commit(t);
    assertThat(meta.length()).isEqualTo(3000);
    // the file is synced with all its bytes (through the temp file's channel, before the rename), then its
    // checksum sidecar (32 bytes: one chunk), then the dir that holds both committed names
    assertThat(sync.calls).containsExactly("file size=3000", "file size=32", "dir ssd/blocks");
    assertThat(read(store, 7)).isEqualTo(content(7, 3000));
  }

  @Test
  void blockWrittenFromOutsideTheStore_isFsyncedLikeAStreamedOne() throws IOException {
    Recording sync = new Recording();
    TieredBlockStore store = StoreFixture.builder().tier("HDD", 100_000, root.resolve("hdd")).durability(sync).build();
    TempBlock t = store.createTemp(8, 5000);
    t.grant(4000);
    try (FileChannel ch = FileChannel.open(t.path(), java.nio.file.StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(content(8, 3000)), 0); // a short-circuit writer's own descriptor
    }
    t.written(3000, io.strata.common.checksum.ChunkChecksums.of(ByteBuffer.wrap(content(8, 3000))));
    assertThat(sync.calls).isEmpty();
    store.commit(t);
    assertThat(sync.calls).containsExactly("file size=3000", "file size=32", "dir hdd/blocks");
    assertThat(read(store, 8)).isEqualTo(content(8, 3000));
  }

  @Test
  void commitToMem_isNotFsynced_unlessItsTierSaysSo() throws IOException {
    Recording sync = new Recording();
    TieredBlockStore mem = StoreFixture.builder().tier("MEM", 100_000, root.resolve("mem")).durability(sync).build();
    write(mem, 1, 2000);
    assertThat(sync.calls).isEmpty();

    Recording sync2 = new Recording();
    TieredBlockStore forced = new TieredBlockStore(
        List.of(new TierSpec("MEM", List.of(new TierSpec.Dir(root.resolve("mem2"), 100_000)), true)),
        new MaxFreeAllocator(), new LruAnnotator(), StoreEvents.NONE, java.time.Clock.systemUTC(), sync2);
    write(forced, 1, 2000);
    assertThat(sync2.calls).containsExactly("file size=2000", "file size=32", "dir mem2/blocks");
  }

  @Test
  void evictionMoveToHdd_fsyncsTheCopyAndTargetDirBeforeTheSourceIsDeleted() throws IOException {
    Recording sync = new Recording();
    Path mem = root.resolve("mem");
    Path hdd = root.resolve("hdd");
    TieredBlockStore store = StoreFixture.builder().tier("MEM", 2500, mem).tier("HDD", 100_000, hdd)
        .durability(sync).build();
    write(store, 1, 2000); // MEM: not synced
    assertThat(sync.calls).isEmpty();
    assertThat(store.freeSpace(store.dirOf(1), 2500)).isTrue(); // eviction moves block 1 down to HDD
    assertThat(store.dirOf(1).root).isEqualTo(hdd);
    // the sidecar's copy, the block's copy in hdd/tmp with all its bytes, then hdd/blocks, and only then
    // the source went
    assertThat(sync.calls).containsExactly("file tmp size=32", "file tmp size=2000", "dir hdd/blocks");
    assertThat(blockFiles(mem)).isEmpty();
    assertThat(read(store, 1)).isEqualTo(content(1, 2000));
  }

  @Test
  void restartAfterCrash_reportsOnlyWholeCommittedBlocks_andDropsPartialOnes() throws IOException {
    Path ssd = root.resolve("ssd");
    Path hdd = root.resolve("hdd");
    StoreFixture fixture = StoreFixture.builder().tier("SSD", 4000, ssd).tier("HDD", 100_000, hdd);
    TieredBlockStore before = fixture.build();
    write(before, 1, 1500);
    write(before, 2, 1500);
    write(before, 3, 1500); // SSD is full: into HDD
    TempBlock partial = before.createTemp(4, 3000);
    partial.append(ByteBuffer.wrap(content(4, 1000)));
    Map<Long, Long> committed = before.committedBlocks().stream()
        .collect(Collectors.toMap(BlockMeta::blockId, BlockMeta::length));
    assertThat(committed).containsOnlyKeys(1L, 2L, 3L);
    assertThat(tmpFiles(ssd).size() + tmpFiles(hdd).size()).isEqualTo(1);
    // "crash": the process is gone without closing or aborting anything; a new store opens the same dirs
    TieredBlockStore after = fixture.build();
    Map<Long, Long> found = after.committedBlocks().stream()
        .collect(Collectors.toMap(BlockMeta::blockId, BlockMeta::length));
    assertThat(found).isEqualTo(committed);
    for (long id = 1; id <= 3; id++) {
      assertThat(read(after, id)).as("block " + id).isEqualTo(content(id, 1500));
    }
    assertThat(tmpFiles(ssd)).isEmpty();
    assertThat(tmpFiles(hdd)).isEmpty();
    // the partial block is gone, so its id can be written again in full
    write(after, 4, 3000);
    assertThat(read(after, 4)).isEqualTo(content(4, 3000));
  }
}
