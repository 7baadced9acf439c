package io.strata.common.conf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ValueParserTest {
  private static final long KIB = 1024L;
  private static final long MIB = 1024L * 1024;
  private static final long GIB = 1024L * 1024 * 1024;

  // ---- sizes ----

  @Test
  void parseBytes_bareNumber_isBytes() {
    assertThat(ValueParser.parseBytes("4096")).isEqualTo(4096L);
    assertThat(ValueParser.parseBytes("0")).isZero();
    assertThat(ValueParser.parseBytes("7B")).isEqualTo(7L);
  }

  @Test
  void parseBytes_unitsAreBinary_withAndWithoutI() {
    assertThat(ValueParser.parseBytes("64MB")).isEqualTo(64 * MIB);
    assertThat(ValueParser.parseBytes("64MiB")).isEqualTo(64 * MIB);
    assertThat(ValueParser.parseBytes("64m")).isEqualTo(64 * MIB);
    assertThat(ValueParser.parseBytes("1k")).isEqualTo(KIB);
    assertThat(ValueParser.parseBytes("3KB")).isEqualTo(3 * KIB);
    assertThat(ValueParser.parseBytes("2GiB")).isEqualTo(2 * GIB);
    assertThat(ValueParser.parseBytes("1TB")).isEqualTo(1L << 40);
    assertThat(ValueParser.parseBytes("1PB")).isEqualTo(1L << 50);
  }

  @Test
  void parseBytes_fractionalNumber_isScaledByTheUnit() {
    assertThat(ValueParser.parseBytes("1.5GB")).isEqualTo(GIB + GIB / 2);
    assertThat(ValueParser.parseBytes("0.5k")).isEqualTo(512L);
  }

  @Test
  void parseBytes_allowsSpacesAroundAndBeforeTheUnit() {
    assertThat(ValueParser.parseBytes("  10 KB ")).isEqualTo(10 * KIB);
  }

  @Test
  void parseBytes_unknownUnit_isRejectedNamingTheValueAndTheUnit() {
    assertThatThrownBy(() -> ValueParser.parseBytes("10XB"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'10XB'")
        .hasMessageContaining("unknown size unit 'XB'");
  }

  @Test
  void parseBytes_notANumber_isRejectedNamingTheValue() {
    assertThatThrownBy(() -> ValueParser.parseBytes("lots"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'lots'")
        .hasMessageContaining("not a size");
    assertThatThrownBy(() -> ValueParser.parseBytes("-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'-1'");
    assertThatThrownBy(() -> ValueParser.parseBytes(""))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void parseBytes_largestRepresentable_isAccepted() {
    assertThat(ValueParser.parseBytes("8191PB")).isEqualTo(8191L << 50);
  }

  @Test
  void parseBytes_valueOfTwoToThe63_isTooLarge_notClampedToLongMax() {
    // 8192PB is exactly 2^63, one more than Long.MAX_VALUE
    assertThatThrownBy(() -> ValueParser.parseBytes("8192PB"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'8192PB'")
        .hasMessageContaining("too large");
    assertThatThrownBy(() -> ValueParser.parseBytes("99999999999999999999"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("too large");
  }

  // ---- durations ----

  @Test
  void parseDuration_units() {
    assertThat(ValueParser.parseDuration("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(ValueParser.parseDuration("10s")).isEqualTo(Duration.ofSeconds(10));
    assertThat(ValueParser.parseDuration("10sec")).isEqualTo(Duration.ofSeconds(10));
    assertThat(ValueParser.parseDuration("5min")).isEqualTo(Duration.ofMinutes(5));
    assertThat(ValueParser.parseDuration("5m")).isEqualTo(Duration.ofMinutes(5));
    assertThat(ValueParser.parseDuration("2h")).isEqualTo(Duration.ofHours(2));
    assertThat(ValueParser.parseDuration("1d")).isEqualTo(Duration.ofDays(1));
  }

  @Test
  void parseDuration_bareNumber_isMilliseconds() {
    assertThat(ValueParser.parseDuration("250")).isEqualTo(Duration.ofMillis(250));
    assertThat(ValueParser.parseDuration("0")).isEqualTo(Duration.ZERO);
  }

  @Test
  void parseDuration_unitIsCaseInsensitive_andMayBeSpaced() {
    assertThat(ValueParser.parseDuration("10 S")).isEqualTo(Duration.ofSeconds(10));
    assertThat(ValueParser.parseDuration(" 3MS ")).isEqualTo(Duration.ofMillis(3));
  }

  @Test
  void parseDuration_unknownUnit_isRejectedNamingTheValue() {
    assertThatThrownBy(() -> ValueParser.parseDuration("10x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'10x'")
        .hasMessageContaining("unknown duration unit 'x'");
    assertThatThrownBy(() -> ValueParser.parseDuration("3weeks"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'3weeks'");
  }

  @Test
  void parseDuration_fractionNegativeOrEmpty_isRejectedNamingTheValue() {
    assertThatThrownBy(() -> ValueParser.parseDuration("1.5s"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'1.5s'")
        .hasMessageContaining("not a duration");
    assertThatThrownBy(() -> ValueParser.parseDuration("-5s"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'-5s'");
    assertThatThrownBy(() -> ValueParser.parseDuration(""))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void parseDuration_overflowingHoursOrDays_isAnIllegalArgument() {
    assertThatThrownBy(() -> ValueParser.parseDuration("9223372036854775807h"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'9223372036854775807h'")
        .hasMessageContaining("too large");
    assertThatThrownBy(() -> ValueParser.parseDuration("999999999999999d"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("too large");
  }

  // ---- lists ----

  @Test
  void parseList_splitsOnCommas_trimsAndDropsEmpties() {
    assertThat(ValueParser.parseList(" a, b ,,c ,")).containsExactly("a", "b", "c");
  }

  @Test
  void parseList_emptyString_isEmptyList() {
    assertThat(ValueParser.parseList("")).isEmpty();
    assertThat(ValueParser.parseList(" , ")).isEmpty();
  }

  @Test
  void parseList_keepsInnerSpaces_andIsImmutable() {
    List<String> list = ValueParser.parseList("host one:1, host two:2");
    assertThat(list).containsExactly("host one:1", "host two:2");
    assertThatThrownBy(() -> list.add("x")).isInstanceOf(UnsupportedOperationException.class);
  }
}
