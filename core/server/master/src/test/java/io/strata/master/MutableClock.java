package io.strata.master;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock that only moves when a test moves it, so time-dependent rules (modification times, worker
 * timeouts) are checked exactly rather than by sleeping. Thread-safe: the instant is volatile.
 */
public final class MutableClock extends Clock {
  private volatile Instant now;
  private final ZoneId zone;

  public MutableClock(long startMillis) {
    this(Instant.ofEpochMilli(startMillis), ZoneOffset.UTC);
  }

  private MutableClock(Instant now, ZoneId zone) {
    this.now = now;
    this.zone = zone;
  }

  public void advance(Duration d) {
    now = now.plus(d);
  }

  public void advanceMillis(long ms) {
    advance(Duration.ofMillis(ms));
  }

  public void setMillis(long ms) {
    now = Instant.ofEpochMilli(ms);
  }

  @Override
  public ZoneId getZone() {
    return zone;
  }

  @Override
  public Clock withZone(ZoneId z) {
    return new MutableClock(now, z);
  }

  @Override
  public Instant instant() {
    return now;
  }
}
