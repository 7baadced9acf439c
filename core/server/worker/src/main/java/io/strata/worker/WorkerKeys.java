package io.strata.worker;

import io.strata.common.conf.PropertyKey;
import java.time.Duration;
import java.util.List;

/** Keys the worker reads. */
public final class WorkerKeys {
  private WorkerKeys() {}

  public static final PropertyKey<String> HOSTNAME = PropertyKey.stringKey("strata.worker.hostname")
      .defaultValue("localhost")
      .doc("Host name the worker advertises to the master and clients.")
      .build();

  public static final PropertyKey<String> LOCALITY_NODE = PropertyKey.stringKey("strata.worker.locality.node")
      .defaultValue("")
      .doc("The node (machine) this worker reports at registration, compared with clients' nodes to find "
          + "local workers. Empty: the worker's host name (strata.worker.hostname).")
      .build();

  public static final PropertyKey<String> LOCALITY_RACK = PropertyKey.stringKey("strata.worker.locality.rack")
      .defaultValue("")
      .doc("The rack this worker reports at registration, so clients prefer workers in their own rack. Empty: "
          + "unknown (matches no client).")
      .build();

  public static final PropertyKey<String> LOCALITY_SCRIPT = PropertyKey.stringKey("strata.worker.locality.script")
      .defaultValue("")
      .doc("A command (run with sh -c once at start) that prints node=<name> and/or rack=<name>; what it prints "
          + "wins over strata.worker.locality.node/rack. A failure, other output or a timeout stops the start.")
      .build();

  public static final PropertyKey<java.time.Duration> LOCALITY_SCRIPT_TIMEOUT =
      PropertyKey.durationKey("strata.worker.locality.script.timeout")
          .defaultValue("5s")
          .validate(d -> d.toMillis() >= 1, "at least 1ms")
          .doc("How long strata.worker.locality.script may run.")
          .build();

  public static final PropertyKey<String> BIND_HOST = PropertyKey.stringKey("strata.worker.bind.host")
      .defaultValue("127.0.0.1")
      .doc("Address the worker's data server binds to. Loopback by default.")
      .build();

  public static final PropertyKey<Integer> RPC_PORT = PropertyKey.intKey("strata.worker.rpc.port")
      .defaultValue(29999)
      .validate(p -> p >= 0 && p <= 65535, "a port number between 0 and 65535")
      .doc("The worker's gRPC data port (0 picks a free port).")
      .build();

  public static final PropertyKey<Integer> WEB_PORT = PropertyKey.intKey("strata.worker.web.port")
      .defaultValue(-1)
      .validate(p -> p >= -1 && p <= 65535, "-1 (the RPC port + 1), 0 (a free port) or a port number up to 65535")
      .doc("The worker's web port (its pages and /metrics, bound on strata.worker.bind.host). -1: the RPC port + 1 "
          + "(30000 for 29999), falling back to a free port with a warning when that is taken; 0: a free port; "
          + "any other value: exactly that port, or the worker does not start.")
      .build();

  /** The most tiers a worker has (MEM, SSD, HDD). */
  public static final int MAX_TIERS = 3;

  public static final PropertyKey<String> TIER0_ALIAS = tierAlias(0, "MEM");
  public static final PropertyKey<List<String>> TIER0_DIRS = PropertyKey.listKey("strata.worker.tier.0.dirs")
      .defaultValue("/dev/shm/strata-worker-${strata.worker.rpc.port}")
      .doc("Comma separated dirs of the top tier (for MEM, dirs on a tmpfs). ${strata.worker.rpc.port} is "
          + "replaced by the worker's port so several workers can share a host.")
      .build();
  public static final PropertyKey<List<String>> TIER0_QUOTA = tierQuota(0, "2GB");

  public static final PropertyKey<String> TIER1_ALIAS = tierAlias(1, "SSD");
  public static final PropertyKey<List<String>> TIER1_DIRS = tierDirs(1);
  public static final PropertyKey<List<String>> TIER1_QUOTA = tierQuota(1, "10GB");

  public static final PropertyKey<String> TIER2_ALIAS = tierAlias(2, "HDD");
  public static final PropertyKey<List<String>> TIER2_DIRS = tierDirs(2);
  public static final PropertyKey<List<String>> TIER2_QUOTA = tierQuota(2, "100GB");

