package io.strata.common.id;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BlockIdTest {

  @Test
  void limits_matchTheDocumentedBitLayout() {
    assertThat(BlockId.INDEX_BITS).isEqualTo(24);
    assertThat(BlockId.FILE_ID_BITS).isEqualTo(39);
    assertThat(BlockId.MAX_INDEX).isEqualTo(16_777_215L);
    assertThat(BlockId.MAX_FILE_ID).isEqualTo(549_755_813_887L);
  }

  @Test
  void of_zeroZero_isZero() {
    assertThat(BlockId.of(0, 0)).isZero();
    assertThat(BlockId.fileId(0)).isZero();
    assertThat(BlockId.index(0)).isZero();
  }

  @Test
  void of_putsFileIdAboveTheIndexBits() {
    assertThat(BlockId.of(1, 0)).isEqualTo(1L << 24);
    assertThat(BlockId.of(1, 5)).isEqualTo((1L << 24) + 5);
    assertThat(BlockId.of(0, BlockId.MAX_INDEX)).isEqualTo(BlockId.MAX_INDEX);
  }

  @Test
  void roundTrip_atBoundaries() {
    long[][] cases = {
        {0, 0},
        {0, BlockId.MAX_INDEX},
        {1, 0},
        {1, BlockId.MAX_INDEX},
        {BlockId.MAX_FILE_ID, 0},
        {BlockId.MAX_FILE_ID, 1},
        {BlockId.MAX_FILE_ID, BlockId.MAX_INDEX},
        {123_456_789L, 4_242L},
    };
    for (long[] c : cases) {
      long id = BlockId.of(c[0], c[1]);
      assertThat(BlockId.fileId(id)).as("file of (%d,%d)", c[0], c[1]).isEqualTo(c[0]);
      assertThat((long) BlockId.index(id)).as("index of (%d,%d)", c[0], c[1]).isEqualTo(c[1]);
      assertThat(BlockId.isValid(id)).isTrue();
    }
  }

  @Test
  void of_largestFileAndIndex_isLongMaxValue_andStillValid() {
    long id = BlockId.of(BlockId.MAX_FILE_ID, BlockId.MAX_INDEX);
    assertThat(id).isEqualTo(Long.MAX_VALUE);
    assertThat(BlockId.isValid(id)).isTrue();
  }

  @Test
  void isValid_rejectsNegativeIds() {
    assertThat(BlockId.isValid(-1)).isFalse();
    assertThat(BlockId.isValid(Long.MIN_VALUE)).isFalse();
  }

  @Test
  void of_rejectsNegativeFileId_namingTheValueAndRange() {
    assertThatThrownBy(() -> BlockId.of(-1, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("File id -1")
        .hasMessageContaining("[0, " + BlockId.MAX_FILE_ID + "]");
  }

  @Test
  void of_rejectsFileIdAboveMax_namingTheValue() {
    long tooBig = BlockId.MAX_FILE_ID + 1;
    assertThatThrownBy(() -> BlockId.of(tooBig, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("File id " + tooBig)
        .hasMessageContaining("outside");
    assertThatThrownBy(() -> BlockId.of(Long.MAX_VALUE, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("File id " + Long.MAX_VALUE);
  }

  @Test
  void of_rejectsNegativeIndex_namingTheValueAndRange() {
    assertThatThrownBy(() -> BlockId.of(7, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Block index -1")
        .hasMessageContaining("[0, " + BlockId.MAX_INDEX + "]");
  }

  @Test
  void of_rejectsIndexAboveMax_namingTheValue() {
    long tooBig = BlockId.MAX_INDEX + 1;
    assertThatThrownBy(() -> BlockId.of(7, tooBig))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Block index " + tooBig)
        .hasMessageContaining("outside");
  }

  @Test
  void adjacentFiles_haveAdjacentButDisjointRanges() {
    long lastOfFile1 = BlockId.of(1, BlockId.MAX_INDEX);
    long firstOfFile2 = BlockId.of(2, 0);
    assertThat(firstOfFile2).isEqualTo(lastOfFile1 + 1);
    assertThat(BlockId.fileId(lastOfFile1)).isEqualTo(1);
    assertThat(BlockId.fileId(firstOfFile2)).isEqualTo(2);
  }

  @Test
  void idsAreOrderedByFileThenIndex() {
    assertThat(BlockId.of(5, 0)).isLessThan(BlockId.of(5, 1));
    assertThat(BlockId.of(5, BlockId.MAX_INDEX)).isLessThan(BlockId.of(6, 0));
    assertThat(BlockId.of(BlockId.MAX_FILE_ID - 1, BlockId.MAX_INDEX))
        .isLessThan(BlockId.of(BlockId.MAX_FILE_ID, 0));
  }

  @Test
  void explicitPairsOfDifferentFiles_neverCollide() {
    long[][] pairs = {
        {0, 0, 1, 0},
        {0, BlockId.MAX_INDEX, 1, 0},
        {1, 1, 2, 1},
        {(1L << 38), 3, (1L << 38) - 1, 3},
        {BlockId.MAX_FILE_ID, BlockId.MAX_INDEX, BlockId.MAX_FILE_ID - 1, BlockId.MAX_INDEX},
        {0, 1, 1L << 24, 1}, // file id that equals a shifted index must not alias
    };
    for (long[] p : pairs) {
      assertThat(BlockId.of(p[0], p[1])).as("(%d,%d) vs (%d,%d)", p[0], p[1], p[2], p[3])
          .isNotEqualTo(BlockId.of(p[2], p[3]));
    }
  }

  @Test
  void randomSample_roundTripsAndNeverCollidesAcrossFiles() {
    SplittableRandom random = new SplittableRandom(20240501L);
    Map<Long, long[]> seen = new HashMap<>();
    for (int i = 0; i < 20_000; i++) {
      long fileId;
      long index;
      switch (i % 4) {
        case 0: // anywhere
          fileId = random.nextLong(BlockId.MAX_FILE_ID + 1);
          index = random.nextLong(BlockId.MAX_INDEX + 1);
          break;
        case 1: // small file ids, as a fresh master hands out
          fileId = random.nextLong(64);
          index = random.nextLong(64);
          break;
        case 2: // near the top of both ranges
          fileId = BlockId.MAX_FILE_ID - random.nextLong(64);
          index = BlockId.MAX_INDEX - random.nextLong(64);
          break;
        default: // index at a range edge
          fileId = random.nextLong(1L << 20);
          index = random.nextBoolean() ? 0 : BlockId.MAX_INDEX;
          break;
      }
      long id = BlockId.of(fileId, index);
      assertThat(BlockId.fileId(id)).isEqualTo(fileId);
      assertThat((long) BlockId.index(id)).isEqualTo(index);
      assertThat(BlockId.isValid(id)).isTrue();
      long[] previous = seen.putIfAbsent(id, new long[] {fileId, index});
      if (previous != null) {
        assertThat(previous).as("block id %d produced by two different (file, index) pairs", id)
            .containsExactly(fileId, index);
      }
    }
    assertThat(seen.size()).isGreaterThan(10_000); // the sample really did vary
  }
}
