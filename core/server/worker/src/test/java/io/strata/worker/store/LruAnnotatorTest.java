package io.strata.worker.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class LruAnnotatorTest extends BlockAnnotatorContractTest {
  @Override
  BlockAnnotator newAnnotator() {
    return new LruAnnotator();
  }

  @Override
  int trackedBlocks(BlockAnnotator annotator) {
    return ((LruAnnotator) annotator).trackedBlocks();
  }

  @Test
  void coldestFirst_ordersByLastAccessOnly_ignoringHowOften() {
    LruAnnotator lru = new LruAnnotator();
    for (int i = 0; i < 50; i++) {
      lru.onAccess(1);
    }
    lru.onAccess(2);
    lru.onAccess(3);
    assertThat(lru.coldestFirst(List.of(1L, 2L, 3L))).containsExactly(1L, 2L, 3L);
  }

  @Test
  void onAccess_makesABlockTheHottest() {
    LruAnnotator lru = new LruAnnotator();
    lru.onAccess(1);
    lru.onAccess(2);
    lru.onAccess(3);
    lru.onAccess(1);
    assertThat(lru.coldestFirst(List.of(1L, 2L, 3L))).containsExactly(2L, 3L, 1L);
  }

  @Test
  void aRemovedBlock_accessedAgain_isTrackedAfresh() {
    LruAnnotator lru = new LruAnnotator();
    lru.onAccess(1);
    lru.onAccess(2);
    lru.onRemove(1);
    lru.onAccess(1);
    assertThat(lru.coldestFirst(List.of(1L, 2L))).containsExactly(2L, 1L);
    assertThat(lru.trackedBlocks()).isEqualTo(2);
  }
}
