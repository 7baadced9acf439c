package io.strata.client;

import io.strata.client.options.ReadType;
import io.strata.client.options.WriteType;
import io.strata.common.conf.PropertyKey;
import io.strata.common.conf.StrataConf;
import io.strata.common.conf.ValueParser;
import java.time.Duration;

/** Keys the client reads. Declared here, next to the code that owns them. */
public final class ClientKeys {
  private ClientKeys() {}

  public static final PropertyKey<Long> BLOCK_SIZE_DEFAULT = PropertyKey.bytesKey("strata.user.block.size.default")
      .defaultValue("64MB")
      .validate(v -> v > 0, "positive")
      .doc("Block size of new files unless the create call sets one.")
      .build();

  public static final PropertyKey<Duration> LEASE_RENEW_INTERVAL =
      PropertyKey.durationKey("strata.user.lease.renew.interval")
          .defaultValue("30s")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("How often a client renews the write leases of the files it has open (one call for all of "
              + "them). Keep it a fraction of the master's strata.master.lease.timeout.")
          .build();

  public static final PropertyKey<Duration> UFS_WRITE_KEEPALIVE_INTERVAL =
      PropertyKey.durationKey("strata.user.ufs.write.keepalive.interval")
          .defaultValue("1min")
          .validate(d -> d.isZero() || d.toMillis() >= 10, "0 (off) or at least 10ms")
          .doc("While a writer holds an under file system write stream (CACHE_THROUGH, THROUGH, an ASYNC_THROUGH "
              + "write gone through) and its file's lease, the client sends an empty message on that stream when it "
              + "sent nothing for this long, so a writer that is slow but alive (a gap between its chunks) keeps its "
              + "stream past the worker's strata.worker.ufs.write.idle.timeout, which still reaps the stream of a "
              + "writer that went silent. Keep it well below that timeout. 0: no keep-alives.")
          .build();

  public static final PropertyKey<Long> STREAM_CHUNK_SIZE = PropertyKey.bytesKey("strata.user.stream.chunk.size")
      .defaultValue("1MB")
      .validate(v -> v >= 1024 && v <= 4L * 1024 * 1024, "between 1KB and 4MB")
      .doc("Bytes per message when streaming block data to and from workers.")
      .build();

  public static final PropertyKey<Boolean> READ_CHECKSUM_VERIFY =
      PropertyKey.booleanKey("strata.user.read.checksum.verify")
          .defaultValue(true)
          .doc("Whether block reads streamed from a worker ask for the block's stored CRC32C checksums and check "
              + "every byte (in whole 64 KiB checksum chunks); a mismatch marks that copy corrupt, reports it to "
              + "the master and reads on from another copy or the under file system. Off only to measure the cost.")
          .build();

  public static final PropertyKey<Boolean> SHORT_CIRCUIT_CHECKSUM_VERIFY =
      PropertyKey.booleanKey("strata.user.shortcircuit.checksum.verify")
          .defaultValue(true)
          .doc("Whether short-circuit reads check the block's stored CRC32C checksums (fetched over the domain "
              + "socket) on every 64 KiB chunk they read; a mismatch is handled as for "
              + "strata.user.read.checksum.verify. Off trusts the local file.")
          .build();

  public static final PropertyKey<Long> SHORT_CIRCUIT_READ_INLINE_MAX =
      PropertyKey.bytesKey("strata.user.shortcircuit.read.inline.max")
          .defaultValue("32KB")
          .validate(v -> v >= 0 && v <= 32 * 1024, "between 0 and 32KB")
          .doc("Blocks of at most this many bytes read short-circuit come back in the answer to the open itself "
              + "(one round trip over the domain socket, no descriptor, nothing left open at the worker) instead of "
              + "an open, a descriptor and a close: a shuffle partition file of a few KiB, a small file. 0: never.")
          .build();

  public static final PropertyKey<String> SHORT_CIRCUIT_READ_MMAP =
      PropertyKey.stringKey("strata.user.shortcircuit.read.mmap")
          .defaultValue("auto")
          .validate(v -> io.strata.client.shortcircuit.MappedReads.Mode.parse(v) != null, "auto, true or false")
          .doc("Whether short-circuit reads of blocks whose files are on a memory file system (tmpfs, ramfs: the "
              + "worker says so when it opens the block) map the block's file into memory (one copy from the page "
              + "cache to the caller, checksums checked on the mapping; released when the block is closed) rather "
              + "than reading its channel (two copies, no page faults). auto: measured once per client on the first "
              + "such block of 1 MiB or more (a copy from a new mapping against a channel read of its first 4 MiB), "
              + "the faster kept and logged; which wins depends on the machine's page-fault cost. Blocks on a disk, "
              + "whatever their tier is called (a read error under a mapping would end the JVM), and blocks of "
              + "2 GiB or more are always read by channel.")
          .build();

