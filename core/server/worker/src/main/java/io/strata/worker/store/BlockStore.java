package io.strata.worker.store;

import io.strata.common.exception.StrataException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.List;

/**
 * Where a worker keeps blocks. A block is first a temp block owned by one writer, then committed:
 * immutable, named by id, readable by many. Implementations are thread-safe.
 */
public interface BlockStore {
  /** A block being written. Not thread-safe: one writer. */
  interface TempBlock {
    long blockId();

    /** Appends data, reserving space as it goes; fails with ResourceExhausted when the quota is full. */
    void append(ByteBuffer data) throws IOException;

    long length();
  }

  /** A committed block. */
  record BlockMeta(long blockId, long length, String tier) {}

  /** Starts a temp block; AlreadyExists if the block is committed here or another writer has it. */
  TempBlock createTemp(long blockId, long maxLength) throws StrataException;

  /** Makes the temp block a committed block; returns its metadata. */
  BlockMeta commit(TempBlock temp) throws IOException;

  /** Drops a temp block and its reservation. */
  void abort(TempBlock temp);

  /** The committed block, or NotFound. */
  BlockMeta get(long blockId) throws StrataException;

  /** Opens a committed block for reading; the caller closes the channel. */
  FileChannel openForRead(long blockId) throws IOException;

  /** Removes a committed block; false when it was not here. */
  boolean remove(long blockId) throws IOException;

  List<BlockMeta> committedBlocks();

  long capacityBytes();

  long usedBytes();
}
