package io.strata.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.conf.StrataConf;
import io.strata.common.exception.CancelledException;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.DeadlineExceededException;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InternalException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.OutOfRangeException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The retry budget of block reads and writes, on a fake clock: backoff, retry count, total time, errors. */
class BlockRetryTest {
  private long nowNanos = 1_000;
  private final List<Long> slept = new ArrayList<>();

  private BlockRetry retry(int retries, long baseMs, long maxMs, Duration total) {
    return new BlockRetry(new BlockRetry.Policy(retries, baseMs, maxMs, total, "strata.user.block.read.retry.max"),
        () -> nowNanos, ms -> {
          slept.add(ms);
          nowNanos += TimeUnit.MILLISECONDS.toNanos(ms);
        });
  }

  private static IOException unavailable(String why) {
    return new UnavailableException(why);
  }

  @Test
  void backoff_startsAtTheBase_doublesPerRetry_andStopsGrowingAtTheMax() throws Exception {
    BlockRetry r = retry(6, 50, 300, Duration.ofMinutes(1));
    for (int i = 0; i < 6; i++) {
      assertThat(r.retryAfter("worker w" + i, unavailable("gone"))).isTrue();
    }
    assertThat(slept).containsExactly(50L, 100L, 200L, 300L, 300L, 300L);
    assertThat(r.retries()).isEqualTo(6);
  }

  @Test
  void retries_stopAfterTheConfiguredCount_namingTheKey() throws Exception {
    BlockRetry r = retry(2, 10, 1000, Duration.ofMinutes(1));
    assertThat(r.retryAfter("worker a:1", unavailable("x"))).isTrue();
    assertThat(r.retryAfter("worker b:2", unavailable("y"))).isTrue();
    assertThat(r.retryAfter("worker c:3", unavailable("z"))).isFalse();
    assertThat(slept).containsExactly(10L, 20L); // no backoff before giving up
    assertThat(r.stopReason()).isEqualTo("no retries left (strata.user.block.read.retry.max=2)");
  }

  @Test
  void zeroRetries_makeTheFirstFailureFinal() throws Exception {
    BlockRetry r = retry(0, 10, 1000, Duration.ofMinutes(1));
    assertThat(r.retryAfter("worker a:1", unavailable("x"))).isFalse();
    assertThat(slept).isEmpty();
  }

  @Test
  void totalTime_countsFromTheFirstFailure_capsTheLastBackoff_andThenStops() throws Exception {
    BlockRetry r = retry(100, 400, 400, Duration.ofMillis(1000));
    nowNanos += TimeUnit.SECONDS.toNanos(3600); // time before the first failure does not count
    assertThat(r.retryAfter("worker a:1", unavailable("x"))).isTrue(); // sleeps 400, 600 left
    nowNanos += TimeUnit.MILLISECONDS.toNanos(100); // the attempt itself took 100 ms: 500 left
    assertThat(r.retryAfter("worker b:2", unavailable("x"))).isTrue(); // sleeps 400: 100 left
    assertThat(r.retryAfter("worker c:3", unavailable("x"))).isTrue(); // capped at the 100 ms left
    assertThat(slept).containsExactly(400L, 400L, 100L);
    assertThat(r.retryAfter("worker d:4", unavailable("x"))).isFalse();
    assertThat(r.stopReason()).contains("out of time").contains(ClientKeys.BLOCK_RETRY_TOTAL_TIMEOUT.name());
  }

  @Test
  void copyFailures_areTheWorkersFaults_otherErrorsWouldFailOnEveryCopy() {
    for (IOException e : List.of(new UnavailableException("u"), new DeadlineExceededException("d"),
        new CancelledException("c"), new NotFoundException("n"), new DataLossException("cut short"),
        new InternalException("i", null), new IOException("Input/output error"))) {
      assertThat(BlockRetry.isCopyFailure(e)).as(e.toString()).isTrue();
    }
    for (IOException e : List.of(new InvalidArgumentException("a"), new ResourceExhaustedException("full"),
        new FailedPreconditionException("p"), new OutOfRangeException("o"), new InterruptedIOException("i"))) {
      assertThat(BlockRetry.isCopyFailure(e)).as(e.toString()).isFalse();
    }
  }

