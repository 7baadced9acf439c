package io.strata.worker.store;

import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.InternalException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.exception.StrataException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's tiered block store: ordered tiers (MEM &gt; SSD &gt; HDD, 1 to 3), each of one or more
 * {@link StorageDir}s with a quota. New blocks go to the highest tier with room (the {@link Allocator}
 * picks the dir); when a dir must make room, its coldest blocks (by the {@link BlockAnnotator}) move
 * to the next tier down, and out of the last tier. Blocks that are read-locked or pinned are never
 * evicted or moved. {@link TierManager} runs the background work: the space reserver (watermarks),
 * tier alignment, dir health checks and abandoned temp blocks.
 *
 * <p>No eviction of data that exists nowhere else: every committed block, and every block found at start,
 * is <em>protected</em> until {@link #markEvictable} says its file is persisted (the master says so in
 * heartbeats; a block cached from the under file system is marked by its loader). A protected block may
 * move between tiers but never leaves the last one by eviction or the reserver; only a removal (its file
 * deleted or freed) deletes it. A writer that needs a whole block reserved ({@link #createReserved}) waits,
 * bounded, for room: removals, returned reservations and blocks becoming evictable wake it
 * ({@link SpaceSignal}).
 *
 * <p>Durability: commits and moves into a tier with {@link TierSpec#fsync()} fsync the file before it
 * gets its committed name and the dir after ({@link Durability}), so a restart finds only whole blocks.
 *
 * <p>Storage-dir failure (after Kafka KIP-112): an I/O error that a {@link DirProbe} confirms (or a dir
 * whose layout is gone) marks it bad; transient errors (descriptors, space, interrupts) fail only the
 * call. A bad dir's blocks are
 * reported lost ({@link StoreEvents#dirFailed}), nothing new goes there, every other dir keeps
 * serving; when no good dir is left, {@link StoreEvents#allDirsFailed} is raised. A dir that cannot be
 * opened at start is left out the same way.
 *
 * <p>Thread-safe. Locking: the store's monitor guards the index, the dirs' accounting and the temp and
 * pin sets, and is never held during file I/O or while waiting for a block lock. Block locks come from
 * {@link BlockLockManager}; movers only ever try-lock, so eviction cannot deadlock with readers.
 */
public final class TieredBlockStore implements BlockStore {
  private static final Logger LOG = LoggerFactory.getLogger(TieredBlockStore.class);

  private final List<List<StorageDir>> tiers = new ArrayList<>();
  private final List<StorageDir> allDirs = new ArrayList<>();
  final Allocator allocator;
  final BlockAnnotator annotator;
  final BlockLockManager locks = new BlockLockManager();
  final StoreEvents events;
  final Clock clock;
  private final Durability durability;
  private final long maxDirCapacity;
  /** Committed blocks → the dir holding them. */
  private final Map<Long, StorageDir> index = new HashMap<>();
  /** Blocks being written; a null value reserves the id while a writer sets up or a removal runs. */
  private final Map<Long, Temp> writing = new HashMap<>();
  private final Set<Long> pinned = new HashSet<>();
  /**
   * Committed blocks whose file is persisted, so eviction may drop them out of the last tier; always a
   * subset of {@link #index}'s keys. Every other committed block is protected.
   */
  private final Set<Long> evictable = new HashSet<>();
  /** Wakes writers waiting for room; its monitor is a leaf (nothing else is locked under it). */
  private final SpaceSignal space = new SpaceSignal();
  /**
   * Committed blocks whose removal waits for the lock holders to leave; always a subset of {@link #index}'s
   * keys (a block leaving the index leaves this set), so a stale entry never outlives its block and
   * refuses reads of a later block with the same id.
   */
  private final Set<Long> removeWhenUnlocked = new HashSet<>();
  private long tmpSeq;
  private boolean allFailedRaised;
  /** Reads opened per tier ordinal: the cache hit ratio per tier. */
  private final java.util.concurrent.atomic.AtomicLongArray readsByTier = new java.util.concurrent.atomic.AtomicLongArray(3);

  public TieredBlockStore(List<TierSpec> specs, Allocator allocator, BlockAnnotator annotator, StoreEvents events,
      Clock clock) {
    this(specs, allocator, annotator, events, clock, Durability.FSYNC);
  }

  /** A store whose fsyncs go through {@code durability} (tests count them). */
  public TieredBlockStore(List<TierSpec> specs, Allocator allocator, BlockAnnotator annotator, StoreEvents events,
      Clock clock, Durability durability) {
    this.durability = durability;
    if (specs.isEmpty() || specs.size() > 3) {
      throw new IllegalArgumentException("A worker has 1 to 3 tiers, not " + specs.size());
    }
    this.allocator = allocator;
    this.annotator = annotator;
    this.events = events;
    this.clock = clock;
    long max = 0;
    for (int t = 0; t < specs.size(); t++) {
      TierSpec spec = specs.get(t);
      List<StorageDir> dirs = new ArrayList<>();
      for (int d = 0; d < spec.dirs().size(); d++) {
        TierSpec.Dir ds = spec.dirs().get(d);
        StorageDir dir = new StorageDir(t, spec.alias(), d, ds.path(), ds.quota(), spec.fsync());
        dirs.add(dir);
        allDirs.add(dir);
        try {
          Map<Long, Long> found = dir.open(durability);
          for (Map.Entry<Long, Long> e : found.entrySet()) {
            if (index.containsKey(e.getKey())) {
              LOG.warn("Block {} is in both {} and {}; keeping the first", e.getKey(), index.get(e.getKey()), dir);
              continue;
            }
            index.put(e.getKey(), dir);
            dir.blocks.put(e.getKey(), e.getValue());
            dir.used += e.getValue();
            annotator.onAccess(e.getKey());
          }
          max = Math.max(max, ds.quota());
          LOG.info("Storage dir {} (tier {}): {} blocks, {} of {} bytes used", ds.path(), spec.alias(),
              found.size(), dir.used, ds.quota());
        } catch (IOException | RuntimeException e) {
          dir.markBad();
          LOG.error("Storage dir {} (tier {}) cannot be used and is left out: {}", ds.path(), spec.alias(),
              e.toString());
        }
      }
      tiers.add(List.copyOf(dirs));
    }
    this.maxDirCapacity = max;
    if (allDirs.stream().noneMatch(StorageDir::isGood)) {
      throw new IllegalStateException("No storage dir can be used: " + allDirs);
    }
  }

  int tierCount() {
    return tiers.size();
  }

  List<StorageDir> tier(int ordinal) {
    return tiers.get(ordinal);
  }

  List<StorageDir> dirs() {
    return allDirs;
  }

  // ---------------------------------------------------------------- writes

  /** A temp block in one dir. Appends come from one writer thread; abort may come from the reaper. */
  final class Temp implements TempBlock {
    final long blockId;
    final long maxLength;
    final StorageDir dir;
    final Path path;
    final FileChannel channel;
    volatile long length;
    /** Bytes this temp block holds in its dir's {@code used}: at least {@link #length}. Store monitor. */
    long reserved;
    /** Reserved whole by {@link #createReserved} and not yet taken by its writer. Store monitor. */
    boolean awaitingWriter;
    volatile long lastAppendMs;
    volatile boolean closed;
    /** The checksums of what was appended; the writer thread only. */
    final ChunkChecksums.Builder crcs = new ChunkChecksums.Builder();

    Temp(long blockId, long maxLength, StorageDir dir, Path path, FileChannel channel) {
      this.blockId = blockId;
      this.maxLength = maxLength;
      this.dir = dir;
      this.path = path;
      this.channel = channel;
      this.lastAppendMs = clock.millis();
    }

    @Override
    public long blockId() {
      return blockId;
    }

    @Override
    public long length() {
      return length;
    }

    @Override
    public ChunkChecksums.Builder checksums() {
      return crcs;
    }

    @Override
    public void append(ByteBuffer data) throws IOException {
      int n = data.remaining();
      if (closed) {
        throw new InternalException("Temp block " + blockId + " was aborted (its dir failed, or it was idle "
            + "past strata.worker.temp.block.timeout)");
      }
      if (length + n > maxLength) {
        throw new InvalidArgumentException("Block " + blockId + " would grow to " + (length + n)
            + " bytes, past its declared maximum of " + maxLength);
      }
      long need;
      synchronized (TieredBlockStore.this) {
        need = Math.max(0, length + n - reserved);
      }
      if (need > 0) {
        reserve(this, need); // a block reserved whole never needs more
      }
      crcs.update(data.duplicate());
      try {
        while (data.hasRemaining()) {
          channel.write(data);
        }
      } catch (ClosedChannelException e) {
        // Aborted under us (the reaper, or the dir failed), or this thread was interrupted: the channel
        // is gone but the dir is fine, so this is no reason to fail it.
        unreserve(this, need);
        throw new InternalException("Writing block " + blockId + " stopped: its temp block was aborted (idle "
            + "past strata.worker.temp.block.timeout, or its dir failed) or the writer was interrupted (" + e + ")", e);
      } catch (IOException e) {
        unreserve(this, need);
        if (!dirFailed(dir, e)) {
          throw DirProbe.transientError("Writing block " + blockId, dir, e);
        }
        throw new InternalException("Writing block " + blockId + " failed: storage dir " + dir.root
            + " failed (" + e + ")", e);
      }
      synchronized (TieredBlockStore.this) {
        if (closed) {
          // Aborted while the bytes went out: abort released the whole reservation, this append's too.
          throw new InternalException("Temp block " + blockId + " was aborted while being written");
        }
        length += n;
      }
      lastAppendMs = clock.millis();
    }
  }

  @Override
  public TempBlock createTemp(long blockId, long maxLength) throws StrataException {
    claimId(blockId, maxLength);
    try {
      for (int attempt = 0; attempt <= allDirs.size(); attempt++) {
        StorageDir dir = chooseDirForWrite(maxLength);
        Temp t = openTemp(blockId, maxLength, dir, 0);
        if (t != null) {
          return t;
        }
      }
      throw new ResourceExhaustedException("No storage dir could take block " + blockId);
    } catch (StrataException | RuntimeException e) {
      synchronized (this) {
        writing.remove(blockId);
      }
      throw e;
    }
  }

  /**
   * Starts a temp block with its whole {@code maxLength} reserved, so its appends never run out of room;
   * when no dir has room (even by evicting what may be evicted), waits up to {@code waitMs} for room to
   * appear (a removal, a returned reservation, a block whose file got persisted). The caller holds no
   * reservation while it waits, and nothing is locked. The writer takes the block with {@link #reserved}.
   * Fails with RESOURCE_EXHAUSTED naming what holds the space when the wait ends without room.
   */
  @Override
  public TempBlock createReserved(long blockId, long maxLength, long waitMs) throws StrataException {
    claimId(blockId, maxLength);
    long deadline = io.strata.common.time.Deadlines.nanoDeadline(System.nanoTime(),
        java.time.Duration.ofMillis(Math.max(0, waitMs)));
    boolean waiting = false;
    try {
      while (true) {
        long seen = space.generation();
        StorageDir dir = reserveWhole(maxLength);
        if (dir != null) {
          Temp t = openTemp(blockId, maxLength, dir, maxLength);
          if (t != null) {
            return t;
          }
          continue; // that dir failed: try the others
        }
        if (!waiting) {
          waiting = true;
          space.awaiting(maxLength);
        }
        if (!space.await(seen, deadline)) {
          String why;
          synchronized (this) {
            StorageDir top = (StorageDir) allocator.allocate(eligible(tiers.get(tiers.size() - 1), 0), 0);
            why = top == null ? "no good storage dir is left" : fullMessage(top, blockId, maxLength);
          }
          throw new ResourceExhaustedException("No room for block " + blockId + " (" + maxLength + " bytes) after "
              + "waiting " + waitMs + " ms (strata.worker.write.space.wait.timeout): " + why);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      synchronized (this) {
        writing.remove(blockId);
      }
      throw new io.strata.common.exception.UnavailableException("Interrupted while waiting for room for block "
          + blockId, e);
    } catch (StrataException | RuntimeException e) {
      synchronized (this) {
        writing.remove(blockId);
      }
      throw e;
    } finally {
      if (waiting) {
        space.awaiting(-maxLength);
      }
    }
  }

  /** The temp block {@link #createReserved} made for {@code blockId}, handed to its writer once. */
  @Override
  public TempBlock reserved(long blockId) throws StrataException {
    synchronized (this) {
      Temp t = writing.get(blockId);
      if (t == null || !t.awaitingWriter || t.closed) {
        throw new NotFoundException("Block " + blockId + " has no reservation on this worker (never made, already "
            + "used, or dropped after strata.worker.temp.block.timeout without data)");
      }
      t.awaitingWriter = false;
      t.lastAppendMs = clock.millis();
      return t;
    }
  }

  /**
   * A dir with {@code bytes} free, reserved for the caller (its {@code used} already counts them), evicting
   * what may be evicted to make room; null when no dir can make room now.
   */
  private StorageDir reserveWhole(long bytes) {
    for (int ordinal = 0; ordinal < tiers.size(); ordinal++) {
      StorageDir d = reserveIn(ordinal, bytes);
      if (d != null) {
        return d;
      }
    }
    return null;
  }

  /**
   * Opens a temp file in {@code dir} holding {@code reserved} bytes of its space; null when the dir failed.
   * A transient error (descriptors, space, an interrupt) fails the call and leaves the dir in service.
   */
  private Temp openTemp(long blockId, long maxLength, StorageDir dir, long reserved) throws StrataException {
    Path path;
    synchronized (this) {
      path = dir.tmpDir.resolve(blockId + "-" + (tmpSeq++));
    }
    FileChannel ch;
    try {
      ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    } catch (IOException e) {
      if (reserved > 0) {
        release(dir, reserved);
      }
      if (!dirFailed(dir, e)) {
        throw DirProbe.transientError("Creating block " + blockId, dir, e);
      }
      return null;
    }
    Temp t = new Temp(blockId, maxLength, dir, path, ch);
    synchronized (this) {
      t.reserved = reserved;
      t.awaitingWriter = reserved > 0;
      writing.put(blockId, t);
    }
    return t;
  }

  /** Checks a new block's id and length and claims the id for the caller (a null entry in {@link #writing}). */
  private void claimId(long blockId, long maxLength) throws StrataException {
    if (blockId < 0) {
      throw new InvalidArgumentException("Block id " + blockId + " is negative");
    }
    if (maxLength <= 0) {
      throw new InvalidArgumentException("Block " + blockId + ": maximum length " + maxLength + " must be positive");
    }
    if (maxLength > maxDirCapacity) {
      throw new InvalidArgumentException("Block " + blockId + ": maximum length " + maxLength
          + " is larger than this worker's largest storage dir capacity of " + maxDirCapacity + " bytes");
    }
    synchronized (this) {
      if (index.containsKey(blockId)) {
        throw new AlreadyExistsException("Block " + blockId + " is already committed on this worker");
      }
      if (writing.containsKey(blockId)) {
        throw new AlreadyExistsException("Block " + blockId + " is being written (or removed) by another caller");
      }
      writing.put(blockId, null);
    }
  }

  /** The highest tier's dir with room for {@code bytes}, making room by eviction when none has it. */
  private StorageDir chooseDirForWrite(long bytes) throws StrataException {
    synchronized (this) {
      for (List<StorageDir> tier : tiers) {
        DirView d = allocator.allocate(tier, bytes);
        if (d != null) {
          return (StorageDir) d;
        }
      }
    }
    for (List<StorageDir> tier : tiers) {
      StorageDir d;
      synchronized (this) {
        d = (StorageDir) allocator.allocate(eligible(tier, bytes), 0);
      }
      if (d != null && freeSpace(d, bytes)) {
        return d;
      }
    }
    // No dir can make room for a whole block now (pinned or locked blocks): start in the top tier's best
    // dir anyway; space is reserved as data arrives, and an append that finds no room fails then.
    for (List<StorageDir> tier : tiers) {
      synchronized (this) {
        StorageDir d = (StorageDir) allocator.allocate(eligible(tier, 0), 0);
        if (d != null) {
          return d;
        }
      }
    }
    throw new ResourceExhaustedException("No good storage dir is left for " + bytes + " bytes: " + dirReports());
  }

  private List<StorageDir> eligible(List<StorageDir> tier, long bytes) {
    List<StorageDir> out = new ArrayList<>();
    for (StorageDir d : tier) {
      if (d.isGood() && d.capacity >= bytes) {
        out.add(d);
      }
    }
    return out;
  }

  /** Adds {@code n} bytes to a temp block's reservation in its dir, evicting there if needed; at once. */
  private void reserve(Temp t, long n) throws StrataException {
    StorageDir dir = t.dir;
    // Concurrent evictors skip each other's locked victims and may take the room one of them made, so a
    // pass that finds nothing is retried (bounded) with a fresh view before the write is refused.
    for (int attempt = 0; attempt < 4; attempt++) {
      synchronized (this) {
        if (t.closed) {
          throw new InternalException("Temp block " + t.blockId + " was aborted while being written");
        }
        if (!dir.isGood()) {
          throw new InternalException("Storage dir " + dir.root + " failed while block " + t.blockId
              + " was written");
        }
        if (dir.capacity - dir.used >= n) {
          dir.used += n;
          t.reserved += n;
          return;
        }
        if (attempt == 3) {
          throw new ResourceExhaustedException(fullMessage(dir, t.blockId, n));
        }
      }
      freeSpace(dir, n);
    }
  }

  /** Gives back {@code n} bytes of a live temp block's reservation (an abort gives back all of it). */
  private void unreserve(Temp t, long n) {
    synchronized (this) {
      if (n <= 0 || t.closed) {
        return;
      }
      t.reserved -= n;
      if (t.dir.isGood()) {
        t.dir.used -= n;
      }
    }
    space.changed();
  }

  /**
   * Why a dir cannot take {@code n} more bytes: the tier, the dir and what holds its space (blocks of files
   * not yet persisted, which are never evicted from the last tier; pinned blocks; blocks being read; bytes
   * reserved by blocks being written). Caller holds the monitor.
   */
  private String fullMessage(StorageDir dir, long blockId, long n) {
    long unpersisted = 0;
    long pinnedBytes = 0;
    long readBytes = 0;
    long committed = 0;
    boolean last = dir.tierOrdinal + 1 >= tiers.size();
    for (Map.Entry<Long, Long> e : dir.blocks.entrySet()) {
      committed += e.getValue();
      if (pinned.contains(e.getKey())) {
        pinnedBytes += e.getValue();
      } else if (!evictable.contains(e.getKey())) {
        unpersisted += e.getValue();
      } else if (locks.isReadLocked(e.getKey())) {
        readBytes += e.getValue();
      }
    }
    return "Tier " + dir.tierAlias + " (storage dir " + dir.root + ") is full: " + dir.used + " of "
        + dir.capacity + " bytes used, held by " + unpersisted + " bytes of blocks of files not yet persisted"
        + (last ? " (never evicted from the last tier)" : "") + ", " + pinnedBytes + " bytes of pinned blocks, "
        + readBytes + " bytes of blocks being read, " + (dir.used - committed)
        + " bytes reserved by blocks being written; block " + blockId + " needs " + n + " more bytes";
  }

  private void release(StorageDir dir, long n) {
    synchronized (this) {
      if (dir.isGood()) { // a bad dir's accounting was reset when it failed
        dir.used -= n;
      }
    }
    space.changed();
  }

  @Override
  public BlockMeta commit(TempBlock temp) throws IOException {
    Temp t = (Temp) temp;
    synchronized (this) {
      if (t.closed) {
        throw new IllegalStateException("Temp block " + t.blockId + " is already committed or aborted (its dir "
            + "failed, or it was idle past strata.worker.temp.block.timeout)");
      }
      t.closed = true;
    }
    Path tmpSidecar = ChecksumSidecar.of(t.path);
    try {
      // Durable before it has a committed name, and the name durable before the master hears of it: a
      // crash leaves either no block or a whole one. The sidecar gets its name first, so a block file
      // never lacks one.
      try (FileChannel ch = t.channel) {
        if (t.dir.fsync) {
          durability.syncFile(ch);
        }
      }
      ChecksumSidecar.write(tmpSidecar, t.length, t.crcs.finish(), t.dir.fsync ? durability : null);
      Files.move(tmpSidecar, t.dir.sidecarPath(t.blockId), StandardCopyOption.ATOMIC_MOVE);
      Files.move(t.path, t.dir.blockPath(t.blockId), StandardCopyOption.ATOMIC_MOVE);
      if (t.dir.fsync) {
        durability.syncDir(t.dir.blocksDir);
      }
    } catch (IOException e) {
      synchronized (this) {
        writing.remove(t.blockId);
        t.dir.used -= t.reserved;
      }
      space.changed();
      try {
        Files.deleteIfExists(t.path);
        Files.deleteIfExists(tmpSidecar);
        Files.deleteIfExists(t.dir.blockPath(t.blockId));
        Files.deleteIfExists(t.dir.sidecarPath(t.blockId));
      } catch (IOException ignored) {
        // the dir is failing or the probe below will keep it; tmp/ is emptied at start either way
      }
      if (!dirFailed(t.dir, e)) {
        throw DirProbe.transientError("Committing block " + t.blockId, t.dir, e);
      }
      throw new InternalException("Committing block " + t.blockId + " failed: storage dir " + t.dir.root
          + " failed (" + e + ")", e);
    }
    synchronized (this) {
      writing.remove(t.blockId);
      if (!t.dir.isGood()) {
        throw new InternalException("Storage dir " + t.dir.root + " failed while block " + t.blockId
            + " was committed");
      }
      index.put(t.blockId, t.dir);
      t.dir.blocks.put(t.blockId, t.length);
      t.dir.used -= t.reserved - t.length; // the unused part of a whole-block reservation goes back
      evictable.remove(t.blockId); // a new copy is protected until the master says its file is persisted
    }
    space.changed();
    annotator.onAccess(t.blockId);
    return new BlockMeta(t.blockId, t.length, t.dir.tierAlias);
  }

  @Override
  public void abort(TempBlock temp) {
    Temp t = (Temp) temp;
    synchronized (this) {
      if (t.closed) {
        return;
      }
      t.closed = true;
      writing.remove(t.blockId);
      if (t.dir.isGood()) {
        t.dir.used -= t.reserved;
      }
    }
    space.changed();
    try {
      t.channel.close();
      Files.deleteIfExists(t.path);
    } catch (IOException e) {
      LOG.warn("Cannot remove temp block {}: {}", t.path, e.toString());
    }
  }

  /** Aborts the blocks being written of these files (the master recovered them: their writers lost their leases). */
  @Override
  public void abortWritesOf(java.util.Collection<Long> fileIds) {
    java.util.Set<Long> files = new java.util.HashSet<>(fileIds);
    List<Temp> doomed = new ArrayList<>();
    synchronized (this) {
      for (Temp t : writing.values()) {
        if (t != null && !t.closed && files.contains(io.strata.common.id.BlockId.fileId(t.blockId))) {
          doomed.add(t);
        }
      }
    }
    for (Temp t : doomed) {
      LOG.info("Temp block {}: the master recovered its file (the writer lost its lease); removing it", t.blockId);
      abort(t);
    }
  }

  /** Temp blocks idle for longer than {@code idleMs}: their writers died without closing. */
  synchronized List<Temp> idleTemps(long idleMs) {
    long now = clock.millis();
    List<Temp> out = new ArrayList<>();
    for (Temp t : writing.values()) {
      if (t != null && !t.closed && now - t.lastAppendMs > idleMs) {
        out.add(t);
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- reads

  @Override
  public synchronized BlockMeta get(long blockId) throws StrataException {
    StorageDir dir = index.get(blockId);
    if (dir == null) {
      throw new NotFoundException("Block " + blockId + " does not exist on this worker");
    }
    return new BlockMeta(blockId, dir.blocks.get(blockId), dir.tierAlias);
  }

  @Override
  public ReadHandle openForRead(long blockId, boolean promote) throws IOException {
    get(blockId);
    if (promote) {
      moveUp(blockId, 0);
    }
    BlockLock lock = locks.readLock(blockId);
    StorageDir dir;
    long length = 0;
    synchronized (this) {
      dir = index.get(blockId);
      if (dir != null && removeWhenUnlocked.contains(blockId)) {
        dir = null;
      }
      if (dir != null) {
        length = dir.blocks.get(blockId);
      }
    }
    if (dir == null) {
      lock.close();
      // The last reader may have left while this one held the lock, so this one finishes the removal.
      finishDeferredRemoval(blockId);
      throw new NotFoundException("Block " + blockId + " does not exist on this worker");
    }
    FileChannel ch;
    try {
      ch = FileChannel.open(dir.blockPath(blockId), StandardOpenOption.READ);
    } catch (IOException e) {
      lock.close();
      // Under the read lock nothing moves or deletes the file: its absence means the dir failed.
      if (!dirFailed(dir, e)) {
        finishDeferredRemoval(blockId);
        throw DirProbe.transientError("Opening block " + blockId, dir, e);
      }
      throw new NotFoundException("Block " + blockId + " was lost: its storage dir " + dir.root + " failed", e);
    }
    annotator.onAccess(blockId);
    readsByTier.incrementAndGet(dir.tierOrdinal);
    BlockMeta meta = new BlockMeta(blockId, length, dir.tierAlias);
    Path file = dir.blockPath(blockId);
    Path sidecar = dir.sidecarPath(blockId);
    long blockLength = length;
    return new ReadHandle() {
      private boolean closed;

      @Override
      public int[] checksums() throws IOException {
        try {
          return ChecksumSidecar.read(sidecar, blockLength);
        } catch (IOException e) {
          throw new io.strata.common.exception.CorruptBlockException(blockId, "", 0,
              "its checksums cannot be read (" + e + ")");
        }
      }

      @Override
      public BlockMeta meta() {
        return meta;
      }

      @Override
      public FileChannel channel() {
        return ch;
      }

      @Override
      public Path path() {
        return file;
      }

      @Override
      public synchronized void close() {
        if (closed) {
          return;
        }
        closed = true;
        try {
          ch.close();
        } catch (IOException ignored) {
          // read-only channel
        }
        lock.close();
        finishDeferredRemoval(blockId);
      }
    };
  }

  // ---------------------------------------------------------------- removal, pins

  @Override
  public boolean remove(long blockId) throws IOException {
    synchronized (this) {
      if (!index.containsKey(blockId)) {
        return false;
      }
    }
    Optional<BlockLock> lock = locks.tryWriteLock(blockId);
    if (lock.isEmpty()) {
      // Readers (or a mover) hold it: no new reader is admitted, and the last one out removes it.
      synchronized (this) {
        if (!index.containsKey(blockId)) {
          return false; // it left meanwhile (evicted, or another removal): nothing to defer
        }
        removeWhenUnlocked.add(blockId);
      }
      finishDeferredRemoval(blockId);
      return true;
    }
    try (BlockLock l = lock.get()) {
      return deleteBlock(blockId, null);
    }
  }

  private void finishDeferredRemoval(long blockId) {
    synchronized (this) {
      if (!removeWhenUnlocked.contains(blockId)) {
        return;
      }
    }
    Optional<BlockLock> lock = locks.tryWriteLock(blockId);
    if (lock.isPresent()) {
      try (BlockLock l = lock.get()) {
        synchronized (this) {
          removeWhenUnlocked.remove(blockId);
        }
        deleteBlock(blockId, null);
      }
    }
  }

  /** Deletes a block the caller holds the write lock of; {@code expected} null means wherever it is. */
  boolean deleteBlock(long blockId, StorageDir expected) {
    StorageDir dir;
    synchronized (this) {
      dir = index.get(blockId);
      if (dir == null || (expected != null && dir != expected)) {
        return false;
      }
      index.remove(blockId);
      Long len = dir.blocks.remove(blockId);
      dir.used -= len == null ? 0 : len;
      pinned.remove(blockId);
      evictable.remove(blockId);
      removeWhenUnlocked.remove(blockId);
    }
    space.changed();
    annotator.onRemove(blockId);
    try {
      Files.deleteIfExists(dir.blockPath(blockId));
      Files.deleteIfExists(dir.sidecarPath(blockId));
    } catch (IOException e) {
      dirFailed(dir, e);
    }
    events.blockRemoved(blockId);
    return true;
  }

  @Override
  public synchronized void pin(long blockId) {
    pinned.add(blockId);
  }

  @Override
  public synchronized void unpin(long blockId) {
    pinned.remove(blockId);
  }

  synchronized boolean isPinned(long blockId) {
    return pinned.contains(blockId);
  }

  /** The blocks' files are persisted: eviction may drop them out of the last tier. Unknown ids are ignored. */
  @Override
  public void markEvictable(java.util.Collection<Long> blockIds) {
    synchronized (this) {
      for (long id : blockIds) {
        if (index.containsKey(id)) {
          evictable.add(id);
        }
      }
    }
    space.changed();
  }

  /** Whether eviction may drop the block out of the last tier (tests and reports). */
  synchronized boolean isEvictable(long blockId) {
    return evictable.contains(blockId);
  }

  /** Bytes writers are waiting for ({@link #createReserved}); the master persists their files' neighbours first. */
  @Override
  public long awaitedBytes() {
    return space.awaited();
  }

  // ---------------------------------------------------------------- moves and eviction

  /**
   * The write lock a mover (eviction, promotion, alignment) takes on a block, if free now. Releasing it
   * finishes a removal that was asked for meanwhile: the mover is the last one out, like a reader.
   */
  Optional<BlockLock> tryLockForMove(long blockId) {
    return locks.tryWriteLock(blockId).map(inner -> new BlockLock() {
      @Override
      public long blockId() {
        return blockId;
      }

      @Override
      public void close() {
        inner.close();
        finishDeferredRemoval(blockId);
      }
    });
  }

  /**
   * Makes {@code bytes} available in {@code dir} by moving its coldest unlocked, unpinned blocks to the
   * next tier down, or deleting them when they cannot move (the last tier, or no room below) and are
   * evictable: a protected block (its file not persisted) is never deleted. Returns whether the room is there.
   */
  boolean freeSpace(StorageDir dir, long bytes) {
    List<Long> order;
    boolean last = dir.tierOrdinal + 1 >= tiers.size();
    synchronized (this) {
      if (!dir.isGood()) {
        return false;
      }
      if (dir.capacity - dir.used >= bytes) {
        return true;
      }
      List<Long> candidates = new ArrayList<>(dir.blocks.keySet());
      candidates.removeAll(pinned);
      if (last) {
        candidates.retainAll(evictable);
      }
      order = annotator.coldestFirst(candidates);
    }
    for (long id : order) {
      synchronized (this) {
        if (dir.capacity - dir.used >= bytes) {
          return true;
        }
      }
      Optional<BlockLock> lock = tryLockForMove(id);
      if (lock.isEmpty()) {
        continue;
      }
      try (BlockLock l = lock.get()) {
        synchronized (this) {
          if (index.get(id) != dir || pinned.contains(id)) {
            continue;
          }
        }
        if (!last && moveLocked(id, dir, dir.tierOrdinal + 1)) {
          continue;
        }
        synchronized (this) {
          if (!evictable.contains(id)) {
            continue; // protected: it stays where it is
          }
        }
        deleteBlock(id, dir);
      }
    }
    synchronized (this) {
      return dir.capacity - dir.used >= bytes;
    }
  }

  /** Moves a block to tier {@code target} if it is below it and its lock is free; returns whether it moved. */
  boolean moveUp(long blockId, int target) {
    Optional<BlockLock> lock = tryLockForMove(blockId);
    if (lock.isEmpty()) {
      return false;
    }
    try (BlockLock l = lock.get()) {
      StorageDir from;
      synchronized (this) {
        from = index.get(blockId);
      }
      if (from == null || from.tierOrdinal <= target) {
        return false;
      }
      return moveLocked(blockId, from, target);
    }
  }

  /** Moves a block the caller holds the write lock of from {@code from} to a dir of tier {@code target}. */
  boolean moveLocked(long blockId, StorageDir from, int target) {
    long length;
    synchronized (this) {
      Long len = from.blocks.get(blockId);
      if (len == null) {
        return false;
      }
      length = len;
    }
    StorageDir to = reserveIn(target, length);
    if (to == null) {
      return false;
    }
    Path tmp;
    synchronized (this) {
      tmp = to.tmpDir.resolve(blockId + "-move-" + (tmpSeq++));
    }
    Path tmpSidecar = ChecksumSidecar.of(tmp);
    try {
      // The sidecar moves first and goes last, so the block file never lacks one.
      Files.copy(from.sidecarPath(blockId), tmpSidecar);
      if (to.fsync) {
        durability.syncFile(tmpSidecar);
      }
      Files.move(tmpSidecar, to.sidecarPath(blockId), StandardCopyOption.ATOMIC_MOVE);
      Files.copy(from.blockPath(blockId), tmp);
      if (to.fsync) {
        durability.syncFile(tmp); // the copy is whole on disk before the source can go
      }
      Files.move(tmp, to.blockPath(blockId), StandardCopyOption.ATOMIC_MOVE);
      if (to.fsync) {
        durability.syncDir(to.blocksDir);
      }
    } catch (IOException e) {
      release(to, length);
      try {
        Files.deleteIfExists(tmp);
        Files.deleteIfExists(tmpSidecar);
        Files.deleteIfExists(to.sidecarPath(blockId));
      } catch (IOException ignored) {
        // the target dir is failing; the health check will tell
      }
      if (!from.looksHealthy()) {
        dirFailed(from, e);
      } else if (!to.looksHealthy()) {
        dirFailed(to, e);
      } else {
        LOG.warn("Moving block {} from {} to {} failed: {}", blockId, from, to, e.toString());
      }
      return false;
    }
    synchronized (this) {
      if (!from.isGood() || index.get(blockId) != from) {
        // The source dir failed during the copy and the block was reported lost: drop the copy too.
        if (to.isGood()) {
          to.used -= length;
        }
        try {
          Files.deleteIfExists(to.blockPath(blockId));
          Files.deleteIfExists(to.sidecarPath(blockId));
        } catch (IOException ignored) {
          // best effort
        }
        return false;
      }
      index.put(blockId, to);
      to.blocks.put(blockId, length);
      from.blocks.remove(blockId);
      from.used -= length;
    }
    space.changed();
    try {
      Files.deleteIfExists(from.blockPath(blockId));
      Files.deleteIfExists(from.sidecarPath(blockId));
    } catch (IOException e) {
      dirFailed(from, e);
    }
    events.blockMoved(blockId, length, to.tierAlias);
    return true;
  }

  /** Reserves {@code bytes} in a dir of tier {@code ordinal}, evicting there if needed; null if impossible. */
  private StorageDir reserveIn(int ordinal, long bytes) {
    List<StorageDir> tier = tiers.get(ordinal);
    for (int attempt = 0; attempt < 2; attempt++) {
      StorageDir d;
      synchronized (this) {
        d = (StorageDir) allocator.allocate(tier, bytes);
        if (d != null) {
          d.used += bytes;
          return d;
        }
        d = (StorageDir) allocator.allocate(eligible(tier, bytes), 0);
      }
      if (d == null || !freeSpace(d, bytes)) {
        return null;
      }
    }
    return null;
  }

  // ---------------------------------------------------------------- failure

  /**
   * Marks a dir bad after an I/O error ({@code cause}; null when the health check found its layout gone)
   * if {@link DirProbe} confirms it: its blocks are lost, nothing new goes there. A transient error (out
   * of descriptors or space, an interrupt) or one a probe finds the dir healthy after leaves it in
   * service. Returns whether the dir is bad now.
   */
  boolean dirFailed(StorageDir dir, Exception cause) {
    if (!dir.isGood()) {
      return true;
    }
    if (!DirProbe.confirmsFailure(dir, cause)) {
      LOG.warn("I/O error in storage dir {} (tier {}), which stays in service (transient, or a probe found it "
          + "healthy): {}", dir.root, dir.tierAlias, cause == null ? "none" : cause.toString());
      return false;
    }
    List<Long> lost;
    List<Temp> doomed = new ArrayList<>();
    boolean allBad;
    synchronized (this) {
      if (!dir.isGood()) {
        return true;
      }
      dir.markBad();
      lost = new ArrayList<>(dir.blocks.keySet());
      for (long id : lost) {
        index.remove(id);
        pinned.remove(id);
        evictable.remove(id);
        removeWhenUnlocked.remove(id);
      }
      dir.lostBlocks = lost.size();
      dir.blocks.clear();
      dir.used = 0;
      // Its writers are done for (their appends and commits fail), and their ids are free at once: the
      // client retries the block, which must find a good dir here rather than "being written" forever.
      for (var it = writing.values().iterator(); it.hasNext(); ) {
        Temp t = it.next();
        if (t != null && t.dir == dir) {
          t.closed = true;
          it.remove();
          doomed.add(t);
        }
      }
      allBad = allDirs.stream().noneMatch(StorageDir::isGood);
      if (allBad && allFailedRaised) {
        allBad = false;
      }
      allFailedRaised |= allBad;
    }
    for (long id : lost) {
      annotator.onRemove(id);
    }
    for (Temp t : doomed) {
      try {
        t.channel.close(); // abort() skips a closed temp, so nothing else would
      } catch (IOException ignored) {
        // the dir is gone already
      }
    }
    LOG.error("Storage dir {} (tier {}) failed and is out of service; {} blocks lost: {}", dir.root, dir.tierAlias,
        lost.size(), cause == null ? "its layout is gone" : cause.toString());
    events.dirFailed(dir.path(), lost);
    if (allBad) {
      LOG.error("Every storage dir has failed: this worker cannot serve");
      events.allDirsFailed();
    }
    return true;
  }

  // ---------------------------------------------------------------- reports

  /** Block reads opened so far, per tier (index = tier ordinal, 0 = top). */
  public long[] readsByTier() {
    long[] out = new long[tiers.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = readsByTier.get(i);
    }
    return out;
  }

  /** The alias of tier {@code ordinal}. */
  public String tierAlias(int ordinal) {
    return tiers.get(ordinal).get(0).tierAlias;
  }

  @Override
  public synchronized List<BlockMeta> committedBlocks() {
    List<BlockMeta> out = new ArrayList<>(index.size());
    for (Map.Entry<Long, StorageDir> e : index.entrySet()) {
      out.add(new BlockMeta(e.getKey(), e.getValue().blocks.get(e.getKey()), e.getValue().tierAlias));
    }
    return out;
  }

  /** The dir holding a block, or null (tests and the tier manager). */
  synchronized StorageDir dirOf(long blockId) {
    return index.get(blockId);
  }

  /** Committed block ids of a dir. */
  synchronized List<Long> blocksIn(StorageDir dir) {
    return new ArrayList<>(dir.blocks.keySet());
  }

  synchronized long lengthOf(long blockId) {
    StorageDir d = index.get(blockId);
    return d == null ? -1 : d.blocks.get(blockId);
  }

  @Override
  public synchronized long capacityBytes() {
    long c = 0;
    for (StorageDir d : allDirs) {
      if (d.isGood()) {
        c += d.capacity;
      }
    }
    return c;
  }

  @Override
  public synchronized long usedBytes() {
    long u = 0;
    for (StorageDir d : allDirs) {
      if (d.isGood()) {
        u += d.used;
      }
    }
    return u;
  }

  @Override
  public synchronized List<DirReport> dirReports() {
    List<DirReport> out = new ArrayList<>(allDirs.size());
    for (StorageDir d : allDirs) {
      out.add(new DirReport(d.tierAlias, d.tierOrdinal, d.path(), d.isGood(), d.capacity, d.isGood() ? d.used : 0,
          d.lostBlocks));
    }
    return out;
  }
}
