package io.strata.common.checksum;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.zip.CRC32C;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * The chunk arithmetic every writer, worker and reader shares: chunk counts and bounds for any length
 * (zero, exact multiples, a last partial chunk), alignment of unaligned ranges, and a builder fed in
 * pieces of any size giving the same checksums as a CRC32C over each whole chunk.
 */
class ChunkChecksumsPropertiesTest {
  private static final int C = ChunkChecksums.CHUNK_BYTES;

  @Property
  void chunks_tileTheBlockExactly(@ForAll @LongRange(min = 0, max = 1L << 40) long length) {
    int n = ChunkChecksums.chunkCount(length);
    if (length == 0) {
      assertThat(n).isZero();
      return;
    }
    assertThat(ChunkChecksums.chunkStart(0)).isZero();
    assertThat(ChunkChecksums.chunkEnd(n - 1, length)).isEqualTo(length);
    long last = length - ChunkChecksums.chunkStart(n - 1);
    assertThat(last).isBetween(1L, (long) C); // the last chunk is never empty, at most full
    assertThat(ChunkChecksums.chunkOf(length - 1)).isEqualTo(n - 1);
  }

  @Property
  void alignment_widensARangeToTheChunksHoldingIt(@ForAll @LongRange(min = 1, max = 1L << 30) long length,
      @ForAll @LongRange(min = 0, max = 1L << 30) long a, @ForAll @LongRange(min = 0, max = 1L << 30) long b) {
    long from = Math.min(a, b) % length;
    long to = Math.min(length, Math.max(a, b) % length + 1);
    long start = ChunkChecksums.alignDown(from);
    long end = ChunkChecksums.alignUp(to, length);
    assertThat(start).isLessThanOrEqualTo(from).isGreaterThan(from - C);
    assertThat(start % C).isZero();
    assertThat(end).isGreaterThanOrEqualTo(to).isLessThanOrEqualTo(length);
    assertThat(end == length || end % C == 0).isTrue();
    assertThat(end - to).isLessThan(C);
    // the widened range is exactly the chunks the range touches
    assertThat(ChunkChecksums.chunkOf(start)).isEqualTo(ChunkChecksums.chunkOf(from));
    assertThat(ChunkChecksums.chunkOf(end - 1)).isEqualTo(ChunkChecksums.chunkOf(to - 1));
  }

  @Property(tries = 200)
  void builder_fedInAnyPieces_matchesCrc32cOfEachChunk(@ForAll @IntRange(min = 0, max = 5 * C + 17) int length,
      @ForAll @IntRange(min = 1, max = 3 * C) int piece, @ForAll long seed) {
    byte[] data = new byte[length];
    new Random(seed).nextBytes(data);
    ChunkChecksums.Builder b = new ChunkChecksums.Builder();
    for (int off = 0; off < length; off += piece) {
      int n = Math.min(piece, length - off);
      if ((off / piece) % 2 == 0) {
        b.update(data, off, n);
      } else {
        b.update(ByteBuffer.wrap(data, off, n));
      }
      assertThat(b.completed()).isEqualTo((off + n) / C);
    }
    int[] sums = b.finish();
    assertThat(sums).hasSize(ChunkChecksums.chunkCount(length));
    for (int i = 0; i < sums.length; i++) {
      int from = i * C;
      int to = (int) ChunkChecksums.chunkEnd(i, length);
      CRC32C c = new CRC32C();
      c.update(data, from, to - from);
      assertThat(sums[i]).as("chunk %d", i).isEqualTo((int) c.getValue());
    }
    assertThat(b.finish()).containsExactly(sums); // finishing again changes nothing
  }

  @Property(tries = 200)
  void firstMismatch_overPieces_findsTheFlippedChunk_whereverThePiecesAreCut(
      @ForAll @IntRange(min = 1, max = 4 * C + 17) int length, @ForAll @IntRange(min = 1, max = 2 * C) int piece,
      @ForAll @IntRange(min = -1, max = 4 * C + 16) int flip, @ForAll long seed) {
    byte[] data = new byte[length];
    new Random(seed).nextBytes(data);
    java.util.List<Integer> sums = java.util.Arrays.stream(ChunkChecksums.of(ByteBuffer.wrap(data))).boxed().toList();
    boolean flipped = flip >= 0 && flip < length;
    if (flipped) {
      data[flip] ^= 0x40;
    }
    java.util.List<ByteBuffer> pieces = new java.util.ArrayList<>();
    for (int off = 0; off < length; off += piece) {
      // each piece a view into a larger buffer, at a position other than 0, as Netty's are
      ByteBuffer big = ByteBuffer.allocate(piece + 3);
      int n = Math.min(piece, length - off);
      big.position(3);
      big.put(data, off, n).position(3).limit(3 + n);
      pieces.add(big);
    }
    int bad = ChunkChecksums.firstMismatch(pieces, sums);
    assertThat(bad).isEqualTo(flipped ? flip / C : -1);
    assertThat(pieces.get(0).position()).isEqualTo(3); // positions left alone
  }

  @Example
  void zeroLengthBlock_hasNoChecksums() {
    assertThat(ChunkChecksums.of(ByteBuffer.allocate(0))).isEmpty();
    assertThat(new ChunkChecksums.Builder().hasPartial()).isFalse();
  }

  @Example
  void exactMultiple_hasNoPartialChunk() {
    ChunkChecksums.Builder b = new ChunkChecksums.Builder();
    b.update(new byte[2 * C], 0, 2 * C);
    assertThat(b.completed()).isEqualTo(2);
    assertThat(b.hasPartial()).isFalse();
    assertThat(b.finish()).hasSize(2);
  }
}
