package io.strata.worker.store;

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
 * <p>Storage-dir failure (after Kafka KIP-112): an I/O error in a dir marks it bad; its blocks are
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
  private final long maxDirCapacity;
  /** Committed blocks → the dir holding them. */
  private final Map<Long, StorageDir> index = new HashMap<>();
  /** Blocks being written; a null value reserves the id while a writer sets up or a removal runs. */
  private final Map<Long, Temp> writing = new HashMap<>();
  private final Set<Long> pinned = new HashSet<>();
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
        StorageDir dir = new StorageDir(t, spec.alias(), d, ds.path(), ds.quota());
        dirs.add(dir);
        allDirs.add(dir);
        try {
          Map<Long, Long> found = dir.open();
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
    volatile long lastAppendMs;
    volatile boolean closed;

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
      reserve(dir, n, blockId);
      try {
        while (data.hasRemaining()) {
          channel.write(data);
        }
      } catch (ClosedChannelException e) {
        // Aborted under us (the reaper, or the dir failed), or this thread was interrupted: the channel
        // is gone but the dir is fine, so this is no reason to fail it.
        release(dir, n);
        throw new InternalException("Writing block " + blockId + " stopped: its temp block was aborted (idle "
            + "past strata.worker.temp.block.timeout, or its dir failed) or the writer was interrupted (" + e + ")", e);
      } catch (IOException e) {
        release(dir, n);
        dirFailed(dir, e);
        throw new InternalException("Writing block " + blockId + " failed: storage dir " + dir.root
            + " failed (" + e + ")", e);
      }
      synchronized (TieredBlockStore.this) {
        if (closed) {
          // Aborted while the bytes went out: abort released only the length it saw, so give back ours.
          release(dir, n);
          throw new InternalException("Temp block " + blockId + " was aborted while being written");
        }
        length += n; // under the monitor, so abort releases either all of this append or none of it
      }
      lastAppendMs = clock.millis();
    }
  }

  @Override
  public TempBlock createTemp(long blockId, long maxLength) throws StrataException {
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
    try {
      for (int attempt = 0; attempt <= allDirs.size(); attempt++) {
        StorageDir dir = chooseDirForWrite(maxLength);
        Path path;
        synchronized (this) {
          path = dir.tmpDir.resolve(blockId + "-" + (tmpSeq++));
        }
        FileChannel ch;
        try {
          ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        } catch (IOException e) {
          dirFailed(dir, e);
          continue;
        }
        Temp t = new Temp(blockId, maxLength, dir, path, ch);
        synchronized (this) {
          writing.put(blockId, t);
        }
        return t;
      }
      throw new ResourceExhaustedException("No storage dir could take block " + blockId);
    } catch (StrataException | RuntimeException e) {
      synchronized (this) {
        writing.remove(blockId);
      }
      throw e;
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

  private void reserve(StorageDir dir, long n, long blockId) throws StrataException {
    synchronized (this) {
      if (dir.isGood() && dir.capacity - dir.used >= n) {
        dir.used += n;
        return;
      }
    }
    freeSpace(dir, n);
    synchronized (this) {
      if (!dir.isGood()) {
        throw new InternalException("Storage dir " + dir.root + " failed while block " + blockId + " was written");
      }
      if (dir.capacity - dir.used >= n) {
        dir.used += n;
        return;
      }
      throw new ResourceExhaustedException("Tier " + dir.tierAlias + " dir " + dir.root + " is full: "
          + dir.used + " of " + dir.capacity + " bytes used and nothing more can be evicted; block " + blockId
          + " needs " + n + " more");
    }
  }

  private synchronized void release(StorageDir dir, long n) {
    if (dir.isGood()) { // a bad dir's accounting was reset when it failed
      dir.used -= n;
    }
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
    try {
      t.channel.close();
      Files.move(t.path, t.dir.blockPath(t.blockId), StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      synchronized (this) {
        writing.remove(t.blockId);
        t.dir.used -= t.length;
      }
      dirFailed(t.dir, e);
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
    }
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
        t.dir.used -= t.length;
      }
    }
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
      dirFailed(dir, e);
      throw new NotFoundException("Block " + blockId + " was lost: its storage dir " + dir.root + " failed", e);
    }
    annotator.onAccess(blockId);
    readsByTier.incrementAndGet(dir.tierOrdinal);
    BlockMeta meta = new BlockMeta(blockId, length, dir.tierAlias);
    Path file = dir.blockPath(blockId);
    return new ReadHandle() {
      private boolean closed;

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
      removeWhenUnlocked.remove(blockId);
    }
    annotator.onRemove(blockId);
    try {
      Files.deleteIfExists(dir.blockPath(blockId));
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
   * next tier down (or deleting them from the last tier). Returns whether the room is there.
   */
  boolean freeSpace(StorageDir dir, long bytes) {
    List<Long> order;
    synchronized (this) {
      if (!dir.isGood()) {
        return false;
      }
      if (dir.capacity - dir.used >= bytes) {
        return true;
      }
      List<Long> candidates = new ArrayList<>(dir.blocks.keySet());
      candidates.removeAll(pinned);
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
        if (dir.tierOrdinal + 1 >= tiers.size() || !moveLocked(id, dir, dir.tierOrdinal + 1)) {
          deleteBlock(id, dir);
        }
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
    try {
      Files.copy(from.blockPath(blockId), tmp);
      Files.move(tmp, to.blockPath(blockId), StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      release(to, length);
      try {
        Files.deleteIfExists(tmp);
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
    try {
      Files.deleteIfExists(from.blockPath(blockId));
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

  /** Marks a dir bad after an I/O error: its blocks are lost, nothing new goes there. */
  void dirFailed(StorageDir dir, Exception cause) {
    List<Long> lost;
    List<Temp> doomed = new ArrayList<>();
    boolean allBad;
    synchronized (this) {
      if (!dir.isGood()) {
        return;
      }
      dir.markBad();
      lost = new ArrayList<>(dir.blocks.keySet());
      for (long id : lost) {
        index.remove(id);
        pinned.remove(id);
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
