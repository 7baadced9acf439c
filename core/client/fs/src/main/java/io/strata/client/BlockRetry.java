package io.strata.client;

import io.strata.common.conf.StrataConf;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.StrataException;
import io.strata.common.time.Deadlines;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.ClosedByInterruptException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The retries of one block read or one block write after failures of the copy (worker) it was using: how
 * many are left ({@link ClientKeys#BLOCK_READ_RETRY_MAX}, {@link ClientKeys#BLOCK_WRITE_RETRY_MAX}), the
 * backoff before the next one (exponential from {@link ClientKeys#BLOCK_RETRY_BACKOFF_BASE}, doubling up
 * to {@link ClientKeys#BLOCK_RETRY_BACKOFF_MAX}, never past the deadline), the total time allowed from the
 * first failure ({@link ClientKeys#BLOCK_RETRY_TOTAL_TIMEOUT}), and every source that failed with its
 * failure, for the error after the last attempt.
 *
 * <p>Which failures are a failure of the copy, worth trying another copy for ({@link #isCopyFailure}): the
 * worker is gone or unreachable (UNAVAILABLE, a reset connection), silent (DEADLINE_EXCEEDED), ended the
 * stream (CANCELLED, a stream cut short: DATA_LOSS), lacks the block (NOT_FOUND), holds a corrupt copy
 * (DATA_LOSS), failed inside (INTERNAL), or a local read of its file failed (a plain I/O error). Anything
 * else (a bad argument, a full cache, a refused commit) would fail the same on every copy.
 *
 * <p>Time and sleeping are injected, so tests advance a fake clock. Not thread-safe: one stream's thread.
 */
final class BlockRetry {
  /** The limits, from the configuration. */
  record Policy(int maxRetries, long backoffBaseMs, long backoffMaxMs, Duration total, String retriesKey) {
    static Policy reads(StrataConf conf) {
      return of(conf, conf.get(ClientKeys.BLOCK_READ_RETRY_MAX), ClientKeys.BLOCK_READ_RETRY_MAX.name());
    }

    static Policy writes(StrataConf conf) {
      return of(conf, conf.get(ClientKeys.BLOCK_WRITE_RETRY_MAX), ClientKeys.BLOCK_WRITE_RETRY_MAX.name());
    }

    private static Policy of(StrataConf conf, int retries, String key) {
      return new Policy(retries, Deadlines.toMillisSaturated(conf.get(ClientKeys.BLOCK_RETRY_BACKOFF_BASE)),
          Deadlines.toMillisSaturated(conf.get(ClientKeys.BLOCK_RETRY_BACKOFF_MAX)),
          conf.get(ClientKeys.BLOCK_RETRY_TOTAL_TIMEOUT), key);
    }
  }

  /** Waits between attempts; the default sleeps. */
  @FunctionalInterface
  interface Sleeper {
    void sleep(long ms) throws InterruptedException;
  }

  private final Policy policy;
  private final LongSupplier nanoClock;
  private final Sleeper sleeper;
  private final List<String> failures = new ArrayList<>();
  private int retries;
  private long nextBackoffMs;
  private long deadlineNanos;
  private String stopReason = "";

  BlockRetry(Policy policy) {
    this(policy, System::nanoTime, Thread::sleep);
  }

  BlockRetry(Policy policy, LongSupplier nanoClock, Sleeper sleeper) {
    this.policy = policy;
    this.nanoClock = nanoClock;
    this.sleeper = sleeper;
    this.nextBackoffMs = policy.backoffBaseMs();
  }

  /** True when {@code e} is a failure of the copy being used, so another copy (or worker) may succeed. */
  static boolean isCopyFailure(IOException e) {
    if (e instanceof StrataException se) {
      ErrorCode c = se.code();
      return c == ErrorCode.UNAVAILABLE || c == ErrorCode.DEADLINE_EXCEEDED || c == ErrorCode.CANCELLED
          || c == ErrorCode.NOT_FOUND || c == ErrorCode.DATA_LOSS || c == ErrorCode.INTERNAL;
    }
    // A local (short-circuit) read of the worker's file: an I/O error of that copy, unless we were interrupted.
    return !(e instanceof InterruptedIOException) && !(e instanceof ClosedByInterruptException);
  }

  /**
   * Records that {@code source} failed with {@code e}. When one more attempt is allowed (retries and time
   * left), backs off and returns true; otherwise returns false and {@link #stopReason()} says why.
   */
  boolean retryAfter(String source, IOException e) throws InterruptedIOException {
    failures.add(source + " (" + describe(e) + ")");
    long now = nanoClock.getAsLong();
    if (failures.size() == 1) {
      deadlineNanos = Deadlines.nanoDeadline(now, policy.total());
    }
    if (retries >= policy.maxRetries()) {
      stopReason = "no retries left (" + policy.retriesKey() + "=" + policy.maxRetries() + ")";
      return false;
    }
    if (Deadlines.nanoReached(now, deadlineNanos)) {
      stopReason = "out of time (" + ClientKeys.BLOCK_RETRY_TOTAL_TIMEOUT.name() + "=" + policy.total() + ")";
      return false;
    }
    long sleepMs = Math.min(nextBackoffMs, TimeUnit.NANOSECONDS.toMillis(Deadlines.nanosLeft(now, deadlineNanos)));
    try {
      if (sleepMs > 0) {
        sleeper.sleep(sleepMs);
      }
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while backing off after " + source + " failed");
    }
    nextBackoffMs = Deadlines.nextBackoffMillis(nextBackoffMs, policy.backoffMaxMs());
    retries++;
    return true;
  }

  /** Retries done so far. */
  int retries() {
    return retries;
  }

  /** The backoff the next retry waits (before the deadline caps it). */
  long nextBackoffMs() {
    return nextBackoffMs;
  }

  /** Why {@link #retryAfter} last returned false; empty before. */
  String stopReason() {
    return stopReason;
  }

  /** Every source that failed, in order, each with its failure. */
  List<String> failures() {
    return List.copyOf(failures);
  }

  /** "tried N: a (CODE: why); b (CODE: why)", for a final error message; empty when nothing failed. */
  String tried() {
    return failures.isEmpty() ? "" : "tried " + failures.size() + ": " + String.join("; ", failures);
  }

  /**
   * The error after the last attempt: the code of {@code last}, a message naming {@code what} (the file,
   * block and position), every source tried with its failure, and why it stopped.
   */
  StrataException finalError(String what, IOException last) {
    ErrorCode code = last instanceof StrataException se ? se.code() : ErrorCode.DATA_LOSS;
    StringBuilder msg = new StringBuilder(what).append(" failed");
    if (!failures.isEmpty()) {
      msg.append("; ").append(tried());
    }
    if (!stopReason.isEmpty()) {
      msg.append("; ").append(stopReason);
    } else if (!failures.isEmpty()) {
      msg.append("; then: ").append(describe(last));
    } else {
      msg.append(": ").append(describe(last));
    }
    return code.toException(msg.toString(), last);
  }

  /** {@code CODE: message} (or the exception's class for a plain I/O error), at most 300 characters of message. */
  static String describe(IOException e) {
    String m = String.valueOf(e.getMessage());
    if (m.length() > 300) {
      m = m.substring(0, 300) + "...";
    }
    return e instanceof StrataException se ? se.code() + ": " + m : e.getClass().getSimpleName() + ": " + m;
  }
}