  public static final PropertyKey<Integer> SHORT_CIRCUIT_PREAD_BLOCKS_KEPT =
      PropertyKey.intKey("strata.user.shortcircuit.pread.blocks.kept")
          .defaultValue(16)
          .validate(n -> n >= 0, "at least 0")
          .doc("Blocks a stream keeps open short-circuit for its positioned reads (the least recently read is "
              + "closed first): a positioned read in a kept block costs no domain-socket round trip. Each kept "
              + "block stays read-locked on its worker (not evicted or moved) until it is closed or the stream "
              + "is; 0 opens and closes the block for every positioned read.")
          .build();

  public static final PropertyKey<Integer> READ_PREFETCH_CHUNKS = PropertyKey.intKey("strata.user.read.prefetch.chunks")
      .defaultValue(4)
      .validate(v -> v >= 1 && v <= 64, "between 1 and 64")
      .doc("Chunks a block reader asks a worker for ahead of the one being consumed (flow control window).")
      .build();

  public static final PropertyKey<Boolean> NETWORK_ZEROCOPY_ENABLED =
      PropertyKey.booleanKey("strata.user.network.zerocopy.enabled")
          .defaultValue(true)
          .doc("Block reads and writes over gRPC use the zero-copy marshallers: a read chunk is parsed over the "
              + "transport's buffer and copied once, into the caller's array; a written chunk goes from the "
              + "caller's array straight into the transport. false: protobuf's own marshallers, and the worker "
              + "is asked for its plain (heap) read path too (the benchmark's path=tcp-plain).")
          .build();

  public static final PropertyKey<Integer> BLOCK_READ_RETRY_MAX = PropertyKey.intKey("strata.user.block.read.retry.max")
      .defaultValue(5)
      .validate(v -> v >= 0 && v <= 100, "between 0 and 100")
      .doc("How many times a read of one block range is tried again after a failure of the copy it used (the "
          + "worker gone, silent, cut the stream short, lacks the block or holds it corrupt): each retry, after a "
          + "backoff, goes to the block's next copy, then (persisted files) to the under file system through "
          + "another worker, resuming at the exact position. 0: the first failure is final.")
      .build();

  public static final PropertyKey<Integer> BLOCK_WRITE_RETRY_MAX = PropertyKey.intKey("strata.user.block.write.retry.max")
      .defaultValue(3)
      .validate(v -> v >= 0 && v <= 100, "between 0 and 100")
      .doc("How many times a block being written fails over to another worker after its worker failed "
          + "(re-sending the block's bytes so far, which strata.user.block.write.failover.buffer.size bounds). "
          + "0: the first failure fails the write.")
      .build();

  public static final PropertyKey<Duration> BLOCK_RETRY_BACKOFF_BASE =
      PropertyKey.durationKey("strata.user.block.retry.backoff.base")
          .defaultValue("50ms")
          .doc("Backoff before the first retry of a failed block read or write; it doubles with each retry of the "
              + "same block up to strata.user.block.retry.backoff.max.")
          .build();

  public static final PropertyKey<Duration> BLOCK_RETRY_BACKOFF_MAX =
      PropertyKey.durationKey("strata.user.block.retry.backoff.max")
          .defaultValue("2s")
          .doc("Longest backoff between retries of a failed block read or write.")
          .build();

  public static final PropertyKey<Duration> BLOCK_RETRY_TOTAL_TIMEOUT =
      PropertyKey.durationKey("strata.user.block.retry.total.timeout")
          .defaultValue("2min")
          .validate(d -> d.toMillis() >= 1, "at least 1ms")
          .doc("How long, from its first failure, a block read or write keeps retrying on other copies or workers "
              + "before it fails with an error naming every worker tried.")
          .build();

