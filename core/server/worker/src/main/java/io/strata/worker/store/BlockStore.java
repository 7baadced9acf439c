package io.strata.worker.store;

import io.strata.common.exception.StrataException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.List;

/**
 * Where a worker keeps blocks. A block is first a temp block owned by one writer, then committed:
 * immutable, named by id, readable by many at once. Implementations are thread-safe.
 */
public interface BlockStore {
  /** A block being written. Not thread-safe: one writer. */
  interface TempBlock {
    long blockId();

    /** Appends data, reserving space as it goes; fails with ResourceExhausted when no room can be made. */
    void append(ByteBuffer data) throws IOException;

    long length();

    /**
     * Short-circuit writes (the client writes the file itself): reserves {@code bytes} more for this block
     * through the store's normal accounting (evicting as an append would; RESOURCE_EXHAUSTED naming what
     * holds the space when no room can be made), capped at the block's maximum length. Returns the bytes
     * granted in total. A block reserved whole is granted its maximum length already.
     */
    default long grant(long bytes) throws StrataException {
      throw new UnsupportedOperationException("This store does not grant space to outside writers");
    }

    /**
     * Short-circuit writes: the client wrote {@code length} bytes into {@link #path()} and closed it, with
     * {@code checksums} the CRC32C of each of their checksum chunks as it computed them (kept as the
     * block's checksums at commit). The file must hold exactly that many bytes, within the grant, and the
     * checksums must be one per chunk, or the write is refused (and should be aborted).
     */
    default void written(long length, int[] checksums) throws StrataException {
      throw new UnsupportedOperationException("This store does not take blocks written from outside");
    }

    /** The most bytes this block may hold, as the store checked it when the block was created or reserved. */
    default long maxLength() {
      throw new UnsupportedOperationException("This store does not expose a temp block's maximum length");
    }

    /** The temp block's file, for short-circuit writers on this host. */
    default java.nio.file.Path path() {
      throw new UnsupportedOperationException("This store does not expose block files");
    }

    /**
     * The checksums of the bytes appended so far ({@link io.strata.common.checksum.ChunkChecksums}): the
     * store computes them as it appends and keeps them beside the block at commit; a caller that got
     * checksums from the writer compares them here first.
     */
    io.strata.common.checksum.ChunkChecksums.Builder checksums();

    /**
     * Marks this block as held by a long-lived owner in this process whose liveness the master tracks by
     * the file's write lease (a shuffle partition file, appended to in bursts with idle gaps of any
     * length): the idle reaper ({@code strata.worker.temp.block.timeout}) leaves it. It still ends by
     * commit, abort, its dir's failure, or the master recovering its file's lease
     * ({@link BlockStore#abortWritesOf}).
     */
    default void hold() {}
  }

  /** A committed block and the tier it is in. */
  record BlockMeta(long blockId, long length, String tier) {}

  /**
   * An open committed block. While it is open the block holds a read lock: it is not evicted, moved or
   * deleted (a removal waits for the last reader). Close it exactly once; any thread may close it.
   */
  interface ReadHandle extends AutoCloseable {
    BlockMeta meta();

    FileChannel channel();

    /** The block's file, for short-circuit readers on this host; it stays put while the handle is open. */
    default java.nio.file.Path path() {
      throw new UnsupportedOperationException("This store does not expose block files");
    }

    /**
     * The block's stored checksums, one per checksum chunk; DATA_LOSS (a
     * {@link io.strata.common.exception.CorruptBlockException}) when they are missing or damaged.
     */
    int[] checksums() throws IOException;

    /** Counts {@code bytes} of this block sent to a reader (the store's per-tier read traffic). */
    default void served(long bytes) {}

    @Override
    void close();
  }

  /** One storage dir as reported to the master and operators. */
  record DirReport(String tier, int tierOrdinal, String path, boolean good, long capacityBytes, long usedBytes,
      long lostBlocks) {}

  /** Starts a temp block; AlreadyExists if the block is committed here or another writer has it. */
  TempBlock createTemp(long blockId, long maxLength) throws StrataException;

  /**
   * Starts a temp block with its whole {@code maxLength} reserved up front, waiting up to {@code waitMs}
   * for room when the store is full of blocks it may not evict; RESOURCE_EXHAUSTED (naming what holds the
   * space) when none appears. The writer then takes it with {@link #reserved}.
   */
  TempBlock createReserved(long blockId, long maxLength, long waitMs) throws StrataException;

  /** The temp block {@link #createReserved} made, handed out once; NotFound when there is none. */
  TempBlock reserved(long blockId) throws StrataException;

  /**
   * The blocks' files are persisted, so eviction may drop these copies out of the last tier. Every other
   * committed block is protected: it may move between tiers but is deleted only by {@link #remove}.
   */
  void markEvictable(java.util.Collection<Long> blockIds);

  /** Bytes that writers are waiting for room for, now. */
  long awaitedBytes();

  /** Makes the temp block a committed block; returns its metadata. */
  BlockMeta commit(TempBlock temp) throws IOException;

  /** Drops a temp block and its reservation. */
  void abort(TempBlock temp);

  /** Drops the temp blocks of these files (their writers lost their leases); the writers' streams fail. */
  default void abortWritesOf(java.util.Collection<Long> fileIds) {}

  /** The storage dir holding the committed block ({@link Lanes} key removals by it); "" when none does. */
  default String dirOfBlock(long blockId) {
    return "";
  }

  /**
   * The files of the temp blocks held now ({@link TempBlock#hold}); the worker's held-files check asks the master
   * which of them ended, and drops their blocks (a client's block of a file that does not exist, or is complete, has
   * no lease whose recovery would ever end it).
   */
  default java.util.Set<Long> heldFileIds() {
    return java.util.Set.of();
  }

  /** The committed block, or NotFound. */
  BlockMeta get(long blockId) throws StrataException;

  /** Opens a committed block for reading, first moving it to the top tier when {@code promote}. */
  ReadHandle openForRead(long blockId, boolean promote) throws IOException;

  /** Removes a committed block (once its readers are done); false when it is not here. */
  boolean remove(long blockId) throws IOException;

  /** Pinned blocks are never evicted or moved down. */
  void pin(long blockId);

  void unpin(long blockId);

  List<BlockMeta> committedBlocks();

  /** Capacity of the good dirs. */
  long capacityBytes();

  /** Bytes used in the good dirs. */
  long usedBytes();

  List<DirReport> dirReports();
}
