package io.strata.worker.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class LrfuAnnotatorTest extends BlockAnnotatorContractTest {
  @Override
  BlockAnnotator newAnnotator() {
    return new LrfuAnnotator();
  }

  @Override
  int trackedBlocks(BlockAnnotator annotator) {
    return ((LrfuAnnotator) annotator).trackedBlocks();
  }

  private static void access(BlockAnnotator annotator, long id, int times) {
    for (int i = 0; i < times; i++) {
      annotator.onAccess(id);
    }
  }

  @Test
  void crf_followsTheLrfuFormula_withTheDefaults() {
    LrfuAnnotator lrfu = new LrfuAnnotator(); // F(x) = 2^(-x/4)
    lrfu.onAccess(1); // t=1: crf(1) = 1
    lrfu.onAccess(2); // t=2: crf(2) = 1
    lrfu.onAccess(1); // t=3: crf(1) = 1 * F(2) + 1
    double f1 = Math.pow(2, -0.25);
    double f2 = Math.pow(2, -0.5);
    assertThat(lrfu.currentCrf(1)).isCloseTo(1 + f2, within(1e-12));
    assertThat(lrfu.currentCrf(2)).isCloseTo(f1, within(1e-12));
    lrfu.onAccess(3); // t=4: everything else decays one step
    assertThat(lrfu.currentCrf(1)).isCloseTo((1 + f2) * f1, within(1e-12));
    assertThat(lrfu.currentCrf(2)).isCloseTo(f2, within(1e-12));
    assertThat(lrfu.currentCrf(3)).isEqualTo(1.0);
    assertThat(lrfu.currentCrf(99)).isZero();
  }

  @Test
  void stepFactorZero_behavesLikeLfu() {
    LrfuAnnotator lfu = new LrfuAnnotator(0, 2);
    access(lfu, 1, 3); // most frequent, least recent
    access(lfu, 2, 1);
    access(lfu, 3, 2);
    assertThat(lfu.coldestFirst(List.of(1L, 2L, 3L))).containsExactly(2L, 3L, 1L);
    assertThat(lfu.currentCrf(1)).isEqualTo(3.0);
  }

  @Test
  void stepFactorZero_breaksTiesInCount_byOlderAccessFirst() {
    LrfuAnnotator lfu = new LrfuAnnotator(0, 2);
    access(lfu, 7, 2);
    access(lfu, 4, 2);
    assertThat(lfu.coldestFirst(List.of(4L, 7L))).containsExactly(7L, 4L);
  }

  @Test
  void stepFactorOne_behavesLikeLru() {
    LrfuAnnotator lru = new LrfuAnnotator(1, 2);
    access(lru, 1, 20); // very frequent, least recent
    access(lru, 2, 1);
    access(lru, 3, 5);
    access(lru, 4, 1);
    assertThat(lru.coldestFirst(List.of(1L, 2L, 3L, 4L))).containsExactly(1L, 2L, 3L, 4L);
  }

  @Test
  void defaults_letAFrequentButNotRecentBlock_outrankABlockUsedOnceRecently() {
    LrfuAnnotator lrfu = new LrfuAnnotator();
    access(lrfu, 1, 4); // t=1..4: crf(1) about 3.14 at t=4
    access(lrfu, 2, 1); // t=5: crf(2) = 1, while crf(1) decays to about 2.64
    assertThat(lrfu.coldestFirst(List.of(1L, 2L))).containsExactly(2L, 1L);

    LrfuAnnotator lru = new LrfuAnnotator(1, 2); // same accesses, pure recency: the other way round
    access(lru, 1, 4);
    access(lru, 2, 1);
    assertThat(lru.coldestFirst(List.of(1L, 2L))).containsExactly(1L, 2L);
  }

  @Test
  void defaults_letAFrequentBlockCoolDown_onceItIsNotUsedForLong() {
    LrfuAnnotator lrfu = new LrfuAnnotator();
    access(lrfu, 1, 4); // t=1..4
    access(lrfu, 3, 8); // t=5..12: block 1 decays by 2^(-2)
    access(lrfu, 2, 1); // t=13: block 1 is now at about 3.14 * 2^(-9/4) = 0.66 < 1
    assertThat(lrfu.coldestFirst(List.of(1L, 2L, 3L))).containsExactly(1L, 2L, 3L);
  }

  @Test
  void order_survivesDecayPastDoubleUnderflow() {
    LrfuAnnotator lrfu = new LrfuAnnotator();
    access(lrfu, 1, 10); // t=1..10: crf about 5.17
    access(lrfu, 2, 1); // t=11: crf 1; block 1 is hotter (5.17 * 2^(-1/4) = 4.35 > 1)
    access(lrfu, 3, 10_000); // both now decay by 2^(-2500), far below Double.MIN_VALUE
    assertThat(lrfu.currentCrf(1)).isZero(); // the raw value has underflowed...
    assertThat(lrfu.currentCrf(2)).isZero();
    assertThat(lrfu.coldestFirst(List.of(1L, 2L, 3L))).containsExactly(2L, 1L, 3L); // ...the order not
  }

  @Test
  void crf_staysBounded_underEndlessAccessesToOneBlock() {
    LrfuAnnotator lrfu = new LrfuAnnotator();
    access(lrfu, 1, 100_000);
    double bound = 1 / (1 - Math.pow(2, -0.25)); // geometric series limit, about 6.29
    assertThat(lrfu.currentCrf(1)).isLessThan(bound).isGreaterThan(bound - 1e-6);
  }

  @Test
  void constructor_refusesAStepFactorOutsideZeroToOne_namingIt() {
    assertThatThrownBy(() -> new LrfuAnnotator(-0.1, 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("stepFactor")
        .hasMessageContaining("-0.1");
    assertThatThrownBy(() -> new LrfuAnnotator(1.5, 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1.5");
    assertThatThrownBy(() -> new LrfuAnnotator(Double.NaN, 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("NaN");
  }

  @Test
  void constructor_refusesAnAttenuationBelowTwo_namingIt() {
    assertThatThrownBy(() -> new LrfuAnnotator(0.5, 1.9))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("attenuation")
        .hasMessageContaining("1.9");
    assertThatThrownBy(() -> new LrfuAnnotator(0.5, Double.POSITIVE_INFINITY))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Infinity");
  }

  @Test
  void constructor_acceptsTheBoundaries() {
    assertThatCode(() -> new LrfuAnnotator(0, 2)).doesNotThrowAnyException();
    assertThatCode(() -> new LrfuAnnotator(1, 1000)).doesNotThrowAnyException();
  }
}
