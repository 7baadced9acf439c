package io.strata.common.format;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Times and sizes as the CLI and the web UI print them. */
class TimesTest {
  @Test
  void iso_isUtcWithMilliseconds() {
    assertThat(Times.iso(0)).isEqualTo("1970-01-01T00:00:00.000Z");
    assertThat(Times.iso(1_764_618_600_123L)).isEqualTo("2025-12-01T19:50:00.123Z");
  }

  @Test
  void duration_leavesOutLeadingZeroUnits() {
    assertThat(Times.duration(0)).isEqualTo("0s");
    assertThat(Times.duration(-5)).isEqualTo("0s");
    assertThat(Times.duration(42_999)).isEqualTo("42s");
    assertThat(Times.duration(3_600_000)).isEqualTo("1h 0m 0s");
    assertThat(Times.duration((2 * 86400 + 3 * 3600 + 4 * 60 + 5) * 1000L)).isEqualTo("2d 3h 4m 5s");
  }

  @Test
  void sizes_readAsHdfsPrintsThem() {
    assertThat(Sizes.human(512)).isEqualTo("512");
    assertThat(Sizes.human(1024)).isEqualTo("1 K");
    assertThat(Sizes.human(1_610_612_736L)).isEqualTo("1.5 G");
    assertThat(Sizes.human(1_048_575)).isEqualTo("1.0 M");
    assertThat(Sizes.bytesAndHuman(4_294_967_296L)).isEqualTo("4294967296 (4 G)");
  }
}
