package io.strata.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The replay buffer keeps a block's chunks for failover (without copying them), lets go of them past its
 * limit, and hands the arrays of a committed block out again for later chunks, never more than its limit;
 * a failed short-circuit writer's file replaces the chunks and is replayed from its descriptor.
 */
class BlockReplayBufferTest {
  @TempDir
  Path dir;

  @Test
  void aKeptFile_isReplayedFromItsDescriptor_evenOnceDeleted_thenTheChunksAddedAfter_andClosedWithTheBlock()
      throws Exception {
    BlockReplayBuffer r = new BlockReplayBuffer(4, 3); // 3-byte pieces; chunks beyond the file: at most 4 bytes
    r.add(new byte[] {42, 42}, 2); // replaced by the file, which holds the block so far
    Path temp = dir.resolve("temp-block");
    Files.write(temp, new byte[] {1, 2, 3, 4, 5, 6, 7, 99});
    FileChannel ch = FileChannel.open(temp, StandardOpenOption.READ, StandardOpenOption.WRITE);
    r.keepFile(ch, 7); // the writer wrote 7 bytes; the 8th was a write that failed part way
    Files.delete(temp); // the worker dropped its temp block
    r.add(new byte[] {8, 9, 0}, 2);
    r.add(new byte[] {10, 11}, 2);
    assertThat(r.complete()).as("4 bytes of chunks: within the limit").isTrue();
    assertThat(r.bytes()).isEqualTo(11);

    List<Integer> pieces = new ArrayList<>();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    r.replayTo((chunk, length) -> {
      pieces.add(length);
      out.write(chunk, 0, length);
    });
    assertThat(out.toByteArray()).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    assertThat(pieces).containsExactly(3, 3, 1, 2, 2);
    ByteArrayOutputStream again = new ByteArrayOutputStream();
    r.replayTo((chunk, length) -> again.write(chunk, 0, length)); // a second failover: the same bytes
    assertThat(again.toByteArray()).isEqualTo(out.toByteArray());

    r.add(new byte[1], 1); // 5 bytes of chunks: past the limit
    assertThat(r.complete()).isFalse();
    r.clear();
    assertThat(ch.isOpen()).as("the block ended: its file is closed").isFalse();
    assertThat(r.bytes()).isZero();
  }

  @Test
  void replaysTheKeptChunksInOrder_andNothingOnceTheBlockOutgrewTheLimit() throws Exception {
    BlockReplayBuffer r = new BlockReplayBuffer(10);
    r.add(new byte[] {1, 2, 3, 9}, 3);
    r.add(new byte[] {4, 5}, 2);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    r.replayTo((chunk, length) -> out.write(chunk, 0, length));
    assertThat(out.toByteArray()).containsExactly(1, 2, 3, 4, 5);
    assertThat(r.complete()).isTrue();

    r.add(new byte[6], 6); // 11 bytes > 10
    assertThat(r.complete()).isFalse();
    assertThat(r.bytes()).isEqualTo(11);
    r.clear();
    assertThat(r.complete()).isTrue();
    assertThat(r.bytes()).isZero();
  }

  @Test
  void aCommittedBlocksArrays_areReused_upToTheLimit_andOnlyForTheirOwnSize() {
    BlockReplayBuffer r = new BlockReplayBuffer(8);
    byte[] over = new byte[4];
    byte[] a = new byte[4];
    byte[] b = new byte[4];
    byte[] c = new byte[4];
    r.add(a, 4);
    r.add(b, 4);
    r.clearAndRecycle();
    r.add(over, 4);
    r.clearAndRecycle(); // 12 bytes of arrays: past the limit of 8, `over` is not kept
    byte[] first = r.reuse(4);
    byte[] second = r.reuse(4);
    assertThat(first == a || first == b).isTrue();
    assertThat(second == a || second == b).isTrue();
    assertThat(second).isNotSameAs(first);
    byte[] third = r.reuse(4);
    assertThat(third != a && third != b && third != over).as("none left: a fresh one").isTrue();

    r.add(c, 4);
    r.clear(); // not recyclable (an under file system stream may still hold it)
    assertThat(r.reuse(4)).isNotSameAs(c);

    r.add(a, 4);
    r.clearAndRecycle();
    assertThat(r.reuse(8)).isNotSameAs(a).hasSize(8); // another size: a fresh array (a is dropped)
    assertThat(r.reuse(4)).isNotSameAs(a);
  }
}
