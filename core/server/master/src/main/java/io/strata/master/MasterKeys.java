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

  public static final PropertyKey<Integer> WEB_PORT = PropertyKey.intKey("strata.master.web.port")
      .defaultValue(-1)
      .validate(p -> p >= -1 && p <= 65535, "-1 (the RPC port + 1), 0 (a free port) or a port number up to 65535")
      .doc("The master's web port (web UI and /metrics, bound on strata.master.bind.host). -1: the RPC port + 1 "
          + "(19999 for 19998), falling back to a free port with a warning when that is taken; 0: a free port; "
          + "any other value: exactly that port, or the master does not start.")
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

  public static final PropertyKey<Duration> LOST_WORKER_FORGET_AFTER =
      PropertyKey.durationKey("strata.master.worker.lost.forget.after")
          .defaultValue("1h")
          .validate(d -> d.toMillis() >= 0, "0 or more")
          .doc("A worker lost for this long is forgotten (no longer listed as lost); if it comes back it "
              + "registers as any new worker does.")
          .build();

  public static final PropertyKey<Integer> REMOVALS_PER_HEARTBEAT_MAX =
      PropertyKey.intKey("strata.master.worker.removals.per.heartbeat.max")
          .defaultValue(10_000)
          .validate(v -> v >= 1, "at least 1")
          .doc("Most block removals one heartbeat reply carries; the rest follow in later replies, so a large "
              + "delete never makes one reply (or one worker round) unbounded.")
          .build();

  public static final PropertyKey<Long> BLOCK_SIZE_MIN = PropertyKey.bytesKey("strata.master.block.size.min")
      .defaultValue("64KB")
      .validate(n -> n >= 1, "at least 1 byte")
      .doc("Smallest block size a file may ask for; smaller requests are refused as INVALID_ARGUMENT. Each block "
          + "costs a master call and a worker block (a 3 MB file in 100-byte blocks took a minute to write), so, "
          + "as HDFS does with dfs.namenode.fs-limits.min-block-size, tiny blocks are refused.")
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

  public static final PropertyKey<java.time.Duration> LISTING_STALL_TIMEOUT =
      PropertyKey.durationKey("strata.master.listing.stall.timeout")
          .defaultValue("2min")
          .validate(d -> d.toMillis() >= 1, "at least 1ms")
          .doc("How long a streamed listing waits for its client to take the batches already sent before the master "
              + "ends it (DEADLINE_EXCEEDED) and gives its thread back: a client that never reads would otherwise "
              + "hold one of strata.master.listing.threads.max for good.")
          .build();

  public static final PropertyKey<Integer> LISTING_THREADS_MAX =
      PropertyKey.intKey("strata.master.listing.threads.max")
          .defaultValue(64)
          .validate(v -> v >= 1, "positive")
          .doc("Most streamed listings (directories of more than one batch, and recursive listings) the master "
              + "runs at once, a thread each, since each waits for its client to take the batches sent; one more "
              + "is refused RESOURCE_EXHAUSTED instead of queued behind slow clients.")
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

  public static final PropertyKey<String> ROOT_UFS = PropertyKey.stringKey("strata.master.mount.table.root.ufs")
      .defaultValue("./underFSStorage")
      .doc("The under file system mounted at / (a URI such as hdfs://nn:8020/strata or s3a://bucket/dir, or a "
          + "local path, relative paths resolving against strata.home). A local dir is created when missing.")
      .build();

  public static final PropertyKey<Boolean> ROOT_UFS_READONLY =
      PropertyKey.booleanKey("strata.master.mount.table.root.readonly")
          .defaultValue("false")
          .doc("Mount the root under file system read-only: nothing under / may be created, changed or persisted.")
          .build();

  public static final PropertyKey<Boolean> ROOT_UFS_SHARED =
      PropertyKey.booleanKey("strata.master.mount.table.root.shared")
          .defaultValue("false")
          .doc("Mark the root mount shared (visible to every user; informational).")
          .build();

  public static final PropertyKey<java.util.List<String>> ROOT_UFS_OPTIONS =
      PropertyKey.listKey("strata.master.mount.table.root.options")
          .defaultValue("")
          .doc("Hadoop configuration for the root under file system, as key=value pairs separated by commas "
              + "(fs.s3a.endpoint=..., dfs.client.use.datanode.hostname=true).")
          .build();

  public static final PropertyKey<java.util.List<String>> MOUNT_ALLOWED_URIS =
      PropertyKey.listKey("strata.master.mount.allowed.uris")
          .defaultValue("")
          .doc("UFS URIs (or local paths) nested mounts must lie under, comma separated; empty allows any. Clients "
              + "are not authenticated, so on a shared cluster set this: a mount lets every client read the "
              + "mounted UFS through the workers.")
          .build();

  public static final PropertyKey<Long> UFS_BLOCK_SIZE = PropertyKey.bytesKey("strata.master.ufs.block.size")
      .defaultValue("64MB")
      .validate(v -> v > 0, "positive")
      .doc("Block size of files loaded from an under file system (they are cached in blocks of this size).")
      .build();

  public static final PropertyKey<Duration> MOUNT_CHECK_TIMEOUT =
      PropertyKey.durationKey("strata.master.mount.check.timeout")
          .defaultValue("10s")
          .validate(d -> d.toMillis() >= 100, "at least 100ms")
          .doc("How long a mount waits for the under file system to answer before refusing it as unreachable.")
          .build();

  public static final PropertyKey<Duration> PERSIST_CHECK_INTERVAL =
      PropertyKey.durationKey("strata.master.persist.check.interval")
          .defaultValue("500ms")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("How often the persist scheduler looks for ASYNC_THROUGH files to persist and for answers.")
          .build();

  public static final PropertyKey<Duration> PERSIST_RETRY_MIN =
      PropertyKey.durationKey("strata.master.persist.retry.interval.min")
          .defaultValue("1s")
          .validate(d -> d.toMillis() >= 1, "positive")
          .doc("First delay before a failed persistence is tried again; it doubles with each failure.")
          .build();

  public static final PropertyKey<Duration> PERSIST_RETRY_MAX =
      PropertyKey.durationKey("strata.master.persist.retry.interval.max")
          .defaultValue("5min")
          .validate(d -> d.toMillis() >= 1, "positive")
          .doc("Longest delay between attempts to persist a file (attempts never stop: the data stays cached).")
          .build();

  public static final PropertyKey<Duration> PERSIST_TIMEOUT = PropertyKey.durationKey("strata.master.persist.timeout")
      .defaultValue("10min")
      .validate(d -> d.toMillis() >= 100, "at least 100ms")
      .doc("A persist command a worker has not answered within this time is given up and tried again.")
      .build();

  public static final PropertyKey<Integer> PERSIST_MAX_IN_FLIGHT =
      PropertyKey.intKey("strata.master.persist.max.in.flight")
          .defaultValue(1000)
          .validate(v -> v >= 1, "positive")
          .doc("Most files being persisted at once (sent to workers, or written by the master when empty); the "
              + "rest wait their turn.")
          .build();

  public static final PropertyKey<Duration> TTL_CHECK_INTERVAL =
      PropertyKey.durationKey("strata.master.ttl.check.interval")
          .defaultValue("10s")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("How often the master applies the TTLs that ran out (FREE or DELETE).")
          .build();

  public static final PropertyKey<Integer> REQUEST_IDS_PER_CLIENT_MAX =
      PropertyKey.intKey("strata.master.request.ids.per.client.max")
          .defaultValue(1000)
          .validate(v -> v >= 1, "at least 1")
          .doc("Request ids (with their answers) the master keeps per client, newest first: a create, "
              + "complete, rename or delete retried with one of them (across a lost reply or a failover) gets "
              + "the first attempt's answer instead of running again. One client retries one call at a time, "
              + "so a few suffice; older ones are dropped.")
          .build();

  public static final PropertyKey<Integer> REQUEST_IDS_MAX =
      PropertyKey.intKey("strata.master.request.ids.max")
          .defaultValue(1_000_000)
          .validate(v -> v >= 1, "at least 1")
          .doc("Request ids the master keeps in all clients together (about 100 bytes each): past it the "
              + "oldest id of the client least recently heard from goes first, so clients that each make up a "
              + "new client id cannot fill the master's memory within the retention.")
          .build();

  public static final PropertyKey<Duration> REQUEST_IDS_RETENTION =
      PropertyKey.durationKey("strata.master.request.ids.retention")
          .defaultValue("10min")
          .validate(d -> d.toMillis() >= 1, "positive")
          .doc("How long the master keeps a request id after the call it names was applied; keep it longer "
              + "than strata.user.master.retry.window, the longest a client retries. Clients silent for longer "
              + "are forgotten, which bounds the table.")
          .build();

  public static final PropertyKey<Duration> LEASE_TIMEOUT = PropertyKey.durationKey("strata.master.lease.timeout")
      .defaultValue("5min")
      .validate(d -> d.toMillis() >= 100, "at least 100ms")
      .doc("Hard limit of a write lease: an incomplete file whose writer has not renewed for this long is "
          + "recovered (deleted: nothing of it was acknowledged). Clients renew every "
          + "strata.user.lease.renew.interval; keep this many times longer. A new leading master starts every "
          + "lease afresh when it takes over.")
      .build();

  public static final PropertyKey<Duration> LEASE_CHECK_INTERVAL =
      PropertyKey.durationKey("strata.master.lease.check.interval")
          .defaultValue("5s")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("How often the master looks for expired write leases.")
          .build();

  public static final PropertyKey<Boolean> MOUNT_OPTIONS_UNSAFE_ALLOWED =
      PropertyKey.booleanKey("strata.master.mount.options.unsafe.allowed")
          .defaultValue("false")
          .doc("Allow nested mounts to set options that choose classes or credential providers to load "
              + "(fs.*.impl, *.class, *.factory, *.provider, hadoop.security.*, ...). Off: clients are not "
              + "authenticated, and such an option would make the master and workers load code a client names.")
          .build();
}
