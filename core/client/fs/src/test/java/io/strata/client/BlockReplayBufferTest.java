package io.strata.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import org.junit.jupiter.api.Test;

/**
 * The replay buffer keeps a block's chunks for failover (without copying them), lets go of them past its
 * limit, and hands the arrays of a committed block out again for later chunks, never more than its limit.
 */
class BlockReplayBufferTest {
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