  /**
   * 64 MB by default, the default block size: with default settings every block can fail over whatever the
   * point of failure. The chunks are the ones the writer sends anyway (kept, not copied) and are dropped when
   * the block commits, so the cost is at most one block of heap per open writer; lower it for many concurrent
   * writers, at the price of failing writes whose worker dies past that point of a block.
   */
  public static final PropertyKey<Long> WRITE_FAILOVER_BUFFER_SIZE =
      PropertyKey.bytesKey("strata.user.block.write.failover.buffer.size")
          .defaultValue("64MB")
          .validate(v -> v >= 0 && v <= Integer.MAX_VALUE, "between 0 and 2GB")
          .doc("Bytes of the block being written that a writer keeps so that, when the block's worker fails "
              + "mid-block, it can re-send them to another worker (MUST_CACHE, and the cached part of "
              + "CACHE_THROUGH and ASYNC_THROUGH). Freed when the block commits; one block of heap at most per "
              + "open writer. A block grown past it cannot fail over: the write fails cleanly (the file is "
              + "deleted), except that CACHE_THROUGH leaves the block to its under file system copy. 0: no "
              + "write failover.")
          .build();

  public static final PropertyKey<Duration> WRITE_SPACE_WAIT_TIMEOUT =
      PropertyKey.durationKey("strata.user.write.space.wait.timeout")
          .defaultValue("5min")
          .doc("Longest an ASYNC_THROUGH writer waits at a worker for room for its next block when the worker's "
              + "tiers are full of blocks of files not yet persisted (the worker caps it with "
              + "strata.worker.write.space.wait.timeout); then it tries the next worker, and fails with "
              + "RESOURCE_EXHAUSTED when none has room.")
          .build();

  public static final PropertyKey<String> WRITE_LOCATION_POLICY =
      PropertyKey.stringKey("strata.user.block.write.location.policy")
          .defaultValue("LOCAL_FIRST")
          .validate(io.strata.client.policy.BlockLocationPolicies::isValidName,
              "one of " + io.strata.client.policy.BlockLocationPolicies.SHORT_NAMES + " or a policy class name")
          .doc("Which worker receives a new block: LOCAL_FIRST (the nearest workers with room: same node, then "
              + "same rack, then any; in turn), LOCAL_FIRST_AVOID_EVICTION (a worker on this node unless it lacks "
              + "room without evicting, else the one with most free space), MOST_AVAILABLE_FIRST (most free "
              + "space), ROUND_ROBIN (every worker in turn), SPECIFIC_HOST (the host in "
              + "strata.user.block.location.policy.host), DETERMINISTIC_HASH (by block id), CAPACITY_BASED_RANDOM "
              + "(random, weighted by free space), or the name of a class implementing "
              + "io.strata.client.policy.BlockLocationPolicy. Short names may also be written LocalFirst etc.")
          .build();

  public static final PropertyKey<String> UFS_READ_LOCATION_POLICY =
      PropertyKey.stringKey("strata.user.ufs.block.read.location.policy")
          .defaultValue("DETERMINISTIC_HASH")
          .validate(io.strata.client.policy.BlockLocationPolicies::isValidName,
              "one of " + io.strata.client.policy.BlockLocationPolicies.SHORT_NAMES + " or a policy class name")
          .doc("Which worker reads a block that no worker holds from the under file system (and caches it): "
              + "the same names as strata.user.block.write.location.policy. DETERMINISTIC_HASH (a worker on this "
              + "node, else one chosen by a hash of the block id) makes concurrent readers meet at one worker.")
          .build();

  public static final PropertyKey<String> LOCATION_POLICY_HOST =
      PropertyKey.stringKey("strata.user.block.location.policy.host")
          .defaultValue("")
          .doc("The worker host (advertised host name or node) the SPECIFIC_HOST location policy sends blocks to.")
          .build();

  public static final PropertyKey<String> LOGIN_NAME = PropertyKey.stringKey("strata.user.login.name")
      .defaultValue("")
      .doc("The user name this client sends with each create and mkdir; the master records it as the new "
          + "file's or directory's owner and group. Empty: the JVM's user.name. Not authenticated: permissions "
          + "are not enforced yet.")
      .build();

  public static final PropertyKey<Long> AVOID_EVICTION_RESERVED =
      PropertyKey.bytesKey("strata.user.block.avoid.eviction.reserved.size")
          .defaultValue("0")
          .validate(v -> v >= 0, "not negative")
          .doc("LOCAL_FIRST_AVOID_EVICTION counts a worker as having room for a block only when its free space "
              + "less this much covers the block (keep it near the worker's eviction headroom).")
          .build();

