package io.strata.worker.store;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.InternalException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.time.Deadlines;
import io.strata.worker.store.BlockStore.TempBlock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * Allocation and write reservations: starts temp blocks ({@link #createTemp}: the highest tier with room
 * for the whole block, the {@link Allocator} picking the dir, evicting by {@link Mover} when none has it;
 * {@link #createReserved}: the whole block reserved up front, waiting bounded on the {@link SpaceSignal}
 * for room), and reserves space chunk by chunk as a temp block's data arrives ({@link #append}), so a
 * block never needs twice its size. A block appended to in this process whose dir has no room left that eviction
 * can make (its tier full of blocks being written) moves down a tier and goes on there ({@link #moveDown}). A block id is claimed (a null entry in {@link BlockIndex#writing})
 * before its dir is chosen, so two writers of one id never race.
 *
 * <p>Thread-safe. Reservations change dirs' {@code used} under the store's monitor ({@link BlockIndex#lock});
 * opening files, writing data, evicting and waiting for room happen outside it, holding no block lock.
 */
final class WriteSpace implements Temp.Appender {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(WriteSpace.class);
  private final BlockIndex index;
  private final Allocator allocator;
  private final Mover mover;
  private final DirFailures failures;
  private final StoreReports reports;
  private final Clock clock;
  /** Most blocks written at once (ids claimed, temp files open); guarded by {@code index.lock}. */
  private int maxWriting = Integer.MAX_VALUE;
  private String maxWritingKey = "";

  WriteSpace(BlockIndex index, Allocator allocator, Mover mover, DirFailures failures, StoreReports reports,
      Clock clock) {
    this.index = index;
    this.allocator = allocator;
    this.mover = mover;
    this.failures = failures;
    this.reports = reports;
    this.clock = clock;
  }

  TempBlock createTemp(long blockId, long maxLength) throws StrataException {
    claimId(blockId, maxLength);
    try {
      for (int attempt = 0; attempt <= index.allDirs.size(); attempt++) {
        StorageDir dir = chooseDirForWrite(maxLength);
        Temp t = openTemp(blockId, maxLength, dir, 0);
        if (t != null) {
          return t;
        }
      }
      throw new ResourceExhaustedException("No storage dir could take block " + blockId);
    } catch (StrataException | RuntimeException e) {
      synchronized (index.lock) {
        index.writing.remove(blockId);
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
  TempBlock createReserved(long blockId, long maxLength, long waitMs) throws StrataException {
    claimId(blockId, maxLength);
    long deadline = Deadlines.nanoDeadline(System.nanoTime(), Duration.ofMillis(Math.max(0, waitMs)));
    boolean waiting = false;
    try {
      while (true) {
        long seen = index.space.generation();
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
          index.space.awaiting(maxLength);
        }
        if (!index.space.await(seen, deadline)) {
          String why;
          synchronized (index.lock) {
            StorageDir top = (StorageDir) allocator.allocate(
                index.eligible(index.tiers.get(index.tiers.size() - 1), 0), 0);
            why = top == null ? "no good storage dir is left" : reports.fullMessage(top, blockId, maxLength);
          }
          throw new ResourceExhaustedException("No room for block " + blockId + " (" + maxLength + " bytes) after "
              + "waiting " + waitMs + " ms (strata.worker.write.space.wait.timeout): " + why);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      synchronized (index.lock) {
        index.writing.remove(blockId);
      }
      throw new UnavailableException("Interrupted while waiting for room for block " + blockId, e);
    } catch (StrataException | RuntimeException e) {
      synchronized (index.lock) {
        index.writing.remove(blockId);
      }
      throw e;
    } finally {
      if (waiting) {
        index.space.awaiting(-maxLength);
      }
    }
  }

  /** The temp block {@link #createReserved} made for {@code blockId}, handed to its writer once. */
  TempBlock reserved(long blockId) throws StrataException {
    synchronized (index.lock) {
      Temp t = index.writing.get(blockId);
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
    for (int ordinal = 0; ordinal < index.tiers.size(); ordinal++) {
      StorageDir d = mover.reserveIn(ordinal, bytes);
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
    synchronized (index.lock) {
      path = dir.tmpDir.resolve(blockId + "-" + (index.tmpSeq++));
    }
    FileChannel ch;
    try {
      ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    } catch (IOException e) {
      if (reserved > 0) {
        index.release(dir, reserved);
      }
      if (!failures.dirFailed(dir, e)) {
        throw DirProbe.transientError("Creating block " + blockId, dir, e);
      }
      return null;
    }
    Temp t = new Temp(blockId, maxLength, dir, path, ch, this, clock.millis());
    synchronized (index.lock) {
      t.reserved = reserved;
      t.awaitingWriter = reserved > 0;
      index.writing.put(blockId, t);
    }
    return t;
  }

  /**
   * Bounds the blocks written at once (each holds a temp file's descriptor and an entry here, however small its
   * length): one more is refused with RESOURCE_EXHAUSTED naming {@code key}.
   */
  void limit(int max, String key) {
    synchronized (index.lock) {
      this.maxWriting = max;
      this.maxWritingKey = key;
    }
  }

  /** Checks a new block's id and length and claims the id for the caller (a null entry in the writing map). */
  private void claimId(long blockId, long maxLength) throws StrataException {
    if (blockId < 0) {
      throw new InvalidArgumentException("Block id " + blockId + " is negative");
    }
    if (maxLength <= 0) {
      throw new InvalidArgumentException("Block " + blockId + ": maximum length " + maxLength + " must be positive");
    }
    if (maxLength > index.maxDirCapacity) {
      throw new InvalidArgumentException("Block " + blockId + ": maximum length " + maxLength
          + " is larger than this worker's largest storage dir capacity of " + index.maxDirCapacity + " bytes");
    }
    synchronized (index.lock) {
      if (index.committed.containsKey(blockId)) {
        throw new AlreadyExistsException("Block " + blockId + " is already committed on this worker");
      }
      if (index.writing.containsKey(blockId)) {
        throw new AlreadyExistsException("Block " + blockId + " is being written (or removed) by another caller");
      }
      if (index.writing.size() >= maxWriting) {
        throw new ResourceExhaustedException("Cannot write block " + blockId + ": " + index.writing.size()
            + " blocks are being written (or reserved) on this worker, the most it writes at once ("
            + maxWritingKey + "=" + maxWriting + "); retry when some have committed");
      }
      index.writing.put(blockId, null);
    }
  }

  /** The highest tier's dir with room for {@code bytes}, making room by eviction when none has it. */
  private StorageDir chooseDirForWrite(long bytes) throws StrataException {
    synchronized (index.lock) {
      for (List<StorageDir> tier : index.tiers) {
        DirView d = allocator.allocate(tier, bytes);
        if (d != null) {
          return (StorageDir) d;
        }
      }
    }
    for (List<StorageDir> tier : index.tiers) {
      StorageDir d;
      synchronized (index.lock) {
        d = (StorageDir) allocator.allocate(index.eligible(tier, bytes), 0);
      }
      if (d != null && mover.freeSpace(d, bytes)) {
        return d;
      }
    }
    // No dir can make room for a whole block now (pinned or locked blocks): start in the top tier's best
    // dir anyway; space is reserved as data arrives, and an append that finds no room fails then.
    for (List<StorageDir> tier : index.tiers) {
      synchronized (index.lock) {
        StorageDir d = (StorageDir) allocator.allocate(index.eligible(tier, 0), 0);
        if (d != null) {
          return d;
        }
      }
    }
    // Every dir failed: this worker is broken, not full (UNAVAILABLE, so the writer fails over to another worker).
    throw new UnavailableException("No good storage dir is left on this worker for " + bytes + " bytes: "
        + reports.dirReports());
  }

  /** Appends to a temp block (its one writer thread), reserving in its dir what the data needs beyond its reservation. */
  @Override
  public void append(Temp t, ByteBuffer data) throws IOException {
    int n = data.remaining();
    if (t.closed) {
      throw new InternalException(t.abortedMessage());
    }
    if (t.length + n > t.maxLength) {
      throw new InvalidArgumentException("Block " + t.blockId + " would grow to " + (t.length + n)
          + " bytes, past its declared maximum of " + t.maxLength);
    }
    long need;
    synchronized (index.lock) {
      need = Math.max(0, t.length + n - t.reserved);
    }
    if (need > 0) {
      reserve(t, need, true); // a block reserved whole never needs more; may move it a tier down
    }
    t.crcs.update(data.duplicate());
    try {
      while (data.hasRemaining()) {
        t.channel.write(data);
      }
    } catch (ClosedChannelException e) {
      // Aborted under us (the reaper, or the dir failed), or this thread was interrupted: the channel
      // is gone but the dir is fine, so this is no reason to fail it.
      unreserve(t, need);
      throw new InternalException("Writing block " + t.blockId + " stopped: its temp block was aborted (idle "
          + "past strata.worker.temp.block.timeout, or its dir failed) or the writer was interrupted (" + e + ")", e);
    } catch (IOException e) {
      unreserve(t, need);
      if (!failures.dirFailed(t.dir, e)) {
        throw DirProbe.transientError("Writing block " + t.blockId, t.dir, e);
      }
      throw new InternalException("Writing block " + t.blockId + " failed: storage dir " + t.dir.root
          + " failed (" + e + ")", e);
    }
    synchronized (index.lock) {
      if (t.closed) {
        // Aborted while the bytes went out: abort released the whole reservation, this append's too.
        throw new InternalException("Temp block " + t.blockId + " was aborted while being written");
      }
      t.length += n;
    }
    t.lastAppendMs = clock.millis();
  }

  /**
   * Short-circuit writes: adds up to {@code bytes} to the temp block's reservation (capped at its maximum
   * length) through the same accounting as an append, so a full dir refuses with the store's message.
   * Returns the bytes granted in total; a grant counts as progress for the idle reaper.
   */
  @Override
  public long grant(Temp t, long bytes) throws StrataException {
    if (bytes < 0) {
      throw new InvalidArgumentException("Block " + t.blockId + ": cannot grant a negative " + bytes + " bytes");
    }
    long need;
    synchronized (index.lock) {
      checkOpen(t);
      need = Math.min(bytes, t.maxLength - t.reserved);
    }
    if (need > 0) {
      reserve(t, need, false); // its client holds the file: never moved
    }
    t.lastAppendMs = clock.millis();
    synchronized (index.lock) {
      return t.reserved;
    }
  }

  /**
   * Short-circuit writes: the client wrote {@code n} bytes into the temp file itself. The file must hold
   * exactly that many (INVALID_ARGUMENT) within the grant (FAILED_PRECONDITION), with one checksum per
   * checksum chunk (INVALID_ARGUMENT); then it is the block's length and those are its checksums. The
   * worker does not read the file to check them: a writer holding a writable descriptor of the block is
   * trusted with its bytes anyway, and the readers verify every chunk against them.
   */
  @Override
  public void written(Temp t, long n, int[] checksums) throws StrataException {
    if (n >= 0 && checksums.length != io.strata.common.checksum.ChunkChecksums.chunkCount(n)) {
      throw new InvalidArgumentException("Block " + t.blockId + ": the writer sent " + checksums.length
          + " checksums for " + n + " bytes, which are " + io.strata.common.checksum.ChunkChecksums.chunkCount(n)
          + " checksum chunks of " + io.strata.common.checksum.ChunkChecksums.CHUNK_BYTES + " bytes");
    }
    long size;
    try {
      size = java.nio.file.Files.size(t.path);
    } catch (IOException e) {
      throw new InternalException("Cannot read the size of temp block " + t.path + ": " + e, e);
    }
    synchronized (index.lock) {
      checkOpen(t);
      if (n < 0 || size != n) {
        throw new InvalidArgumentException("Block " + t.blockId + ": the writer says it wrote " + n + " bytes but "
            + "its temp file holds " + size);
      }
      if (n > t.reserved) {
        throw new io.strata.common.exception.FailedPreconditionException("Block " + t.blockId + ": the writer "
            + "wrote " + n + " bytes but was granted only " + t.reserved + " (ask for space before writing)");
      }
      t.length = n;
      t.writtenCrcs = checksums.clone();
    }
  }

  private static void checkOpen(Temp t) throws StrataException {
    if (t.closed) {
      throw new InternalException(t.abortedMessage());
    }
  }

  /**
   * Adds {@code n} bytes to a temp block's reservation in its dir, evicting there if needed; at once. With
   * {@code mayMove} (a block its writer appends to in this process), a dir that has no room left even so (its tier
   * full of blocks being written, which no eviction moves) sends the block down a tier ({@link #moveDown}).
   */
  private void reserve(Temp t, long n, boolean mayMove) throws StrataException {
    StorageDir dir = t.dir;
    long total = 0;
    // Concurrent evictors skip each other's locked victims and may take the room one of them made, so a
    // pass that finds nothing is retried (bounded) with a fresh view before the write is refused.
    for (int attempt = 0; attempt < 4; attempt++) {
      synchronized (index.lock) {
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
          if (!mayMove) {
            throw new ResourceExhaustedException(reports.fullMessage(dir, t.blockId, n));
          }
          total = t.reserved + n;
          break;
        }
      }
      mover.freeSpace(dir, n);
    }
    if (!moveDown(t, total)) {
      synchronized (index.lock) {
        throw new ResourceExhaustedException(reports.fullMessage(dir, t.blockId, n));
      }
    }
  }

  /**
   * Moves a temp block its writer appends to into a dir of a lower tier with {@code total} bytes reserved for it,
   * copying what it holds so far, so that a tier filled by blocks being written (which eviction cannot move) spills
   * down instead of failing the write: a shuffle partition's blocks all start in memory and grow there. Runs on the
   * writer's thread between two appends; the swap is under the store's monitor, and an abort that came first wins
   * (the copy is dropped). False when no lower tier has room.
   */
  private boolean moveDown(Temp t, long total) throws StrataException {
    StorageDir from = t.dir;
    for (int ordinal = from.tierOrdinal + 1; ordinal < index.tiers.size(); ordinal++) {
      StorageDir to = mover.reserveIn(ordinal, total);
      if (to == null) {
        continue;
      }
      Path path;
      synchronized (index.lock) {
        path = to.tmpDir.resolve(t.blockId + "-" + (index.tmpSeq++));
      }
      FileChannel ch = null;
      try {
        ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        long len = t.length;
        try (FileChannel in = FileChannel.open(t.path, StandardOpenOption.READ)) {
          for (long pos = 0; pos < len; ) {
            pos += in.transferTo(pos, len - pos, ch);
          }
        }
      } catch (IOException e) {
        closeQuietly(ch);
        deleteQuietly(path);
        index.release(to, total);
        LOG.warn("Cannot move temp block {} from {} to {}: {}", t.blockId, from.root, to.root, e.toString());
        continue;
      }
      FileChannel oldChannel = null;
      Path oldPath = null;
      boolean targetFailed;
      synchronized (index.lock) {
        targetFailed = !to.isGood(); // failed during the copy: its sweep of temps did not see this one there
        if (!t.closed && !targetFailed) {
          oldChannel = t.channel;
          oldPath = t.path;
          if (from.isGood()) {
            from.used -= t.reserved;
          }
          t.dir = to;
          t.path = path;
          t.channel = ch;
          t.reserved = total;
        }
      }
      if (oldChannel == null) {
        closeQuietly(ch);
        deleteQuietly(path);
        index.release(to, total);
        if (targetFailed) {
          continue; // another dir, or tier, may take it
        }
        throw new InternalException("Temp block " + t.blockId + " was aborted while being written");
      }
      index.space.changed();
      closeQuietly(oldChannel);
      deleteQuietly(oldPath);
      LOG.info("Temp block {} moved down from tier {} to {} ({} bytes so far): {} has no room left that eviction "
          + "can make (blocks being written hold it)", t.blockId, from.tierAlias, to.tierAlias, t.length, from.root);
      return true;
    }
    return false;
  }

  private static void closeQuietly(FileChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // its file is deleted next
      }
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      java.nio.file.Files.deleteIfExists(p);
    } catch (IOException e) {
      LOG.warn("Cannot delete {}: {}", p, e.toString());
    }
  }

  /** Gives back {@code n} bytes of a live temp block's reservation (an abort gives back all of it). */
  private void unreserve(Temp t, long n) {
    synchronized (index.lock) {
      if (n <= 0 || t.closed) {
        return;
      }
      t.reserved -= n;
      if (t.dir.isGood()) {
        t.dir.used -= n;
      }
    }
    index.space.changed();
  }
}