  public static final PropertyKey<Boolean> TIER0_FSYNC = tierFsync(0);
  public static final PropertyKey<Boolean> TIER1_FSYNC = tierFsync(1);
  public static final PropertyKey<Boolean> TIER2_FSYNC = tierFsync(2);
  public static final List<PropertyKey<Boolean>> TIER_FSYNC = List.of(TIER0_FSYNC, TIER1_FSYNC, TIER2_FSYNC);

  private static PropertyKey<Boolean> tierFsync(int n) {
    return PropertyKey.booleanKey("strata.worker.tier." + n + ".fsync")
        .doc("Whether a block committed to (or moved into) tier " + n + " is fsynced, with its dir entry, before "
            + "the master learns of it (or before the source copy is deleted). Unset: on for every alias but MEM "
            + "(a tmpfs does not survive a crash anyway).")
        .build();
  }

  /** Tier n's keys, n = 0 for the top tier. */
  public static final List<PropertyKey<String>> TIER_ALIAS = List.of(TIER0_ALIAS, TIER1_ALIAS, TIER2_ALIAS);
  public static final List<PropertyKey<List<String>>> TIER_DIRS = List.of(TIER0_DIRS, TIER1_DIRS, TIER2_DIRS);
  public static final List<PropertyKey<List<String>>> TIER_QUOTA = List.of(TIER0_QUOTA, TIER1_QUOTA, TIER2_QUOTA);

  private static PropertyKey<String> tierAlias(int n, String alias) {
    return PropertyKey.stringKey("strata.worker.tier." + n + ".alias").defaultValue(alias)
        .doc("Name of tier " + n + " (0 is the top, fastest tier).").build();
  }

  private static PropertyKey<List<String>> tierDirs(int n) {
    return PropertyKey.listKey("strata.worker.tier." + n + ".dirs")
        .doc("Comma separated dirs of tier " + n + "; the tier exists only when this is set (and every tier "
            + "above it exists).")
        .build();
  }

  private static PropertyKey<List<String>> tierQuota(int n, String quota) {
    return PropertyKey.listKey("strata.worker.tier." + n + ".quota").defaultValue(quota)
        .doc("Bytes each dir of tier " + n + " may hold: one size for every dir, or a comma list with one "
            + "size per dir.")
        .validate(WorkerKeys::allSizes, "a size such as 64MB or 10GB, or a comma list of sizes (one per dir)")
        .build();
  }

