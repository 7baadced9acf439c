package io.strata.worker.store;

import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.time.ElapsedClock;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

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
 * <p>This class is the facade its callers use; the work is done by its parts, one job each, in layers
 * (each uses only those listed before it):
 * <ul>
 *   <li>{@link BlockIndex}: the index and space accounting (and the opening of the dirs at start);</li>
 *   <li>{@link DirFailures}: taking a failed dir out of service ({@link #dirFailed});</li>
 *   <li>{@link Removals}: removing blocks, deferred while they are locked ({@link #remove});</li>
 *   <li>{@link Protection}: pins and protection ({@link #pin}, {@link #markEvictable});</li>
 *   <li>{@link StoreReports}: reads per tier, capacity, use, dir reports, why a dir is full;</li>
 *   <li>{@link Mover}: eviction and tier moves ({@link #freeSpace}, {@link #moveUp}, {@link #moveLocked});</li>
 *   <li>{@link WriteSpace}: allocation and write reservations ({@link #createTemp}, {@link #createReserved},
 *       the appends of a {@link Temp});</li>
 *   <li>{@link Commits}: ending temp blocks ({@link #commit}, {@link #abort}, the reaper's
 *       {@link #idleTemps});</li>
 * </ul>
 * and reads ({@link #openForRead}) stay here.
 *
 * <p>Thread-safe. Locking: one monitor, this store's own (every part synchronizes on
 * {@link BlockIndex#lock}, which is this object), guards the index, the dirs' accounting and the temp and
 * pin sets, and is never held during file I/O or while waiting for a block lock. Block locks come from
 * {@link BlockLockManager}; movers only ever try-lock, so eviction cannot deadlock with readers.
 */
public final class TieredBlockStore implements BlockStore {
  final Allocator allocator;
  final BlockAnnotator annotator;
  final BlockLockManager locks = new BlockLockManager();
  final StoreEvents events;
  final Clock clock;
  private final BlockIndex index;
  private final DirFailures failures;
  private final Removals removals;
  private final Protection protection;
  private final StoreReports reports;
  private final Mover mover;
  private final WriteSpace writes;
  private final Commits commits;

  public TieredBlockStore(List<TierSpec> specs, Allocator allocator, BlockAnnotator annotator, StoreEvents events,
      Clock clock) {
    this(specs, allocator, annotator, events, clock, Durability.FSYNC);
  }

  /** A store whose fsyncs go through {@code durability} (tests count them). */
  public TieredBlockStore(List<TierSpec> specs, Allocator allocator, BlockAnnotator annotator, StoreEvents events,
      Clock clock, Durability durability) {
    if (specs.isEmpty() || specs.size() > 3) {
      throw new IllegalArgumentException("A worker has 1 to 3 tiers, not " + specs.size());
    }
    this.allocator = allocator;
    this.annotator = annotator;
    this.events = events;
    this.clock = clock;
    this.index = new BlockIndex(this, specs, annotator, durability);
    this.failures = new DirFailures(index, annotator, events);
    this.removals = new Removals(index, locks, failures, annotator, events, durability);
    this.protection = new Protection(index);
    this.reports = new StoreReports(index, locks);
    this.mover = new Mover(index, locks, allocator, annotator, removals, failures, durability, events);
    // Temp blocks' idle times are stamped (WriteSpace) and compared (Commits.idleTemps) on one clock that a step of
    // the system clock cannot move.
    Clock elapsed = ElapsedClock.of(clock);
    this.writes = new WriteSpace(index, allocator, mover, failures, reports, elapsed);
    this.commits = new Commits(index, failures, annotator, durability, elapsed);
  }

  /** The number of tiers (1 to 3). */
  public int tierCount() {
    return index.tiers.size();
  }

  List<StorageDir> tier(int ordinal) {
    return index.tiers.get(ordinal);
  }

  List<StorageDir> dirs() {
    return index.allDirs;
  }

  // ---------------------------------------------------------------- writes (WriteSpace, Commits)

  @Override
  public TempBlock createTemp(long blockId, long maxLength) throws StrataException {
    return writes.createTemp(blockId, maxLength);
  }

  /**
   * Starts a temp block with its whole {@code maxLength} reserved, waiting up to {@code waitMs} for room
   * ({@link WriteSpace#createReserved}); the writer takes it with {@link #reserved}.
   */
  @Override
  public TempBlock createReserved(long blockId, long maxLength, long waitMs) throws StrataException {
    return writes.createReserved(blockId, maxLength, waitMs);
  }

  /** The temp block {@link #createReserved} made for {@code blockId}, handed to its writer once. */
  @Override
  public TempBlock reserved(long blockId) throws StrataException {
    return writes.reserved(blockId);
  }

  @Override
  public BlockMeta commit(TempBlock temp) throws IOException {
    return commits.commit(temp);
  }

  /**
   * At most {@code max} blocks written at once (streamed, short-circuit, reserved and not yet written, shuffle
   * partition blocks): one more is refused with RESOURCE_EXHAUSTED naming {@code key}.
   */
  public void limitWrites(int max, String key) {
    writes.limit(max, key);
  }

  @Override
  public void abort(TempBlock temp) {
    commits.abort(temp);
  }

  /** The reaper's abort of a writer gone quiet: {@code why} is what that writer is told if it comes back. */
  void abortIdle(Temp t, String why) {
    commits.abort(t, why);
  }

  /** Aborts the blocks being written of these files (the master recovered them: their writers lost their leases). */
  @Override
  public void abortWritesOf(Collection<Long> fileIds) {
    commits.abortWritesOf(fileIds);
  }

  @Override
  public java.util.Set<Long> heldFileIds() {
    return commits.heldFileIds();
  }

  /** Temp blocks idle for longer than {@code idleMs}: their writers died without closing. */
  List<Temp> idleTemps(long idleMs) {
    return commits.idleTemps(idleMs);
  }

  // ---------------------------------------------------------------- reads

  @Override
  public BlockMeta get(long blockId) throws StrataException {
    return index.get(blockId);
  }

  @Override
  public ReadHandle openForRead(long blockId, boolean promote) throws IOException {
    get(blockId);
    if (promote) {
      mover.moveUp(blockId, 0);
    }
    BlockLock lock = locks.readLock(blockId);
    StorageDir dir;
    long length = 0;
    synchronized (index.lock) {
      dir = index.committed.get(blockId);
      if (dir != null && index.removeWhenUnlocked.contains(blockId)) {
        dir = null;
      }
      if (dir != null) {
        length = dir.blocks.get(blockId);
      }
    }
    if (dir == null) {
      lock.close();
      // The last reader may have left while this one held the lock, so this one finishes the removal.
      removals.finishDeferredRemovalLater(blockId);
      throw new NotFoundException("Block " + blockId + " does not exist on this worker");
    }
    FileChannel ch;
    try {
      ch = FileChannel.open(dir.blockPath(blockId), StandardOpenOption.READ);
    } catch (IOException e) {
      lock.close();
      // Under the read lock nothing moves or deletes the file: its absence means the dir failed.
      if (!failures.dirFailed(dir, e)) {
        removals.finishDeferredRemovalLater(blockId);
        throw DirProbe.transientError("Opening block " + blockId, dir, e);
      }
      throw new NotFoundException("Block " + blockId + " was lost: its storage dir " + dir.root + " failed", e);
    }
    annotator.onAccess(blockId);
    reports.countRead(dir.tierOrdinal);
    BlockMeta meta = new BlockMeta(blockId, length, dir.tierAlias);
    Path file = dir.blockPath(blockId);
    Path sidecar = dir.sidecarPath(blockId);
    long blockLength = length;
    int tier = dir.tierOrdinal;
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
      public void served(long bytes) {
        index.counters.read(tier, bytes);
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
        removals.finishDeferredRemovalLater(blockId); // not on this (maybe network) thread
      }
    };
  }

  // ---------------------------------------------------------------- removal (Removals), pins (Protection)

  @Override
  public boolean remove(long blockId) throws IOException {
    return removals.remove(blockId);
  }

  @Override
  public void pin(long blockId) {
    protection.pin(blockId);
  }

  @Override
  public void unpin(long blockId) {
    protection.unpin(blockId);
  }

  boolean isPinned(long blockId) {
    return protection.isPinned(blockId);
  }

  /** The blocks' files are persisted: eviction may drop them out of the last tier. Unknown ids are ignored. */
  @Override
  public void markEvictable(Collection<Long> blockIds) {
    protection.markEvictable(blockIds);
  }

  /** Whether eviction may drop the block out of the last tier (tests and reports). */
  boolean isEvictable(long blockId) {
    return protection.isEvictable(blockId);
  }

  /** Bytes writers are waiting for ({@link #createReserved}); the master persists their files' neighbours first. */
  @Override
  public long awaitedBytes() {
    return protection.awaitedBytes();
  }

  // ---------------------------------------------------------------- moves and eviction (Mover)

  /** The write lock a mover takes on a block, if free now ({@link Mover#tryLockForMove}). */
  Optional<BlockLock> tryLockForMove(long blockId) {
    return mover.tryLockForMove(blockId);
  }

  /** Makes {@code bytes} available in {@code dir} by eviction ({@link Mover#freeSpace}); whether the room is there. */
  boolean freeSpace(StorageDir dir, long bytes) {
    return mover.freeSpace(dir, bytes);
  }

  /** Moves a block to tier {@code target} if it is below it and its lock is free; returns whether it moved. */
  boolean moveUp(long blockId, int target) {
    return mover.moveUp(blockId, target);
  }

  /** Moves a block the caller holds the write lock of from {@code from} to a dir of tier {@code target}. */
  boolean moveLocked(long blockId, StorageDir from, int target) {
    return mover.moveLocked(blockId, from, target);
  }

  // ---------------------------------------------------------------- failure (DirFailures)

  /** Marks a dir bad if {@link DirProbe} confirms the failure ({@link DirFailures#dirFailed}); whether it is bad now. */
  boolean dirFailed(StorageDir dir, Exception cause) {
    return failures.dirFailed(dir, cause);
  }

  // ---------------------------------------------------------------- reports (StoreReports, BlockIndex)

  /** Block reads opened so far, per tier (index = tier ordinal, 0 = top). */
  public long[] readsByTier() {
    return reports.readsByTier();
  }

  /** Bytes read and written, and evictions, per tier. */
  public StoreCounters counters() {
    return index.counters;
  }

  /** The alias of tier {@code ordinal}. */
  public String tierAlias(int ordinal) {
    return index.tiers.get(ordinal).get(0).tierAlias;
  }

  @Override
  public List<BlockMeta> committedBlocks() {
    return reports.committedBlocks();
  }

  @Override
  public String dirOfBlock(long blockId) {
    StorageDir d = index.dirOf(blockId);
    return d == null ? "" : d.root.toString();
  }

  /** The dir holding a block, or null (tests and the tier manager). */
  StorageDir dirOf(long blockId) {
    return index.dirOf(blockId);
  }

  /** Committed block ids of a dir. */
  List<Long> blocksIn(StorageDir dir) {
    return index.blocksIn(dir);
  }

  long lengthOf(long blockId) {
    return index.lengthOf(blockId);
  }

  @Override
  public long capacityBytes() {
    return reports.capacityBytes();
  }

  @Override
  public long usedBytes() {
    return reports.usedBytes();
  }

  /** Committed blocks per dir, in the order of {@link #dirReports} (0 for a bad dir). */
  public long[] dirBlockCounts() {
    return reports.dirBlockCounts();
  }

  @Override
  public List<DirReport> dirReports() {
    return reports.dirReports();
  }
}