  public static final PropertyKey<String> LOCALITY_NODE = PropertyKey.stringKey("strata.user.locality.node")
      .defaultValue("")
      .doc("This client's node (machine), compared with the node each worker reports to find local workers. "
          + "Empty: strata.user.hostname.")
      .build();

  public static final PropertyKey<String> LOCALITY_RACK = PropertyKey.stringKey("strata.user.locality.rack")
      .defaultValue("")
      .doc("This client's rack: after workers on its node, it prefers workers in its rack. Empty: unknown.")
      .build();

  public static final PropertyKey<String> LOCALITY_SCRIPT = PropertyKey.stringKey("strata.user.locality.script")
      .defaultValue("")
      .doc("A command (run with sh -c once, when the client first chooses a worker) that prints node=<name> "
          + "and/or rack=<name>; what it prints wins over strata.user.locality.node/rack. A failure, other "
          + "output or a timeout fails the client's reads and writes naming the script.")
      .build();

  public static final PropertyKey<Duration> LOCALITY_SCRIPT_TIMEOUT =
      PropertyKey.durationKey("strata.user.locality.script.timeout")
          .defaultValue("5s")
          .validate(d -> d.toMillis() >= 1, "at least 1ms")
          .doc("How long strata.user.locality.script may run.")
          .build();

  public static final PropertyKey<String> HOSTNAME = PropertyKey.stringKey("strata.user.hostname")
      .defaultValue("localhost")
      .doc("This client's host name, compared with worker host names to find local workers.")
      .build();

  public static final PropertyKey<Duration> WORKER_LIST_REFRESH =
      PropertyKey.durationKey("strata.user.worker.list.refresh.interval")
          .defaultValue("10s")
          .doc("How long the client reuses the master's worker list before asking again.")
          .build();

  public static final PropertyKey<Integer> WORKER_CHANNELS_MAX = PropertyKey.intKey("strata.user.worker.channels.max")
      .defaultValue(64)
      .validate(v -> v >= 1 && v <= 100_000, "between 1 and 100000")
      .doc("Most gRPC channels to workers a client keeps open (one per worker): opening one more first closes "
          + "the least recently used channel with no call in flight. A channel with a call in flight is never "
          + "closed, so more stay open only while more workers than this have calls in flight at once.")
      .build();

  public static final PropertyKey<Duration> WORKER_CHANNEL_IDLE_TIMEOUT =
      PropertyKey.durationKey("strata.user.worker.channel.idle.timeout")
          .defaultValue("5min")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("A client closes its channel to a worker once no call has used it for this long (checked every "
              + "half of it); the next call to that worker opens a new one.")
          .build();

  public static final PropertyKey<Duration> CONF_SYNC_INTERVAL = PropertyKey.durationKey("strata.user.conf.sync.interval")
      .defaultValue("1min")
      .validate(d -> d.toMillis() >= 10, "at least 10ms")
      .doc("How often a client asks the master for the hash of its cluster defaults (the strata.user.* keys set "
          + "in the master's configuration, which apply unless the client sets the key itself); a changed hash "
          + "re-initialises the client with the new defaults, while calls and streams already running finish "
          + "on the old channels.")
      .build();

  public static final PropertyKey<Boolean> METADATA_CACHE_ENABLED =
      PropertyKey.booleanKey("strata.user.metadata.cache.enabled")
          .defaultValue(false)
          .doc("Whether the client caches getStatus, exists and non-recursive listing answers (default options "
              + "only). Its own creates, mkdirs, completes, deletes, renames and attribute changes invalidate the "
              + "path, its subtree and its ancestors at once; other clients' changes are seen after "
              + "strata.user.metadata.cache.expiry.")
          .build();

  public static final PropertyKey<Long> METADATA_CACHE_MAX_SIZE =
      PropertyKey.longKey("strata.user.metadata.cache.max.size")
          .defaultValue(100_000L)
          .validate(v -> v >= 1, "positive")
          .doc("Most entries the metadata cache holds (a listing counts one plus one per child); the least "
              + "recently used go first.")
          .build();

  public static final PropertyKey<Duration> METADATA_CACHE_EXPIRY =
      PropertyKey.durationKey("strata.user.metadata.cache.expiry")
          .defaultValue("10s")
          .validate(d -> d.toMillis() >= 1, "at least 1ms")
          .doc("How long a cached metadata answer is used after it was fetched: the longest another client's "
              + "change can stay unseen by this client.")
          .build();