  private static boolean allSizes(List<String> sizes) {
    try {
      return !sizes.isEmpty() && sizes.stream().allMatch(q -> io.strata.common.conf.ValueParser.parseBytes(q) > 0);
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  public static final PropertyKey<String> ALLOCATOR = PropertyKey.stringKey("strata.worker.allocator.class")
      .defaultValue("MaxFree")
      .doc("Which dir of a tier receives a new block: MaxFree (most free space), RoundRobin, Greedy (first "
          + "with room), or a class implementing io.strata.worker.store.Allocator.")
      .build();

  public static final PropertyKey<String> ANNOTATOR = PropertyKey.stringKey("strata.worker.annotator.class")
      .defaultValue("LRU")
      .doc("Which blocks are coldest (evicted and moved down first): LRU, LRFU, or a class implementing "
          + "io.strata.worker.store.BlockAnnotator.")
      .build();

  public static final PropertyKey<Double> RESERVER_HIGH_WATERMARK =
      PropertyKey.doubleKey("strata.worker.reserver.high.watermark")
          .defaultValue("0.95")
          .validate(v -> v > 0 && v <= 1, "a fraction in (0, 1]")
          .doc("When a dir is fuller than this fraction, the reserver evicts from it down to the low watermark.")
          .build();

  public static final PropertyKey<Double> RESERVER_LOW_WATERMARK =
      PropertyKey.doubleKey("strata.worker.reserver.low.watermark")
          .defaultValue("0.8")
          .validate(v -> v > 0 && v <= 1, "a fraction in (0, 1]")
          .doc("The fraction of a dir the reserver evicts down to.")
          .build();

  public static final PropertyKey<Duration> TIER_MANAGER_INTERVAL =
      PropertyKey.durationKey("strata.worker.tier.manager.interval")
          .defaultValue("1s")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("How often the worker checks dir health, drops abandoned temp blocks, reserves space and "
              + "aligns tiers.")
          .build();

  public static final PropertyKey<Integer> TIER_ALIGN_MOVES =
      PropertyKey.intKey("strata.worker.tier.align.moves.max")
          .defaultValue(4)
          .validate(v -> v >= 0, "0 or more (0 turns alignment off)")
          .doc("Most blocks moved up per round of tier alignment (hot blocks up, cold ones down).")
          .build();

  public static final PropertyKey<Duration> TEMP_BLOCK_TIMEOUT =
      PropertyKey.durationKey("strata.worker.temp.block.timeout")
          .defaultValue("5min")
          .doc("A block being written that receives no data for this long is abandoned (its client died) "
              + "and removed. A client's block write (short-circuit or streamed) is not: it lives as long as its "
              + "writer's connection or call and its file's lease.")
          .build();

  public static final PropertyKey<Duration> WRITE_SPACE_WAIT_TIMEOUT =
      PropertyKey.durationKey("strata.worker.write.space.wait.timeout")
          .defaultValue("5min")
          .doc("Longest a writer that reserves a whole block (ASYNC_THROUGH) waits for room when every tier is "
              + "full of blocks of files not yet persisted (never evicted from the last tier); meanwhile the "
              + "master persists this worker's files first. Past it the reservation fails with "
              + "RESOURCE_EXHAUSTED and the client tries another worker. 0 refuses at once.")
          .build();

  public static final PropertyKey<Integer> WRITE_BLOCKS_MAX =
      PropertyKey.intKey("strata.worker.write.blocks.max")
          .defaultValue(16384)
          .validate(v -> v >= 1, "at least 1")
          .doc("Most blocks the worker writes at once: streamed and short-circuit writes, whole-block "
              + "reservations not yet written, and the open blocks of shuffle partition files. Each holds a file "
              + "descriptor however small it is, so clients cannot run the worker out of descriptors; one more "
              + "is refused with RESOURCE_EXHAUSTED (the writer tries another worker).")
          .build();

  public static final PropertyKey<Integer> WRITE_SPACE_WAITERS_MAX =
      PropertyKey.intKey("strata.worker.write.space.waiters.max")
          .defaultValue(32)
          .validate(v -> v >= 0, "0 or more")
          .doc("Most whole-block reservations that wait for room at once, each on an RPC handler thread; one "
              + "more does not wait (it gets room now or fails with RESOURCE_EXHAUSTED, and its ASYNC_THROUGH "
              + "writer tries another worker or writes through), so waiting writers never take every "
              + "handler thread, the commits that would free room among them.")
          .build();

  public static final PropertyKey<Duration> HEARTBEAT_INTERVAL =
      PropertyKey.durationKey("strata.worker.heartbeat.interval")
          .defaultValue("1s")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("How often the worker heartbeats to the master (and retries registration while it cannot).")
          .build();

  public static final PropertyKey<Duration> HELD_FILES_CHECK_INTERVAL =
      PropertyKey.durationKey("strata.worker.held.files.check.interval")
          .defaultValue("1min")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("How often a heartbeat names the files whose blocks the worker keeps past the idle timeout (shuffle "
              + "partitions, sealed ones too) and lets go of those the master says ended (deleted or complete): what "
              + "a missed drop left behind, or the files of an application whose driver died.")
          .build();

  public static final PropertyKey<Long> READ_CHUNK_SIZE_MAX = PropertyKey.bytesKey("strata.worker.read.chunk.size.max")
      .defaultValue("4MB")
      .doc("Largest chunk the worker sends in a block read, whatever the client asks for; also the most of a block "
          + "file a transfer sent with strata.worker.transfer.send=mmap maps at once (at least 64KB).")
      .build();

  public static final PropertyKey<Boolean> NETWORK_ZEROCOPY_ENABLED =
      PropertyKey.booleanKey("strata.worker.network.zerocopy.enabled")
          .defaultValue("true")
          .doc("Block reads and writes use the zero-copy marshallers: reads fill pooled direct buffers from the "
              + "block file and lend them to gRPC, writes parse over the transport's buffers without copying. "
              + "false: protobuf's own marshallers and a heap array per chunk (for comparison, or to rule it out). "
              + "A client can also ask for the plain path per call (strata.user.network.zerocopy.enabled=false).")
          .build();

  public static final PropertyKey<Integer> UFS_IO_THREADS = PropertyKey.intKey("strata.worker.ufs.io.threads")
      .defaultValue(16)
      .validate(v -> v >= 1, "at least 1")
      .doc("Threads that read blocks from under file systems for reads of blocks the worker does not hold "
          + "(read-through loads and NO_CACHE streams); more reads wait in a bounded queue (strata.worker.ufs.io.queue.max).")
      .build();

  public static final PropertyKey<Integer> UFS_IO_QUEUE_MAX = PropertyKey.intKey("strata.worker.ufs.io.queue.max")
      .defaultValue(1024)
      .validate(v -> v >= 1, "at least 1")
      .doc("Reads from under file systems that may wait for a strata.worker.ufs.io.threads thread; more are "
          + "refused with RESOURCE_EXHAUSTED.")
      .build();

  public static final PropertyKey<Duration> UFS_READ_STALL_TIMEOUT =
      PropertyKey.durationKey("strata.worker.ufs.read.stall.timeout")
          .defaultValue("1min")
          .validate(d -> d.toMillis() >= 1, "at least 1ms")
          .doc("A reader of a block streamed straight from an under file system (NO_CACHE, or a read of the under "
              + "file system's copy after a corrupt cached one) that takes no data for this long is failed. A "
              + "caching load never waits for its first reader: one not ready for a chunk gets the rest of its range "
              + "from the store after the commit (where strata.worker.read.stream.stall.timeout applies).")
          .build();

  public static final PropertyKey<Integer> ASYNC_CACHE_THREADS =
      PropertyKey.intKey("strata.worker.async.cache.threads")
          .defaultValue(2)
          .validate(v -> v >= 1, "at least 1")
          .doc("Threads that cache blocks in the background (CacheBlock requests: passive caching, fs load).")
          .build();

  public static final PropertyKey<Integer> ASYNC_CACHE_QUEUE_MAX =
      PropertyKey.intKey("strata.worker.async.cache.queue.max")
          .defaultValue(256)
          .validate(v -> v >= 1, "at least 1")
          .doc("Most background cache requests waiting for a thread; when the queue is full, requests are "
              + "refused (accepted = false).")
          .build();

  public static final PropertyKey<Integer> PERSIST_THREADS = PropertyKey.intKey("strata.worker.persist.threads")
      .defaultValue(2)
      .validate(v -> v >= 1, "at least 1")
      .doc("Threads that persist files to under file systems when the master asks (ASYNC_THROUGH).")
      .build();

  public static final PropertyKey<Integer> PERSIST_QUEUE_MAX = PropertyKey.intKey("strata.worker.persist.queue.max")
      .defaultValue(1000)
      .validate(v -> v >= 1, "at least 1")
      .doc("Most persist commands from the master waiting for a persist thread. One more is refused: the worker "
          + "reports it failed (queue full) in its next heartbeat and the master sends it again after its retry "
          + "interval. A command for a file already queued or being persisted here is dropped (the master places "
          + "that one's copy when it is done).")
      .build();

  public static final PropertyKey<Duration> PEER_READ_TIMEOUT =
      PropertyKey.durationKey("strata.worker.peer.read.timeout")
          .defaultValue("5min")
          .validate(d -> d.toMillis() >= 1, "at least 1ms")
          .doc("Longest a whole-block read from another worker may take (background caching, persisting).")
          .build();

  public static final PropertyKey<Integer> STREAMS_MAX = PropertyKey.intKey("strata.worker.streams.max")
      .defaultValue(4096)
      .validate(v -> v >= 1, "at least 1")
      .doc("Most data streams (block reads, block writes, under file system writes) a worker has open at once; "
          + "more are refused with RESOURCE_EXHAUSTED. Each holds a file descriptor.")
      .build();

  public static final PropertyKey<Integer> STREAMS_PER_CLIENT_MAX =
      PropertyKey.intKey("strata.worker.streams.per.client.max")
          .defaultValue(512)
          .validate(v -> v >= 1, "at least 1")
          .doc("Most data streams one client connection may have open on a worker; more are refused with "
              + "RESOURCE_EXHAUSTED.")
          .build();

  public static final PropertyKey<Duration> READ_STREAM_STALL_TIMEOUT =
      PropertyKey.durationKey("strata.worker.read.stream.stall.timeout")
          .defaultValue("2min")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("A block read whose reader takes no data for this long is cancelled (DEADLINE_EXCEEDED) and "
              + "releases the block, so a stuck reader cannot pin a block against removal and eviction.")
          .build();

  public static final PropertyKey<Duration> UFS_WRITE_IDLE_TIMEOUT =
      PropertyKey.durationKey("strata.worker.ufs.write.idle.timeout")
          .defaultValue("5min")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("An under file system write stream (CACHE_THROUGH, THROUGH) that receives no message for this long "
              + "(neither data nor the keep-alive a live client sends every strata.user.ufs.write.keepalive.interval) "
              + "is cancelled (DEADLINE_EXCEEDED) and its partial file deleted: its writer went silent. Keep it well "
              + "above the clients' keep-alive interval.")
          .build();

  public static final PropertyKey<Boolean> SHORT_CIRCUIT_ENABLED =
      PropertyKey.booleanKey("strata.worker.shortcircuit.enabled")
          .defaultValue("true")
          .doc("Serve short-circuit reads and writes to clients on this host over a Unix domain socket (the block's "
              + "file descriptor is passed to the client, which then reads the file itself, or writes a temp block the "
              + "worker grants space for and commits).")
          .build();

  public static final PropertyKey<Integer> SHORT_CIRCUIT_CONNECTIONS_MAX =
      PropertyKey.intKey("strata.worker.shortcircuit.connections.max")
          .defaultValue(1024)
          .validate(v -> v >= 1, "positive")
          .doc("Most short-circuit connections the worker serves at once (each holds a descriptor, and its open "
              + "blocks theirs); one more is closed at once and its client streams over the data port instead, "
              + "saying why.")
          .build();

  public static final PropertyKey<String> DOMAIN_SOCKET_PATH =
      PropertyKey.stringKey("strata.worker.domain.socket.path")
          .defaultValue("/tmp/strata-worker-${strata.worker.rpc.port}.sock")
          .doc("The worker's Unix domain socket for short-circuit reads; ${strata.worker.rpc.port} is replaced "
              + "by the worker's port. Its mode is 0660 (the worker's user and group). Clients find it through "
              + "strata.user.shortcircuit.domain.socket.path, which must name the same file.")
          .build();

  public static final PropertyKey<Boolean> DATA_DOMAIN_SOCKET_ENABLED =
      PropertyKey.booleanKey("strata.worker.data.domain.socket.enabled")
          .defaultValue("true")
          .doc("Also serve the data service (block reads and writes) on a Unix domain socket, for clients on this "
              + "host (strata.user.data.domain.socket.enabled); nothing new is advertised. Needs Netty epoll: "
              + "without it the worker logs why and serves on its data port only.")
          .build();

  public static final PropertyKey<String> DATA_DOMAIN_SOCKET_PATH =
      PropertyKey.stringKey("strata.worker.data.domain.socket.path")
          .defaultValue("/tmp/strata-worker-${strata.worker.rpc.port}-data.sock")
          .doc("The worker's Unix domain socket for the data service; ${strata.worker.rpc.port} is replaced by the "
              + "worker's port. Mode 0660 (the worker's user and group); a stale file is replaced at start and the "
              + "file removed at stop. Clients find it through strata.user.data.domain.socket.path, which must "
              + "name the same file.")
          .build();

  public static final PropertyKey<Integer> SHUFFLE_APPLY_THREADS =
      PropertyKey.intKey("strata.worker.shuffle.apply.threads")
          .defaultValue("4")
          .validate(n -> n >= 1, "at least 1")
          .doc("Threads that append pushed shuffle batches to partition files (pushes are never applied on a "
              + "network thread).")
          .build();

  public static final PropertyKey<Integer> SHUFFLE_APPLY_QUEUE_MAX =
      PropertyKey.intKey("strata.worker.shuffle.apply.queue.max")
          .defaultValue("1024")
          .validate(n -> n >= 1, "at least 1")
          .doc("Shuffle pushes queued for the apply threads at most; one more is answered BACK_OFF.")
          .build();

  public static final PropertyKey<Long> SHUFFLE_BUFFER_HIGH_WATERMARK =
      PropertyKey.bytesKey("strata.worker.shuffle.buffer.high.watermark")
          .defaultValue("256MB")
          .validate(n -> n >= 1, "at least 1 byte")
          .doc("Bytes of shuffle pushes received and not yet answered (queued, being appended or waiting for "
              + "the replica) past which a push is answered BACK_OFF with nothing applied, so clients slow down "
              + "instead of the worker running out of memory. Primaries' forwards to this worker as their replica "
              + "are counted apart, against twice this (or twice the network message limit if that is more).")
          .build();

  public static final PropertyKey<Integer> SHUFFLE_PARTITIONS_MAX =
      PropertyKey.intKey("strata.worker.shuffle.partitions.max")
          .defaultValue("200000")
          .validate(n -> n >= 1, "at least 1")
          .doc("Shuffle partition files (primary and replica copies) open on this worker at most; an "
              + "OpenPartitions past it is refused RESOURCE_EXHAUSTED with nothing opened (the driver places those "
              + "partitions on other workers). Each open one holds some heap and is named in the worker's "
              + "held-files heartbeats.")
          .build();

  public static final PropertyKey<Long> SHUFFLE_REPLICA_PARKED_MAX =
      PropertyKey.bytesKey("strata.worker.shuffle.replica.parked.max")
          .defaultValue("1GB")
          .validate(n -> n >= 0, "at least 0 bytes")
          .doc("Bytes of forwarded shuffle batches a replica worker holds, over all its partition copies, while "
              + "they wait for the batches before them (forwards may arrive out of order). A forward past it is not "
              + "kept: that copy takes no more batches (it can still be sealed as the shorter prefix), its primary "
              + "refuses the partition from then on and the client revives it on other workers.")
          .build();

  public static final PropertyKey<Long> SHUFFLE_APPEND_BUFFER_MAX =
      PropertyKey.bytesKey("strata.worker.shuffle.append.buffer.max")
          .defaultValue("64MB")
          .validate(n -> n >= 0, "at least 0 bytes")
          .doc("Heap the shuffle partition files' write-behind buffers may hold together: a partition file keeps up "
              + "to 64 KiB of small acknowledged batches (their room in its block reserved first) and writes them "
              + "in one go when the buffer fills and at the seal, instead of one write per batch. Past it, batches "
              + "are written as they come. 0 turns write-behind off.")
          .build();

  public static final PropertyKey<java.time.Duration> SHUFFLE_BACKOFF =
      PropertyKey.durationKey("strata.worker.shuffle.backoff")
          .defaultValue("50ms")
          .validate(d -> d.toMillis() >= 1, "at least 1ms")
          .doc("How long a client told BACK_OFF waits before pushing again (sent with the answer).")
          .build();

  public static final PropertyKey<Long> SHUFFLE_BATCH_SIZE_MAX =
      PropertyKey.bytesKey("strata.worker.shuffle.batch.size.max")
          .defaultValue("16MB")
          .validate(n -> n >= 1, "at least 1 byte")
          .doc("Largest shuffle batch a push may carry; a bigger one is refused INVALID_ARGUMENT.")
          .build();

  public static final PropertyKey<Integer> SHUFFLE_SEAL_THREADS =
      PropertyKey.intKey("strata.worker.shuffle.seal.threads")
          .defaultValue("4")
          .validate(n -> n >= 1, "at least 1")
          .doc("Threads that seal shuffle partition files (commits at the master, the under file system copy) "
              + "and drop them.")
          .build();

  public static final PropertyKey<Integer> SHUFFLE_SEAL_FILE_THREADS =
      PropertyKey.intKey("strata.worker.shuffle.seal.file.threads")
          .defaultValue("16")
          .validate(n -> n >= 1, "at least 1")
          .doc("Partition files of one seal request sealed at once (each waits on its master commits and its "
              + "under file system copy; the master's journal commits concurrent ones together).")
          .build();

  public static final PropertyKey<java.time.Duration> SHUFFLE_FORWARD_TIMEOUT =
      PropertyKey.durationKey("strata.worker.shuffle.forward.timeout")
          .defaultValue("30s")
          .validate(d -> d.toMillis() >= 1, "at least 1ms")
          .doc("How long a primary waits for its replica to ack forwarded shuffle batches (sending them again "
              + "while the replica answers BACK_OFF) before failing the push: UNAVAILABLE naming the replica, and "
              + "the partition takes no more pushes on this pair (the client revives it elsewhere).")
          .build();

  public static final PropertyKey<Boolean> TRANSFER_ENABLED =
      PropertyKey.booleanKey("strata.worker.transfer.enabled")
          .defaultValue("true")
          .doc("Serve the block transfer protocol (strata_transfer.proto): reads of blocks this worker holds as raw "
              + "bytes sent from the block file by the kernel (sendfile), outside gRPC, on the transfer port and, "
              + "with Netty epoll, on the transfer domain socket. Clients use it unless "
              + "strata.user.network.transfer.enabled is false; everything else goes through the data port.")
          .build();

  public static final PropertyKey<Integer> TRANSFER_PORT = PropertyKey.intKey("strata.worker.transfer.port")
      .defaultValue(0)
      .validate(p -> p >= 0 && p <= 65535, "a port number between 0 and 65535")
      .doc("The worker's block transfer port (TCP, bound on strata.worker.bind.host). 0 picks a free port; either "
          + "way the worker registers it with the master, which hands it to clients with the block locations.")
      .build();

  public static final PropertyKey<String> TRANSFER_SEND = PropertyKey.stringKey("strata.worker.transfer.send")
      .defaultValue("sendfile")
      .validate(v -> v.equals("sendfile") || v.equals("mmap"), "one of sendfile, mmap")
      .doc("How the worker puts a block's bytes on a block transfer connection: sendfile (the kernel sends from the "
          + "file, no copy in the JVM; the faster for sequential reads, on both sockets) or mmap (the block file's "
          + "range mapped read-only a window of strata.worker.read.chunk.size.max at a time and written from the "
          + "mapping, each window unmapped when written: one copy, as a plain "
          + "socket write; measured faster for 1 MiB positioned reads over TCP, slower for sequential reads and "
          + "over the domain socket). docs/PERFORMANCE.md has the figures.")
      .build();

  public static final PropertyKey<Integer> TRANSFER_CONNECTIONS_MAX =
      PropertyKey.intKey("strata.worker.transfer.connections.max")
          .defaultValue(1024)
          .validate(v -> v >= 1, "positive")
          .doc("Most block transfer connections (TCP and domain socket together) the worker serves at once; one "
              + "more is closed at once and its client reads through the data port instead, saying why.")
          .build();

  public static final PropertyKey<String> TRANSFER_DOMAIN_SOCKET_PATH =
      PropertyKey.stringKey("strata.worker.transfer.domain.socket.path")
          .defaultValue("/tmp/strata-worker-${strata.worker.rpc.port}-transfer.sock")
          .doc("The worker's Unix domain socket for the block transfer protocol (served when "
              + "strata.worker.data.domain.socket.enabled and Netty epoll is there); ${strata.worker.rpc.port} is "
              + "replaced by the worker's port. Mode 0660; a stale file is replaced at start and removed at stop. "
              + "Clients find it through strata.user.transfer.domain.socket.path, which must name the same file.")
          .build();

  public static final PropertyKey<Duration> TRANSFER_IDLE_TIMEOUT =
      PropertyKey.durationKey("strata.worker.transfer.idle.timeout")
          .defaultValue("1min")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("A block transfer connection that sends no request for this long is closed (clients keep idle "
              + "connections for less than this). A transfer whose reader takes no bytes for "
              + "strata.worker.read.stream.stall.timeout is cut and its block released.")
          .build();

  /** A socket path key's value with the worker's port put in. */
  static String socketPath(String template, int port) {
    return template.replace("${strata.worker.rpc.port}", Integer.toString(port));
  }
}
