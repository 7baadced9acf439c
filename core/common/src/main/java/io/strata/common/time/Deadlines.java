package io.strata.common.time;

import java.time.Duration;

/**
 * Saturating time arithmetic for deadlines, TTL expiries, lease ends, retry windows and backoffs, so that
 * a huge duration (a TTL of {@code Long.MAX_VALUE} meaning "never", a {@code 10000d} timeout) means "far
 * in the future" instead of overflowing into the past.
 *
 * <p>Two kinds of instants are handled:
 * <ul>
 *   <li>wall-clock milliseconds (epoch millis, {@link System#currentTimeMillis()}, a {@code Clock}):
 *       {@link #plusMillis} saturates at {@link Long#MAX_VALUE}, which reads as "never";</li>
 *   <li>{@link System#nanoTime()} readings, which may be negative and wrap: {@link #nanoDeadline} caps
 *       the timeout at {@link #MAX_NANO_TIMEOUT} (about 146 years) and {@link #nanoReached} compares by
 *       difference, as {@code System.nanoTime()} requires.</li>
 * </ul>
 *
 * <p>Stateless; every method is thread-safe.
 */
public final class Deadlines {
  /** The longest timeout a nanoTime deadline can express safely: half the range of a long. */
  public static final long MAX_NANO_TIMEOUT = Long.MAX_VALUE / 2;

  private Deadlines() {}

  /** {@code a + b}, clamped to [{@link Long#MIN_VALUE}, {@link Long#MAX_VALUE}] instead of wrapping. */
  public static long saturatedAdd(long a, long b) {
    long r = a + b;
    // Overflow iff both operands have the sign opposite to the result.
    if (((a ^ r) & (b ^ r)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return r;
  }

  /** {@code a * b}, clamped instead of wrapping. */
  public static long saturatedMultiply(long a, long b) {
    long hi = Math.multiplyHigh(a, b);
    long lo = a * b;
    if ((hi == 0 && lo >= 0) || (hi == -1 && lo < 0)) {
      return lo;
    }
    return (a < 0) == (b < 0) ? Long.MAX_VALUE : Long.MIN_VALUE;
  }

  /**
   * The instant {@code durationMs} after {@code startMs} (epoch millis), saturating at
   * {@link Long#MAX_VALUE} ("never"). A negative duration counts as zero, so the result is never
   * before {@code startMs}.
   */
  public static long plusMillis(long startMs, long durationMs) {
    return saturatedAdd(startMs, Math.max(0L, durationMs));
  }

  /** {@link #plusMillis(long, long)} with a {@link Duration}. */
  public static long plusMillis(long startMs, Duration duration) {
    return plusMillis(startMs, toMillisSaturated(duration));
  }

  /** The duration in milliseconds, saturating at {@link Long#MAX_VALUE} / {@link Long#MIN_VALUE}. */
  public static long toMillisSaturated(Duration d) {
    try {
      return d.toMillis();
    } catch (ArithmeticException e) {
      return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }

  /** The duration in nanoseconds, saturating at {@link Long#MAX_VALUE} / {@link Long#MIN_VALUE}. */
  public static long toNanosSaturated(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }

  /**
   * True when {@code nowMs} is at or past the wall-clock instant {@code deadlineMs}. {@link Long#MAX_VALUE}
   * (what {@link #plusMillis} saturates to) is "never" and is never reached.
   */
  public static boolean reachedMillis(long nowMs, long deadlineMs) {
    return deadlineMs != Long.MAX_VALUE && nowMs >= deadlineMs;
  }

  /**
   * A {@link System#nanoTime()} deadline {@code timeout} after {@code nowNanos}; the timeout is clamped to
   * [0, {@link #MAX_NANO_TIMEOUT}] so that {@link #nanoReached} stays correct. Compare only with
   * {@link #nanoReached} / {@link #nanosLeft}, never with {@code <}.
   */
  public static long nanoDeadline(long nowNanos, Duration timeout) {
    return nanoDeadline(nowNanos, toNanosSaturated(timeout));
  }

  /** {@link #nanoDeadline(long, Duration)} with a timeout in nanoseconds. */
  public static long nanoDeadline(long nowNanos, long timeoutNanos) {
    return nowNanos + Math.min(MAX_NANO_TIMEOUT, Math.max(0L, timeoutNanos));
  }

  /** True when {@code nowNanos} is at or past the nanoTime deadline. */
  public static boolean nanoReached(long nowNanos, long deadlineNanos) {
    return nowNanos - deadlineNanos >= 0;
  }

  /** Nanoseconds left until the nanoTime deadline, never negative. */
  public static long nanosLeft(long nowNanos, long deadlineNanos) {
    return Math.max(0L, deadlineNanos - nowNanos);
  }

  /**
   * The next backoff after {@code currentMs}: doubled, saturating, and at most {@code maxMs} (and at least
   * 1 ms, so a zero backoff still grows).
   */
  public static long nextBackoffMillis(long currentMs, long maxMs) {
    return Math.min(Math.max(1L, maxMs), Math.max(1L, saturatedMultiply(Math.max(0L, currentMs), 2)));
  }
}