  public static final PropertyKey<Boolean> PAGE_CACHE_ENABLED =
      PropertyKey.booleanKey("strata.user.client.cache.enabled")
          .defaultValue(false)
          .doc("Whether the client keeps fixed-size pages of the file data it reads as files in "
              + "strata.user.client.cache.dir (shared by the streams of one client) and serves later reads of "
              + "the same bytes from them; each page is checksummed, a page that fails is dropped and read "
              + "again from Strata. A rewritten file never serves old pages.")
          .build();

  public static final PropertyKey<String> PAGE_CACHE_DIR = PropertyKey.stringKey("strata.user.client.cache.dir")
      .defaultValue("/tmp/strata-client-cache-${user.name}")
      .validate(v -> !v.isBlank(), "a local directory")
      .doc("The local directory of the client's page cache; ${user.name} is replaced by the client's user. "
          + "Created rwx------ if missing; a directory another user owns, or that its group or others may write, "
          + "is not used (another user's page would be served as file data). One client at a time: a client "
          + "that finds it in use by another runs without the page cache (logged). Pages kept here survive a "
          + "client restart. The strata.user.client.cache.* keys are never taken from the master's cluster "
          + "defaults.")
      .build();

  public static final PropertyKey<Long> PAGE_CACHE_SIZE = PropertyKey.bytesKey("strata.user.client.cache.size")
      .defaultValue("1GB")
      .validate(v -> v > 0, "positive")
      .doc("Most bytes the page cache's files take in strata.user.client.cache.dir (page files with their "
          + "16-byte headers); at least one page (strata.user.client.cache.page.size).")
      .build();

  public static final PropertyKey<Long> PAGE_CACHE_PAGE_SIZE =
      PropertyKey.bytesKey("strata.user.client.cache.page.size")
          .defaultValue("1MB")
          .validate(v -> v >= 4096 && v <= 64L * 1024 * 1024, "between 4KB and 64MB")
          .doc("Bytes of file data per page of the client's page cache: a read that misses reads the whole page "
              + "from Strata. Pages of another page size found in the directory are dropped.")
          .build();

  public static final PropertyKey<String> PAGE_CACHE_EVICTION =
      PropertyKey.stringKey("strata.user.client.cache.eviction")
          .defaultValue("LRU")
          .validate(v -> v.equals("LRU") || v.equals("LFU"), "LRU or LFU")
          .doc("Which pages leave the full page cache: LRU (the least recently read page first) or LFU "
              + "(Caffeine's W-TinyLFU: a page read often outlives a scan of pages read once).")
          .build();

  public static final PropertyKey<Integer> LIST_BATCH_SIZE = PropertyKey.intKey("strata.user.list.batch.size")
      .defaultValue(1000)
      .validate(v -> v >= 1 && v <= 100_000, "between 1 and 100000")
      .doc("Entries per streamed batch of a listStatus call.")
      .build();

  public static final PropertyKey<String> WRITE_TYPE_DEFAULT = PropertyKey.stringKey("strata.user.file.writetype.default")
      .defaultValue("ASYNC_THROUGH")
      .validate(ClientKeys::isWriteType, "one of MUST_CACHE, CACHE_THROUGH, THROUGH, ASYNC_THROUGH")
      .doc("How new files are written unless the create call says: MUST_CACHE (workers only), CACHE_THROUGH "
          + "(workers and the under file system, synchronously), THROUGH (the under file system only), "
          + "ASYNC_THROUGH (workers now, the under file system in the background). Outside a mount every "
          + "type behaves as MUST_CACHE.")
      .build();

  public static final PropertyKey<String> READ_TYPE_DEFAULT = PropertyKey.stringKey("strata.user.file.readtype.default")
      .defaultValue("CACHE")
      .validate(ClientKeys::isReadType, "one of NO_CACHE, CACHE, CACHE_PROMOTE")
      .doc("How files are read unless the open call says: CACHE (a block missing from Strata is cached as it "
          + "is read from the under file system), CACHE_PROMOTE (also move blocks to the worker's top tier), "
          + "NO_CACHE (read missing blocks from the under file system without caching them).")
      .build();

