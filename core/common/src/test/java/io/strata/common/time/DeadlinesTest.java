package io.strata.common.time;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.time.Duration;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/** Saturating time arithmetic: exact when it fits, clamped when it does not, never wrapped. */
class DeadlinesTest {
  private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);
  private static final BigInteger MIN = BigInteger.valueOf(Long.MIN_VALUE);

  private static long clamp(BigInteger exact) {
    return exact.max(MIN).min(MAX).longValueExact();
  }

  @Property
  void saturatedAdd_isTheExactSumClamped(@ForAll long a, @ForAll long b) {
    assertThat(Deadlines.saturatedAdd(a, b))
        .isEqualTo(clamp(BigInteger.valueOf(a).add(BigInteger.valueOf(b))));
  }

  @Property
  void saturatedMultiply_isTheExactProductClamped(@ForAll long a, @ForAll long b) {
    assertThat(Deadlines.saturatedMultiply(a, b))
        .isEqualTo(clamp(BigInteger.valueOf(a).multiply(BigInteger.valueOf(b))));
  }

  @Property
  void plusMillis_isNeverBeforeTheStart_andExactWhenItFits(
      @ForAll @LongRange(min = 0) long startMs, @ForAll long durationMs) {
    long end = Deadlines.plusMillis(startMs, durationMs);
    assertThat(end).isGreaterThanOrEqualTo(startMs);
    if (durationMs >= 0 && durationMs <= Long.MAX_VALUE - startMs) {
      assertThat(end).isEqualTo(startMs + durationMs);
    } else if (durationMs > 0) {
      assertThat(end).isEqualTo(Long.MAX_VALUE);
    }
  }

  @Property
  void nanoDeadline_isReachedOnlyAfterItsTimeout(@ForAll long nowNanos,
      @ForAll @LongRange(min = 1) long timeoutNanos, @ForAll @LongRange(min = 0, max = 1_000_000) long elapsed) {
    long deadline = Deadlines.nanoDeadline(nowNanos, timeoutNanos);
    long capped = Math.min(timeoutNanos, Deadlines.MAX_NANO_TIMEOUT);
    // Not reached before the timeout, however close nanoTime is to wrapping.
    assertThat(Deadlines.nanoReached(nowNanos + Math.min(elapsed, capped - 1), deadline)).isFalse();
    assertThat(Deadlines.nanoReached(nowNanos + capped, deadline)).isTrue();
  }

  @Test
  void durations_tooLargeForALong_saturate() {
    assertThat(Deadlines.toMillisSaturated(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
    assertThat(Deadlines.toNanosSaturated(Duration.ofDays(365L * 1000))).isEqualTo(Long.MAX_VALUE);
    assertThat(Deadlines.toNanosSaturated(Duration.ofSeconds(Long.MIN_VALUE))).isEqualTo(Long.MIN_VALUE);
    assertThat(Deadlines.plusMillis(System.currentTimeMillis(), Duration.ofSeconds(Long.MAX_VALUE)))
        .isEqualTo(Long.MAX_VALUE);
    // The saturated instant is "never": not reached even by a clock at its end.
    assertThat(Deadlines.reachedMillis(Long.MAX_VALUE, Long.MAX_VALUE)).isFalse();
    assertThat(Deadlines.reachedMillis(Long.MAX_VALUE, Long.MAX_VALUE - 1)).isTrue();
  }

  @Property
  void nextBackoff_growsButNeverPassesTheCap(@ForAll long current, @ForAll @LongRange(min = 1) long max) {
    long next = Deadlines.nextBackoffMillis(current, max);
    assertThat(next).isBetween(1L, max);
    if (current > 0 && current <= max / 2) {
      assertThat(next).isEqualTo(current * 2);
    }
  }
}