  @Test
  void finalError_hasTheLastCode_andNamesWhatEverySourceTriedAndWhy() throws Exception {
    BlockRetry r = retry(1, 1, 1, Duration.ofMinutes(1));
    r.retryAfter("worker a:1", unavailable("connection refused"));
    r.retryAfter("worker b:2 (from the under file system)", new DataLossException("sent 5 of 9 bytes"));
    StrataException e = r.finalError("Reading /f at position 42 (block 7)", new DataLossException("sent 5 of 9 bytes"));
    assertThat(e.code()).isEqualTo(ErrorCode.DATA_LOSS);
    assertThat(e.getMessage()).isEqualTo("Reading /f at position 42 (block 7) failed; tried 2: worker a:1 "
        + "(UNAVAILABLE: connection refused); worker b:2 (from the under file system) (DATA_LOSS: sent 5 of 9 "
        + "bytes); no retries left (strata.user.block.read.retry.max=1)");
  }

  @Test
  void interruptedBackoff_endsWithInterruptedIo_andKeepsTheInterrupt() {
    BlockRetry r = new BlockRetry(new BlockRetry.Policy(3, 10, 10, Duration.ofMinutes(1), "k"), () -> 0L,
        ms -> {
          throw new InterruptedException();
        });
    try {
      assertThatThrownBy(() -> r.retryAfter("worker a:1", unavailable("x"))).isInstanceOf(InterruptedIOException.class);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void keys_haveTheirDefaults_andRefuseBadValuesNamingTheKey() {
    BlockRetry.Policy reads = BlockRetry.Policy.reads(StrataConf.defaults());
    assertThat(reads).isEqualTo(new BlockRetry.Policy(5, 50, 2000, Duration.ofMinutes(2),
        ClientKeys.BLOCK_READ_RETRY_MAX.name()));
    BlockRetry.Policy writes = BlockRetry.Policy.writes(StrataConf.of(Map.of(
        ClientKeys.BLOCK_WRITE_RETRY_MAX.name(), "7", ClientKeys.BLOCK_RETRY_BACKOFF_BASE.name(), "5ms",
        ClientKeys.BLOCK_RETRY_BACKOFF_MAX.name(), "1s", ClientKeys.BLOCK_RETRY_TOTAL_TIMEOUT.name(), "30s")));
    assertThat(writes).isEqualTo(new BlockRetry.Policy(7, 5, 1000, Duration.ofSeconds(30),
        ClientKeys.BLOCK_WRITE_RETRY_MAX.name()));
    assertThat(StrataConf.defaults().get(ClientKeys.WRITE_FAILOVER_BUFFER_SIZE)).isEqualTo(64L << 20);
    assertThatThrownBy(() -> StrataConf.of(Map.of(ClientKeys.BLOCK_READ_RETRY_MAX.name(), "-1"))
        .get(ClientKeys.BLOCK_READ_RETRY_MAX)).hasMessageContaining(ClientKeys.BLOCK_READ_RETRY_MAX.name());
    assertThatThrownBy(() -> StrataConf.of(Map.of(ClientKeys.WRITE_FAILOVER_BUFFER_SIZE.name(), "3GB"))
        .get(ClientKeys.WRITE_FAILOVER_BUFFER_SIZE)).hasMessageContaining(ClientKeys.WRITE_FAILOVER_BUFFER_SIZE.name());
    assertThatThrownBy(() -> StrataConf.of(Map.of(ClientKeys.BLOCK_RETRY_TOTAL_TIMEOUT.name(), "0ms"))
        .get(ClientKeys.BLOCK_RETRY_TOTAL_TIMEOUT)).hasMessageContaining(ClientKeys.BLOCK_RETRY_TOTAL_TIMEOUT.name());
  }
}
