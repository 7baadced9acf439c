package io.strata.common.time;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The elapsed-time clock: advances by its nano ticker alone, and wraps only the system clock. */
class ElapsedClockTest {
  @Test
  void advancesWithTheNanoTickerOnly() {
    AtomicLong nanos = new AtomicLong(-5_000_000_000L); // nanoTime readings may be negative
    Clock c = new ElapsedClock(1_000_000L, nanos::get, ZoneOffset.UTC);
    assertThat(c.millis()).isEqualTo(1_000_000L);
    nanos.addAndGet(Duration.ofSeconds(7).toNanos() + 999_999);
    assertThat(c.millis()).isEqualTo(1_007_000L);
    assertThat(c.instant()).isEqualTo(Instant.ofEpochMilli(1_007_000L));
    // Another zone keeps the origin: only the zone differs.
    Clock paris = c.withZone(ZoneId.of("Europe/Paris"));
    assertThat(paris.millis()).isEqualTo(1_007_000L);
    assertThat(paris.getZone()).isEqualTo(ZoneId.of("Europe/Paris"));
    nanos.addAndGet(Duration.ofMillis(1).toNanos());
    assertThat(paris.millis()).isEqualTo(1_007_001L);
  }

  @Test
  void wrapsTheSystemClockOnly() {
    Clock wrapped = ElapsedClock.of(Clock.systemUTC());
    assertThat(wrapped).isInstanceOf(ElapsedClock.class);
    assertThat(ElapsedClock.of(Clock.system(ZoneId.of("Europe/Paris")))).isInstanceOf(ElapsedClock.class);
    assertThat(ElapsedClock.of(wrapped)).isSameAs(wrapped);
    // A hand-driven clock (tests move it) is used as it is.
    Clock fixed = Clock.fixed(Instant.ofEpochMilli(42), ZoneOffset.UTC);
    assertThat(ElapsedClock.of(fixed)).isSameAs(fixed);
    // Starts at the wall clock's reading: reports still show epoch times.
    assertThat(Math.abs(wrapped.millis() - System.currentTimeMillis())).isLessThan(60_000L);
  }
}
