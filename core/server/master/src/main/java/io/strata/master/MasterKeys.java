package io.strata.master;

import io.strata.common.conf.PropertyKey;
import java.time.Duration;

/** Keys the master reads. */
public final class MasterKeys {
  private MasterKeys() {}

  public static final PropertyKey<String> BIND_HOST = PropertyKey.stringKey("strata.master.bind.host")
      .defaultValue("127.0.0.1")
      .doc("Address the master's RPC server binds to. Loopback by default; set a routable address to serve "
          + "other hosts.")
      .build();

  public static final PropertyKey<Duration> WORKER_TIMEOUT = PropertyKey.durationKey("strata.master.worker.timeout")
      .defaultValue("30s")
      .validate(d -> d.toMillis() >= 100, "at least 100ms")
      .doc("A worker that sends no heartbeat for this long is marked lost and its block locations dropped.")
      .build();

  public static final PropertyKey<Duration> LOST_WORKER_CHECK_INTERVAL =
      PropertyKey.durationKey("strata.master.worker.lost.check.interval")
          .defaultValue("1s")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("How often the master looks for workers that missed their heartbeats.")
          .build();

  public static final PropertyKey<Long> BLOCK_SIZE_MAX = PropertyKey.bytesKey("strata.master.block.size.max")
      .defaultValue("4GB")
      .doc("Largest block size a file may ask for; larger requests are refused as INVALID_ARGUMENT.")
      .build();

  public static final PropertyKey<Integer> LIST_BATCH_SIZE_MAX = PropertyKey.intKey("strata.master.list.batch.size.max")
      .defaultValue(10_000)
      .validate(v -> v >= 1, "positive")
      .doc("Most entries the master sends in one listStatus message; it takes the lock once per batch.")
      .build();

  public static final PropertyKey<String> JOURNAL_DIR = PropertyKey.stringKey("strata.master.journal.dir")
      .doc("The master's journal dir (relative paths resolve against strata.home). Unset: "
          + "<strata.home>/<strata.data.dir>/journal.")
      .build();

  public static final PropertyKey<Long> JOURNAL_SEGMENT_SIZE =
      PropertyKey.bytesKey("strata.master.journal.segment.size.max")
          .defaultValue("64MB")
          .validate(v -> v >= 4096, "at least 4KB")
          .doc("A journal segment file is closed and a new one started past this size.")
          .build();

  public static final PropertyKey<Long> JOURNAL_CHECKPOINT_ENTRIES =
      PropertyKey.longKey("strata.master.journal.checkpoint.period.entries")
          .defaultValue(500_000)
          .validate(v -> v >= 1, "positive")
          .doc("A checkpoint of the whole state is written after this many journal entries, bounding replay "
              + "time; older segments are then removed.")
          .build();

  public static final PropertyKey<Duration> JOURNAL_TAIL_INTERVAL =
      PropertyKey.durationKey("strata.master.journal.tail.interval")
          .defaultValue("200ms")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("How often a standby master applies what the leader wrote to the shared journal (HA).")
          .build();
}
