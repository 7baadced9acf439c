package io.strata.common.conf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.time.Duration;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

/**
 * Properties of duration parsing (config keys, CLI TTLs and timeouts): a parsed duration is never
 * negative, is exactly what was written when it fits in a long of milliseconds, and is refused naming the
 * maximum when it does not, for every number and unit.
 */
class DurationParsingPropertiesTest {
  private static final BigInteger MAX_MS = BigInteger.valueOf(Long.MAX_VALUE);

  @Provide
  Arbitrary<String> units() {
    return Arbitraries.of("", "ms", "s", "sec", "m", "min", "h", "d", "MS", "S", "H", "D");
  }

  private static long unitMs(String unit) {
    switch (unit.toLowerCase(java.util.Locale.ROOT)) {
      case "": case "ms": return 1L;
      case "s": case "sec": return 1_000L;
      case "m": case "min": return 60_000L;
      case "h": return 3_600_000L;
      default: return 86_400_000L;
    }
  }

  @Property(tries = 2000)
  void aParsedDuration_isExactAndNonNegative_orRefusedNamingTheMaximum(
      @ForAll @LongRange(min = 0) long n, @ForAll("units") String unit) {
    BigInteger exactMs = BigInteger.valueOf(n).multiply(BigInteger.valueOf(unitMs(unit)));
    String raw = n + unit;
    if (exactMs.compareTo(MAX_MS) <= 0) {
      Duration d = ValueParser.parseDuration(raw);
      assertThat(d.isNegative()).isFalse();
      assertThat(d.toMillis()).isEqualTo(exactMs.longValueExact());
    } else {
      assertThatThrownBy(() -> ValueParser.parseDuration(raw))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("'" + raw + "' is too large")
          .hasMessageContaining("maximum is " + Long.MAX_VALUE + "ms");
    }
  }

  @Property(tries = 200)
  void numbersBeyondALong_areRefusedNamingTheMaximum(@ForAll @LongRange(min = 1, max = 1_000_000) long extra,
      @ForAll("units") String unit) {
    String raw = BigInteger.valueOf(Long.MAX_VALUE).add(BigInteger.valueOf(extra)) + unit;
    assertThatThrownBy(() -> ValueParser.parseDuration(raw))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maximum is " + Long.MAX_VALUE + "ms");
  }
}