  /**
   * -1, 0 or a duration, so that "never re-check" can be written; read it with
   * {@link #metadataSyncIntervalMs} (durations do not take a sign).
   */
  public static final PropertyKey<String> METADATA_SYNC_INTERVAL =
      PropertyKey.stringKey("strata.user.file.metadata.sync.interval")
          .defaultValue("-1")
          .validate(ClientKeys::isSyncInterval, "-1, 0 or a duration such as 500ms, 10s or 5min")
          .doc("How stale the master's view of the under file system may be for getStatus and listStatus: -1 "
              + "loads a path Strata does not know yet but never re-checks a known one, 0 re-checks on every "
              + "call, a duration (10s, 5min; a bare number is ms) re-checks when the last check is older.")
          .build();

  public static final PropertyKey<Boolean> PASSIVE_CACHE_ENABLED =
      PropertyKey.booleanKey("strata.user.file.passive.cache.enabled")
          .defaultValue(true)
          .doc("After reading a block from a worker on another host, ask a worker on this host to cache a copy "
              + "(in the background). Not done for read type NO_CACHE.")
          .build();

  /** The user name creates are owned by: {@link #LOGIN_NAME}, else the JVM's {@code user.name}. */
  public static String loginName(StrataConf conf) {
    String name = conf.get(LOGIN_NAME);
    return name.isEmpty() ? System.getProperty("user.name", "") : name;
  }

  /** The configured default write type. */
  public static WriteType writeTypeDefault(StrataConf conf) {
    return WriteType.valueOf(conf.get(WRITE_TYPE_DEFAULT));
  }

  /** The configured default read type. */
  public static ReadType readTypeDefault(StrataConf conf) {
    return ReadType.valueOf(conf.get(READ_TYPE_DEFAULT));
  }

  /** {@link #METADATA_SYNC_INTERVAL} in ms: -1 (never re-check), 0 (always) or a positive interval. */
  public static long metadataSyncIntervalMs(StrataConf conf) {
    return parseSyncIntervalMs(conf.get(METADATA_SYNC_INTERVAL));
  }

  /** -1, or a non-negative duration ({@code 0}, {@code 500ms}, {@code 5min}) in ms; throws on anything else. */
  static long parseSyncIntervalMs(String raw) {
    String s = raw.trim();
    if (s.equals("-1")) {
      return -1;
    }
    return ValueParser.parseDuration(s).toMillis();
  }

