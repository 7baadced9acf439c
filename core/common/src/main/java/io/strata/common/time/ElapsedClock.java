package io.strata.common.time;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.util.function.LongSupplier;

/**
 * A clock for measuring how long something has been silent (a write lease not renewed, a worker without a
 * heartbeat, a temporary block without an append), which the wall clock must not do: an NTP step forward of
 * ten minutes would expire every lease and lose every worker at once, one backward would keep them for ever.
 *
 * <p>{@link #of(Clock)} wraps the system clock: the result reads the wall clock once, at creation, and from then
 * on advances with {@link System#nanoTime()} only, so it reads as epoch millis (reports still make sense) but
 * never jumps. Any other clock (a test's hand-driven clock) is returned as it is, so tests that move time still
 * drive the timeouts.
 *
 * <p>Immutable and thread-safe.
 */
public final class ElapsedClock extends Clock {
  private final long originMs;
  private final long originNanos;
  private final LongSupplier nanos;
  private final ZoneId zone;

  /** Reads {@code originMs} as the time now, and advances it by {@code nanos}. */
  ElapsedClock(long originMs, LongSupplier nanos, ZoneId zone) {
    this(originMs, nanos.getAsLong(), nanos, zone);
  }

  private ElapsedClock(long originMs, long originNanos, LongSupplier nanos, ZoneId zone) {
    this.originMs = originMs;
    this.originNanos = originNanos;
    this.nanos = nanos;
    this.zone = zone;
  }

  /**
   * A clock that measures elapsed time as {@code clock} would, but immune to steps of the system clock when
   * {@code clock} is the system clock (of any zone); any other clock as it is.
   */
  public static Clock of(Clock clock) {
    if (clock instanceof ElapsedClock || !clock.getClass().equals(Clock.systemUTC().getClass())) {
      return clock;
    }
    return new ElapsedClock(clock.millis(), System::nanoTime, clock.getZone());
  }

  @Override
  public long millis() {
    // nanoTime readings are compared by difference only (they may wrap).
    return originMs + (nanos.getAsLong() - originNanos) / 1_000_000L;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis());
  }

  @Override
  public ZoneId getZone() {
    return zone;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return zone.equals(this.zone) ? this : new ElapsedClock(originMs, originNanos, nanos, zone);
  }
}
