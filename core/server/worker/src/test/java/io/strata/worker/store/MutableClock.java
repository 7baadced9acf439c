package io.strata.worker.store;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock that moves only when a test moves it, so the temp-block timeout is checked exactly instead of
 * by sleeping (also a master's clock, in the tests of the worker's master sync). Thread-safe: the instant is volatile.
 */
public final class MutableClock extends Clock {
  private volatile Instant now;

  public MutableClock(long startMillis) {
    this.now = Instant.ofEpochMilli(startMillis);
  }

  public void advance(Duration d) {
    now = now.plus(d);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException("tests use UTC only");
  }

  @Override
  public Instant instant() {
    return now;
  }
}
