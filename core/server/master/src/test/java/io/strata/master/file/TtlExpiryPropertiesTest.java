package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.path.StrataPath;
import io.strata.master.MutableClock;
import java.math.BigInteger;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;

/**
 * The TTL check over every TTL in [0, Long.MAX_VALUE] and every creation time: a file is expired exactly
 * when its TTL has passed since its creation, so never before, and a TTL too long to add to the creation
 * time (Long.MAX_VALUE, meant as "never") never expires. Clocks read below Long.MAX_VALUE (the instant
 * "never" saturates to). Runs the real {@link InodeTree} on a fake clock.
 */
class TtlExpiryPropertiesTest {

  /** Whether {@code elapsed >= ttl}, computed without overflow. */
  private static boolean ttlPassed(long creationMs, long ttlMs, long nowMs) {
    return BigInteger.valueOf(nowMs).subtract(BigInteger.valueOf(creationMs))
        .compareTo(BigInteger.valueOf(ttlMs)) >= 0;
  }

  @Property(tries = 2000)
  void ttlRanOut_exactlyWhenTheTtlHasPassed(@ForAll @LongRange(min = 0) long creationMs,
      @ForAll @LongRange(min = 0) long ttlMs, @ForAll @LongRange(min = 0, max = Long.MAX_VALUE - 1) long nowMs) {
    assertThat(InodeIndex.ttlRanOut(creationMs, ttlMs, nowMs)).isEqualTo(ttlPassed(creationMs, ttlMs, nowMs));
  }

  @Property(tries = 300)
  void theTreeExpiresAFile_onlyOnceItsTtlHasPassed(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE / 2) long creationMs,
      @ForAll @LongRange(min = 0) long ttlMs, @ForAll @LongRange(min = 0) long elapsedMs) throws Exception {
    MutableClock clock = new MutableClock(creationMs);
    InodeTree tree = new InodeTree(clock);
    FileInfo f = tree.createFile(StrataPath.of("/f"), 64, false, 0);
    tree.setAttribute(StrataPath.of("/f"), null, ttlMs, TtlAction.DELETE, null, null, cur -> { });
    long nowMs = creationMs + Math.min(elapsedMs, Long.MAX_VALUE - 1 - creationMs);
    clock.setMillis(nowMs);

    List<FileInfo> expired = tree.expired(nowMs);

    if (ttlPassed(f.creationTimeMs(), ttlMs, nowMs)) {
      assertThat(expired).extracting(FileInfo::path).containsExactly("/f");
    } else {
      assertThat(expired).isEmpty();
    }
  }

  @Property(tries = 300)
  void aTtlOfLongMaxValue_neverRunsOut(@ForAll @LongRange(min = 0) long creationMs,
      @ForAll @LongRange(min = 0, max = Long.MAX_VALUE - 1) long nowMs) {
    assertThat(InodeIndex.ttlRanOut(creationMs, Long.MAX_VALUE, nowMs)).isFalse();
  }
}
