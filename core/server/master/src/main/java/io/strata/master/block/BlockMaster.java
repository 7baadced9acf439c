package io.strata.master.block;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Block metadata and the worker registry: each block's length and the workers holding it, each worker's
 * address, capacity, usage and last heartbeat. A worker silent for longer than the timeout is marked lost
 * and its locations dropped; the block itself stays known, so the worker's return (it registers again
 * with its block report) restores the locations.
 *
 * <p>Blocks are kept in a map ordered by id, so the blocks of one file (one id range, see
 * {@link BlockId}) are a sub-map. Thread-safe: every method holds this object's monitor; none does I/O.
 *
 * <p>Lock order (docs/ARCHITECTURE.md, "Concurrency"): the file system master's commit lock, then the
 * namespace lock, then this monitor, then the journal's. Nothing is taken while this monitor is held but
 * the journal's (by callers) and, for register and heartbeats that report blocks, the namespace read
 * lock, which those two take <em>before</em> this monitor ({@link FileLookup#whileUnchanged}) and only
 * re-enter inside it. Never held across an RPC, a UFS call or a wait.
 */
public final class BlockMaster {
  private static final Logger LOG = LoggerFactory.getLogger(BlockMaster.class);

  private static final class BlockMeta {
    final long length;
    /** worker id → tier alias. */
    final Map<Long, String> locations = new HashMap<>(2);

    BlockMeta(long length) {
      this.length = length;
    }
  }

  private final Clock clock;
  private final Duration workerTimeout;
  private final FileLookup files;
  private final NavigableMap<Long, BlockMeta> blocks = new TreeMap<>();
  private final Map<Long, WorkerMeta> live = new HashMap<>();
  private final Map<Long, WorkerMeta> lost = new HashMap<>();
  /**
   * Files freed ({@link #freeFileBlocks}), until deleted: a copy of one of their blocks the master has no record of
   * (none committed since the free) is a copy from before the free, and is removed rather than listed when a worker
   * reports it (one that missed the free's removal: lost meanwhile, or reporting to a master restarted since).
   * Journaled (JournalEntry.Free), so a restarted master or a new leader keeps the free.
   */
  private final java.util.Set<Long> freed = new java.util.HashSet<>();
  private long nextWorkerId;
  private int removalsPerHeartbeat = Integer.MAX_VALUE;
  private long forgetLostAfterMs = Long.MAX_VALUE;

  public BlockMaster(Clock clock, Duration workerTimeout, FileLookup files) {
    this.clock = clock;
    this.workerTimeout = workerTimeout;
    this.files = files;
    // Worker ids start at a random point so that a worker from before a master restart never holds an
    // id the new master hands to someone else.
    this.nextWorkerId = 1 + (new SecureRandom().nextLong() >>> 20);
  }

  /**
   * Bounds, set once at start: a heartbeat reply carries at most {@code removalsPerHeartbeat} removals
   * (a long list is sent in rotating batches, so a block the worker cannot remove yet does not hold back
   * the others), and a worker lost for {@code forgetLostAfter} is forgotten.
   */
  public synchronized void limits(int removalsPerHeartbeat, Duration forgetLostAfter) {
    this.removalsPerHeartbeat = removalsPerHeartbeat;
    this.forgetLostAfterMs = forgetLostAfter.toMillis();
  }

  // ---- workers ----

  /** Registers (or re-registers) a worker with its full block report; returns its id. */
  public long register(WorkerAddress address, long capacity, long used, List<BlockReport> report,
      long startTimeMs) {
    return register(address, capacity, used, report, startTimeMs, List.of());
  }

  /** As above, with the worker's storage dirs. */
  public long register(WorkerAddress address, long capacity, long used, List<BlockReport> report,
      long startTimeMs, List<StorageDirState> dirs) {
    // The namespace first, then this monitor: the report's unknown blocks are looked up in the namespace.
    return report.isEmpty() ? registerLocked(address, capacity, used, report, startTimeMs, dirs)
        : files.whileUnchanged(() -> registerLocked(address, capacity, used, report, startTimeMs, dirs));
  }

  private synchronized long registerLocked(WorkerAddress address, long capacity, long used,
      List<BlockReport> report, long startTimeMs, List<StorageDirState> dirs) {
    // Removals the master still wants of this address's copies carry over: a copy replaced or found corrupt
    // while the worker was away (or before it restarted) is refused below and removed there.
    java.util.Set<Long> stillToRemove = new java.util.HashSet<>();
    for (Iterator<WorkerMeta> it = live.values().iterator(); it.hasNext(); ) {
      WorkerMeta old = it.next();
      if (old.address.equals(address)) {
        LOG.info("Worker {} at {} registers again; dropping its old registration", old.id, address);
        dropLocations(old);
        stillToRemove.addAll(old.toRemove);
        it.remove();
      }
    }
    for (Iterator<WorkerMeta> it = lost.values().iterator(); it.hasNext(); ) {
      WorkerMeta old = it.next();
      if (old.address.equals(address)) {
        stillToRemove.addAll(old.toRemove);
        it.remove();
      }
    }
    WorkerMeta w = new WorkerMeta(nextWorkerId++, address, startTimeMs);
    w.toRemove.addAll(stillToRemove);
    w.capacityBytes = capacity;
    w.usedBytes = used;
    w.dirs = List.copyOf(dirs);
    w.lastHeartbeatMs = clock.millis();
    live.put(w.id, w);
    int kept = 0;
    for (BlockReport b : report) {
      if (addLocation(w, b)) {
        kept++;
      }
    }
    LOG.info("Registered worker {} at {} (capacity {} bytes, {} of {} reported blocks kept)", w.id, address,
        capacity, kept, report.size());
    return w.id;
  }

  /**
   * Adds the reported block to the worker, or schedules its removal when no file wants it. The caller
   * entered {@link FileLookup#whileUnchanged} before this monitor.
   */
  private boolean addLocation(WorkerMeta w, BlockReport b) {
    if (w.toRemove.contains(b.blockId())) {
      // Told to remove it (freed, deleted, dropped): a report of it made before the worker got that word lists
      // nothing, or readers would be sent to a copy that is about to go. A copy cached again after the worker
      // removed it is reported removed first, which clears this.
      return false;
    }
    BlockMeta meta = blocks.get(b.blockId());
    if (meta == null && freed.contains(BlockId.fileId(b.blockId()))) {
      w.toRemove.add(b.blockId()); // a copy from before its file was freed
      return false;
    }
    if (meta == null) {
      // A negative length, or one past the file's block size, is no copy of it (a worker's bug, or not a worker): it
      // must not become a record no commit can replace ("already committed with length -1") and nothing removes.
      if (b.length() < 0 || b.length() > files.maxBlockLength(b.blockId())) {
        LOG.warn("Worker {} reports block {} with length {}, which no block of its file can have; removing that copy",
            w.id, b.blockId(), b.length());
        w.toRemove.add(b.blockId());
        return false;
      }
      if (files.stateOf(BlockId.fileId(b.blockId())) != FileLookup.FileState.INCOMPLETE
          && files.cacheableLength(b.blockId()) != b.length()) {
        w.toRemove.add(b.blockId());
        return false;
      }
      meta = new BlockMeta(b.length());
      blocks.put(b.blockId(), meta);
    } else if (meta.length != b.length()) {
      LOG.warn("Worker {} reports block {} with length {}, but it has length {}; removing that copy",
          w.id, b.blockId(), b.length(), meta.length);
      w.toRemove.add(b.blockId());
      return false;
    }
    meta.locations.put(w.id, b.tier());
    w.blocks.add(b.blockId());
    return true;
  }

  public HeartbeatResult heartbeat(long workerId, long capacity, long used, List<BlockReport> added,
      List<Long> removed) {
    return heartbeat(workerId, capacity, used, added, removed, null);
  }

  /**
   * A heartbeat: usage, blocks removed (or lost with a failed dir), blocks added or moved to another tier
   * (their tier is updated), and the storage dirs (null: unchanged).
   */
  public HeartbeatResult heartbeat(long workerId, long capacity, long used, List<BlockReport> added,
      List<Long> removed, List<StorageDirState> dirs) {
    // As register: the namespace before this monitor when added blocks may need a lookup.
    return added.isEmpty() ? heartbeatLocked(workerId, capacity, used, added, removed, dirs)
        : files.whileUnchanged(() -> heartbeatLocked(workerId, capacity, used, added, removed, dirs));
  }

  private synchronized HeartbeatResult heartbeatLocked(long workerId, long capacity, long used,
      List<BlockReport> added, List<Long> removed, List<StorageDirState> dirs) {
    WorkerMeta w = live.get(workerId);
    if (w == null) {
      return new HeartbeatResult(true, List.of());
    }
    if (dirs != null) {
      w.dirs = List.copyOf(dirs);
    }
    w.capacityBytes = capacity;
    w.usedBytes = used;
    w.lastHeartbeatMs = clock.millis();
    for (long id : removed) {
      w.blocks.remove(id);
      w.toRemove.remove(id);
      w.toRelease.remove(id);
      BlockMeta meta = blocks.get(id);
      if (meta != null) {
        meta.locations.remove(workerId);
      }
    }
    for (BlockReport b : added) {
      addLocation(w, b);
    }
    return new HeartbeatResult(false, removalBatch(w));
  }

  /** The next batch of the worker's removals: all of them, or a window that moves on every reply. */
  private List<Long> removalBatch(WorkerMeta w) {
    int n = w.toRemove.size();
    if (n <= removalsPerHeartbeat) {
      return new ArrayList<>(w.toRemove);
    }
    long skip = (w.removalRound++ * (long) removalsPerHeartbeat) % n;
    List<Long> out = new ArrayList<>(removalsPerHeartbeat);
    Iterator<Long> it = w.toRemove.iterator();
    for (long i = 0; i < skip; i++) {
      it.next();
    }
    while (out.size() < removalsPerHeartbeat) {
      if (!it.hasNext()) {
        it = w.toRemove.iterator(); // wrap around
      }
      out.add(it.next());
    }
    return out;
  }

  /**
   * Marks workers silent for longer than the timeout as lost, and forgets workers lost for longer than the
   * forget time; returns the newly lost.
   */
  public synchronized List<WorkerState> detectLostWorkers() {
    long now = clock.millis();
    for (Iterator<WorkerMeta> it = lost.values().iterator(); it.hasNext(); ) {
      WorkerMeta w = it.next();
      if (now - w.lastHeartbeatMs - workerTimeout.toMillis() > forgetLostAfterMs) {
        it.remove();
        LOG.info("Worker {} at {} was lost for longer than {} ms: forgotten", w.id, w.address, forgetLostAfterMs);
      }
    }
    List<WorkerState> out = new ArrayList<>();
    for (Iterator<WorkerMeta> it = live.values().iterator(); it.hasNext(); ) {
      WorkerMeta w = it.next();
      if (now - w.lastHeartbeatMs > workerTimeout.toMillis()) {
        it.remove();
        int dropped = w.blocks.size(); // dropLocations clears w.blocks
        dropLocations(w);
        lost.put(w.id, w);
        out.add(w.snapshot());
        LOG.warn("Worker {} at {} sent no heartbeat for {} ms: marked lost, {} block locations dropped",
            w.id, w.address, now - w.lastHeartbeatMs, dropped);
      }
    }
    return out;
  }

  private void dropLocations(WorkerMeta w) {
    w.toRelease.clear();
    for (long id : w.blocks) {
      BlockMeta meta = blocks.get(id);
      if (meta != null) {
        meta.locations.remove(w.id);
      }
    }
    w.blocks.clear();
  }

  public synchronized List<WorkerState> liveWorkers() {
    List<WorkerState> out = new ArrayList<>(live.size());
    for (WorkerMeta w : live.values()) {
      out.add(w.snapshot());
    }
    out.sort((a, b) -> a.address().toString().compareTo(b.address().toString()));
    return out;
  }

  /**
   * The blocks the live worker is told to remove in its heartbeat replies: asked every reply until a heartbeat of
   * its reports them removed, or it commits a new copy. Empty for a worker not live.
   */
  public synchronized java.util.Set<Long> removalsOf(long workerId) {
    WorkerMeta w = live.get(workerId);
    return w == null ? java.util.Set.of() : java.util.Set.copyOf(w.toRemove);
  }

  public synchronized List<WorkerState> lostWorkers() {
    List<WorkerState> out = new ArrayList<>(lost.size());
    for (WorkerMeta w : lost.values()) {
      out.add(w.snapshot());
    }
    return out;
  }

  // ---- blocks ----

  /** A new copy: {@link #commitBlock(long, long, long, String, boolean, String)}, not an announce, replacing none. */
  public void commitBlock(long workerId, long blockId, long length, String tier) throws StrataException {
    commitBlock(workerId, blockId, length, tier, false, null);
  }

  /** {@link #commitBlock(long, long, long, String, boolean, String)} replacing no other copy. */
  public void commitBlock(long workerId, long blockId, long length, String tier, boolean announce)
      throws StrataException {
    commitBlock(workerId, blockId, length, tier, announce, null);
  }

  /**
   * Records that a worker committed a block. The caller (the file system master) has checked that the
   * block's file accepts it. A new copy ({@code announce} false) supersedes a removal of an older one the
   * worker has not reported yet. An {@code announce} says again that the worker holds a copy it committed
   * before (a reader found it unlisted); while that copy is down for removal (freed, its file deleted, found
   * corrupt) the announce is refused, as a heartbeat report of it would be ignored: it would list the copy
   * again and cancel its removal. With {@code replaces} ("host:port", null or empty: none) this copy replaces
   * that worker's: its location goes (live or lost), it is told to remove the copy, and its reports of it are
   * refused, also after it registers again at that address ({@link WorkerMeta#toRemove} carries over). A copy of
   * another length than the block's is refused, unless it replaces the only copy listed: then the block takes the
   * new length (the caller journals it; replay keeps the last length journaled).
   */
  public synchronized void commitBlock(long workerId, long blockId, long length, String tier, boolean announce,
      String replaces) throws StrataException {
    WorkerMeta w = live.get(workerId);
    if (w == null) {
      throw new NotFoundException("Worker " + workerId + " is not registered (it may have been marked lost); "
          + "it must register again before committing block " + blockId);
    }
    if (length < 0) {
      throw new InvalidArgumentException("Block " + blockId + " cannot have negative length " + length);
    }
    if (announce && w.toRemove.contains(blockId)) {
      throw new FailedPreconditionException("Block " + blockId + " on worker " + workerId + " is not listed "
          + "again: the master has told that worker to remove its copy (freed, deleted or found corrupt)");
    }
    BlockMeta meta = blocks.get(blockId);
    if (announce && meta == null && freed.contains(BlockId.fileId(blockId))) {
      w.toRemove.add(blockId);
      throw new FailedPreconditionException("Block " + blockId + " on worker " + workerId + " is not listed again: "
          + "its file was freed, and the worker is told to remove that copy");
    }
    boolean replacing = replaces != null && !replaces.isEmpty();
    if (meta != null && meta.length != length) {
      List<Long> others = new ArrayList<>();
      for (long holder : meta.locations.keySet()) {
        WorkerMeta h = live.get(holder);
        if (!replacing || h == null || !isAt(h, replaces)) {
          others.add(holder);
        }
      }
      if (!replacing || !others.isEmpty()) {
        throw new FailedPreconditionException("Block " + blockId + " is already committed with length "
            + meta.length + ", not " + length + (replacing ? " (held by workers " + others + " besides " + replaces
            + ")" : ""));
      }
      // In place of the only copy of another length (a shuffle primary's, longer than its replica's): the block
      // starts again with the new length; that copy goes below, as any replaced copy does.
      meta = null;
      blocks.remove(blockId);
    }
    if (meta == null) {
      meta = new BlockMeta(length);
      blocks.put(blockId, meta);
    }
    if (replacing) {
      replace(workerId, blockId, meta, replaces);
    }
    meta.locations.put(workerId, tier);
    w.blocks.add(blockId);
    w.toRemove.remove(blockId);
  }

  /** Drops the copy of the block of the worker at {@code replaces}, live or lost, for good (see {@link #commitBlock}). */
  private void replace(long workerId, long blockId, BlockMeta meta, String replaces) {
    for (Map<Long, WorkerMeta> m : List.of(live, lost)) {
      for (WorkerMeta o : m.values()) {
        if (o.id == workerId || !isAt(o, replaces)) {
          continue;
        }
        meta.locations.remove(o.id);
        o.blocks.remove(blockId);
        o.toRelease.remove(blockId);
        o.toRemove.add(blockId);
        LOG.debug("Block {}: worker {} commits a copy in place of worker {}'s ({})", blockId, workerId, o.id,
            replaces);
      }
    }
  }

  /** Whether the worker is at {@code hostPort} ("host:port", as a commit names the worker it replaces). */
  private static boolean isAt(WorkerMeta w, String hostPort) {
    return hostPort.equals(w.address.toString());
  }

  public synchronized boolean hasBlock(long blockId) {
    return blocks.containsKey(blockId);
  }

  /** The block's length, or -1 when it is not committed. */
  /** The committed blocks of a file: block index to length, in index order (a range of the block map). */
  public synchronized java.util.SortedMap<Long, Long> fileBlockLengths(long fileId) {
    java.util.SortedMap<Long, Long> out = new java.util.TreeMap<>();
    for (Map.Entry<Long, BlockMeta> e : blocks.subMap(BlockId.of(fileId, 0), true,
        BlockId.of(fileId, BlockId.MAX_INDEX), true).entrySet()) {
      out.put((long) BlockId.index(e.getKey()), e.getValue().length);
    }
    return out;
  }

  public synchronized long blockLength(long blockId) {
    BlockMeta meta = blocks.get(blockId);
    return meta == null ? -1 : meta.length;
  }

  /** The block and its live locations; null when it is not committed. */
  public synchronized BlockState getBlock(long blockId) {
    BlockMeta meta = blocks.get(blockId);
    if (meta == null) {
      return null;
    }
    List<BlockState.Location> locs = new ArrayList<>(meta.locations.size());
    for (Map.Entry<Long, String> e : meta.locations.entrySet()) {
      WorkerMeta w = live.get(e.getKey());
      if (w != null) {
        locs.add(new BlockState.Location(w.snapshot(), e.getValue()));
      }
    }
    return new BlockState(blockId, meta.length, locs);
  }

  /**
   * A free of a file: its blocks are forgotten and their holders told to remove them, as {@link #removeFileBlocks},
   * and the file is marked freed, so copies from before the free that a worker reports later (it was lost, or the
   * master restarted, before the removal reached it) are removed too; a new copy committed since is kept. The caller
   * journals it (JournalEntry.Free; replay calls this again). Returns the blocks forgotten.
   */
  public synchronized int freeFileBlocks(long fileId) {
    int n = removeFileBlocks(fileId, 0); // (which forgets an earlier free's mark: set again below)
    freed.add(fileId);
    return n;
  }

  /** Whether the file was freed and not deleted since (see {@link #freeFileBlocks}). */
  public synchronized boolean freed(long fileId) {
    return freed.contains(fileId);
  }

  /**
   * Forgets every block of a file whose index is {@code fromIndex} or more, and tells the workers
   * holding them to remove them. Used on delete (fromIndex 0, which also forgets that the file was freed) and on
   * complete (stray blocks past the end).
   */
  public synchronized int removeFileBlocks(long fileId, long fromIndex) {
    if (fromIndex == 0) {
      freed.remove(fileId);
    }
    if (fromIndex > BlockId.MAX_INDEX) {
      return 0;
    }
    long from = BlockId.of(fileId, fromIndex);
    long to = BlockId.of(fileId, BlockId.MAX_INDEX);
    NavigableMap<Long, BlockMeta> range = blocks.subMap(from, true, to, true);
    int n = 0;
    for (Iterator<Map.Entry<Long, BlockMeta>> it = range.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Long, BlockMeta> e = it.next();
      for (long workerId : e.getValue().locations.keySet()) {
        WorkerMeta w = live.get(workerId);
        if (w != null) {
          w.blocks.remove(e.getKey());
          w.toRelease.remove(e.getKey());
          w.toRemove.add(e.getKey());
        }
      }
      it.remove();
      n++;
    }
    return n;
  }

  /**
   * A reader found the copy of a block on {@code worker} corrupt (a checksum failed at {@code offset}):
   * the location is dropped and the worker told to remove the copy (heartbeat removals), when the bytes
   * exist elsewhere: another live copy, or the under file system ({@code persisted}). The only copy of a
   * file not persisted is kept and stays listed (its other chunks are all that is left of the data), so
   * reads of it fail with DATA_LOSS rather than "no copy". Returns whether the copy was dropped.
   */
  public synchronized boolean dropCorruptCopy(long blockId, WorkerAddress worker, boolean persisted, long offset,
      String reason) {
    BlockMeta meta = blocks.get(blockId);
    WorkerMeta w = null;
    for (WorkerMeta c : live.values()) {
      if (c.address.equals(worker)) {
        w = c;
      }
    }
    if (meta == null || w == null || !meta.locations.containsKey(w.id)) {
      LOG.info("Corrupt copy of block {} on {} reported, but the master lists no such copy", blockId, worker);
      return false;
    }
    long self = w.id;
    boolean others = meta.locations.keySet().stream().anyMatch(id -> id != self && live.containsKey(id));
    if (!persisted && !others) {
      LOG.error("Block {} on worker {} is corrupt at offset {} ({}); it is the only copy of a file not in the "
          + "under file system, so it is kept and reads of the block fail with DATA_LOSS", blockId, worker,
          offset, reason);
      return false;
    }
    meta.locations.remove(self);
    w.blocks.remove(blockId);
    w.toRelease.remove(blockId);
    w.toRemove.add(blockId);
    LOG.warn("Block {} on worker {} is corrupt at offset {} ({}): copy dropped, the worker removes it; the "
        + "bytes are read from {}", blockId, worker, offset, reason, others ? "another copy" : "the under file system");
    return true;
  }

  // ---- persistence: which copies workers may evict ----

  /**
   * A file became PERSISTED: every worker holding one of its blocks is told, in its next heartbeats, that
   * it may evict those copies (until then a worker keeps them out of eviction from its last tier).
   */
  public synchronized void filePersisted(long fileId) {
    long from = BlockId.of(fileId, 0);
    long to = BlockId.of(fileId, BlockId.MAX_INDEX);
    for (Map.Entry<Long, BlockMeta> e : blocks.subMap(from, true, to, true).entrySet()) {
      for (long workerId : e.getValue().locations.keySet()) {
        WorkerMeta w = live.get(workerId);
        if (w != null) {
          w.toRelease.add(e.getKey());
        }
      }
    }
  }

  /** The worker's copies of these blocks (of persisted files) may be evicted: tell it. Unknown ones are skipped. */
  public synchronized void releaseToWorker(long workerId, java.util.Collection<Long> blockIds) {
    WorkerMeta w = live.get(workerId);
    if (w == null) {
      return;
    }
    for (long id : blockIds) {
      if (w.blocks.contains(id)) {
        w.toRelease.add(id);
      }
    }
  }

  /** A batch of block ids a worker may evict, named by a sequence number the worker acknowledges. */
  public record ReleaseBatch(long seq, List<Long> blockIds) {
    public static final ReleaseBatch NONE = new ReleaseBatch(0, List.of());
  }

  /**
   * Up to {@code max} block ids the worker may now evict, for a heartbeat reply. The batch is sent again
   * until the worker says it applied it ({@code ackedSeq}), so a lost reply loses nothing.
   */
  public synchronized ReleaseBatch takeReleased(long workerId, int max, long ackedSeq) {
    WorkerMeta w = live.get(workerId);
    if (w == null) {
      return ReleaseBatch.NONE;
    }
    if (!w.releaseInFlight.isEmpty() && ackedSeq < w.releaseSeq) {
      return new ReleaseBatch(w.releaseSeq, w.releaseInFlight);
    }
    w.releaseInFlight = List.of();
    if (w.toRelease.isEmpty()) {
      return ReleaseBatch.NONE;
    }
    List<Long> out = new ArrayList<>(Math.min(max, w.toRelease.size()));
    for (Iterator<Long> it = w.toRelease.iterator(); it.hasNext() && out.size() < max; ) {
      out.add(it.next());
      it.remove();
    }
    w.releaseInFlight = List.copyOf(out);
    w.releaseSeq++;
    return new ReleaseBatch(w.releaseSeq, w.releaseInFlight);
  }

  /** What a worker's writers wait for room for (from its heartbeat). */
  public synchronized void awaitedBytes(long workerId, long bytes) {
    WorkerMeta w = live.get(workerId);
    if (w != null) {
      w.awaitedBytes = Math.max(0, bytes);
    }
  }

  /** Live workers whose writers wait for room: the persist scheduler serves their files first. */
  public synchronized java.util.Set<Long> workersAwaitingSpace() {
    java.util.Set<Long> out = new java.util.HashSet<>();
    for (WorkerMeta w : live.values()) {
      if (w.awaitedBytes > 0) {
        out.add(w.id);
      }
    }
    return out;
  }

  public synchronized long blockCount() {
    return blocks.size();
  }

  // ---- recovery ----

  /**
   * Restores a journaled block (no locations: workers report those when they register). A block journaled again
   * with another length (a commit that replaced the only copy of the old one) takes the later length.
   */
  public synchronized void restoreBlock(long blockId, long length) {
    BlockMeta had = blocks.get(blockId);
    if (had == null || had.length != length) {
      blocks.put(blockId, new BlockMeta(length));
    }
  }

  /**
   * Every known block as a journal entry, for a checkpoint, after the freed files (replaying a Free forgets the blocks
   * of its files: the blocks committed since the free are restored after it).
   */
  public synchronized List<io.strata.master.journal.JournalEntry> snapshotEntries() {
    List<io.strata.master.journal.JournalEntry> out = new ArrayList<>(blocks.size() + freed.size() / 1024 + 1);
    List<Long> ids = new ArrayList<>(freed);
    for (int i = 0; i < ids.size(); i += 1024) {
      out.add(new io.strata.master.journal.JournalEntry.Free(ids.subList(i, Math.min(ids.size(), i + 1024))));
    }
    for (Map.Entry<Long, BlockMeta> e : blocks.entrySet()) {
      out.add(new io.strata.master.journal.JournalEntry.CommitBlock(e.getKey(), e.getValue().length));
    }
    return out;
  }
}