  private static boolean isSyncInterval(String v) {
    try {
      parseSyncIntervalMs(v);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static boolean isWriteType(String v) {
    for (WriteType t : WriteType.values()) {
      if (t.name().equals(v)) {
        return true;
      }
    }
    return false;
  }

  private static boolean isReadType(String v) {
    for (ReadType t : ReadType.values()) {
      if (t.name().equals(v)) {
        return true;
      }
    }
    return false;
  }

  public static final PropertyKey<String> SHORT_CIRCUIT_MODE = PropertyKey.stringKey("strata.user.shortcircuit.mode")
      .defaultValue("fd")
      .validate(v -> v.equals("fd") || v.equals("path") || v.equals("off"), "one of fd, path, off")
      .doc("How a block held (or written) by a worker on this host is read (or written): fd (the worker passes the open file over its "
          + "domain socket; works when this process cannot see the worker's dirs), path (the worker names the "
          + "file and this process opens it), off (always stream through the worker's data port). When "
          + "short-circuit fails the read streams through the data port and the reason is logged once.")
      .build();

  public static final PropertyKey<Boolean> SHORT_CIRCUIT_OPEN_AHEAD =
      PropertyKey.booleanKey("strata.user.shortcircuit.open.ahead")
          .defaultValue("true")
          .doc("While a sequential read reads a block short-circuit, open the file's next block (its round trips to "
              + "the local worker) in the background, so the reader does not wait for them at the block boundary. "
              + "The block opened ahead is read-locked on the worker until the reader takes it or the stream "
              + "moves elsewhere or closes.")
          .build();

  public static final PropertyKey<Long> SHORT_CIRCUIT_WRITE_GRANT_SIZE =
      PropertyKey.bytesKey("strata.user.shortcircuit.write.grant.size")
          .defaultValue("64MB")
          .validate(v -> v >= 64 * 1024, "at least 64KB")
          .doc("A block written short-circuit asks the local worker for room this many bytes at a time, before "
              + "writing the bytes that need it (the worker reserves them in its tier's accounting; a full tier "
              + "refuses with RESOURCE_EXHAUSTED). Each request is a round trip to the worker; the default, one "
              + "default block, reserves a block whole when it starts (the unused part of the last block goes "
              + "back at its commit).")
          .build();

  public static final PropertyKey<Boolean> SHORT_CIRCUIT_WRITE_COMMIT_BACKGROUND =
      PropertyKey.booleanKey("strata.user.shortcircuit.write.commit.background")
          .defaultValue(true)
          .doc("A MUST_CACHE file written short-circuit commits each finished block (a round trip to the worker, "
              + "which commits at the master) on the client's background threads while it writes the next "
              + "block; at most one commit is in flight, and the file completes after the last. A commit that "
              + "fails there is written again to another worker from the finished block's file, which the "
              + "writer keeps open until its commit succeeds. false: each block commits before the next starts.")
          .build();

  public static final PropertyKey<Boolean> SHORT_CIRCUIT_WRITE_CREATE_AHEAD =
      PropertyKey.booleanKey("strata.user.shortcircuit.write.create.ahead")
          .defaultValue(true)
          .doc("A MUST_CACHE file written short-circuit with its commits in the background (strata.user.shortcircuit."
              + "write.commit.background) and a grant of a whole block (strata.user.shortcircuit.write.grant.size at "
              + "least the block size, the default) creates the next block's temp block at its worker in the "
              + "background once the current block, the second or a later one, is half written, so the writer "
              + "does not wait for that round trip at the block boundary. A temp block created ahead and not used (the file ended within the "
              + "block) is dropped before the stream's close returns, its space with it.")
          .build();

  public static final PropertyKey<String> SHORT_CIRCUIT_SOCKET_PATH =
      PropertyKey.stringKey("strata.user.shortcircuit.domain.socket.path")
          .defaultValue("/tmp/strata-worker-${strata.worker.rpc.port}.sock")
          .doc("Where a local worker's short-circuit domain socket is; ${strata.worker.rpc.port} is replaced by "
              + "the worker's data port. Must name the file the worker's strata.worker.domain.socket.path names.")
          .build();

  public static final PropertyKey<Boolean> DATA_DOMAIN_SOCKET_ENABLED =
      PropertyKey.booleanKey("strata.user.data.domain.socket.enabled")
          .defaultValue("true")
          .doc("Stream block reads and writes with a worker on this host (its host name is strata.user.hostname) "
              + "over the worker's data domain socket instead of its TCP data port, whenever short-circuit is off "
              + "or falls back. When the socket is missing or Netty epoll is not available the client uses the "
              + "TCP port and logs why once.")
          .build();

  public static final PropertyKey<String> DATA_DOMAIN_SOCKET_PATH =
      PropertyKey.stringKey("strata.user.data.domain.socket.path")
          .defaultValue("/tmp/strata-worker-${strata.worker.rpc.port}-data.sock")
          .doc("Where a local worker's data domain socket is; ${strata.worker.rpc.port} is replaced by the worker's "
              + "data port. Must name the file the worker's strata.worker.data.domain.socket.path names.")
          .build();

  public static final PropertyKey<Boolean> NETWORK_TRANSFER_ENABLED =
      PropertyKey.booleanKey("strata.user.network.transfer.enabled")
          .defaultValue("true")
          .doc("Read blocks a worker holds over its block transfer protocol (raw bytes sent from the block file by "
              + "the worker's kernel, outside gRPC; over the worker's transfer domain socket when it is on this host "
              + "and strata.user.data.domain.socket.enabled) whenever short-circuit is off or falls back. false, or "
              + "a worker that serves none: reads stream over gRPC (the benchmark's path=tcp-grpc). Reads from the "
              + "under file system and writes always go through gRPC.")
          .build();

  public static final PropertyKey<String> TRANSFER_DOMAIN_SOCKET_PATH =
      PropertyKey.stringKey("strata.user.transfer.domain.socket.path")
          .defaultValue("/tmp/strata-worker-${strata.worker.rpc.port}-transfer.sock")
          .doc("Where a local worker's block transfer domain socket is; ${strata.worker.rpc.port} is replaced by the "
              + "worker's data port. Must name the file the worker's strata.worker.transfer.domain.socket.path names.")
          .build();

  public static final PropertyKey<Integer> TRANSFER_CONNECTIONS_IDLE_MAX =
      PropertyKey.intKey("strata.user.transfer.connections.idle.max")
          .defaultValue(8)
          .validate(v -> v >= 0, "0 or more")
          .doc("Block transfer connections a client keeps open per worker between reads (each for at most 30 s); "
              + "a read that finds none opens one.")
          .build();
}
