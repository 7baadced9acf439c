package io.strata.worker.store;

import io.strata.common.checksum.ChunkChecksums;
import io.strata.worker.store.BlockStore.TempBlock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * A block being written: a file in its dir's {@code tmp/} that {@link Commits#commit} renames into
 * {@code blocks/}. It holds a reservation in its dir's {@code used} ({@link #reserved}, at least
 * {@link #length}); {@link WriteSpace} grows it as data arrives (or took it whole for
 * {@link WriteSpace#createReserved}).
 *
 * <p>Threading: appends come from one writer thread; abort may come from the reaper or a dir failure.
 * The fields marked "store monitor" are guarded by the store's one monitor ({@link BlockIndex#lock});
 * the volatile ones are read without it.
 */
final class Temp implements TempBlock {
  /**
   * Writes a temp block's bytes, reserving room as they come ({@link WriteSpace#append}); for a block its
   * client writes itself (short-circuit), grants room ahead and takes the written file
   * ({@link WriteSpace#grant}, {@link WriteSpace#written}).
   */
  interface Appender {
    void append(Temp t, ByteBuffer data) throws IOException;

    long grant(Temp t, long bytes) throws io.strata.common.exception.StrataException;

    void written(Temp t, long length, int[] checksums) throws io.strata.common.exception.StrataException;
  }

  final long blockId;
  final long maxLength;
  /**
   * Where the block is written. Changed only by {@link WriteSpace}'s move of a block its writer appends to into a
   * lower tier (its dir full of blocks being written), under the store's monitor, on the writer's own thread.
   */
  volatile StorageDir dir;
  volatile Path path;
  volatile FileChannel channel;
  private final Appender appender;
  volatile long length;
  /** Bytes this temp block holds in its dir's {@code used}: at least {@link #length}. Store monitor. */
  long reserved;
  /** Reserved whole by {@link WriteSpace#createReserved} and not yet taken by its writer. Store monitor. */
  boolean awaitingWriter;
  volatile long lastAppendMs;
  volatile boolean closed;
  /**
   * Why it was aborted, for its writer's error (set before {@link #closed}); null: it was not, or by its own writer.
   */
  volatile String abortedBecause;
  /** Exempt from the idle reaper ({@link #hold}). */
  volatile boolean held;
  /** The checksums of what was appended ({@link WriteSpace#append}); the writer thread only. */
  final ChunkChecksums.Builder crcs = new ChunkChecksums.Builder();
  /** For a block its client wrote itself: the checksums it sent ({@link WriteSpace#written}); else null. */
  volatile int[] writtenCrcs;

  /** What its writer is told once it was aborted: why, when the store knows. */
  String abortedMessage() {
    String why = abortedBecause;
    return "Temp block " + blockId + " was aborted (" + (why != null ? why
        : "its dir failed, or it was idle past strata.worker.temp.block.timeout") + ")";
  }

  Temp(long blockId, long maxLength, StorageDir dir, Path path, FileChannel channel, Appender appender,
      long nowMs) {
    this.blockId = blockId;
    this.maxLength = maxLength;
    this.dir = dir;
    this.path = path;
    this.channel = channel;
    this.appender = appender;
    this.lastAppendMs = nowMs;
  }

  @Override
  public long maxLength() {
    return maxLength;
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
    appender.append(this, data);
  }

  @Override
  public long grant(long bytes) throws io.strata.common.exception.StrataException {
    return appender.grant(this, bytes);
  }

  @Override
  public void written(long n, int[] checksums) throws io.strata.common.exception.StrataException {
    appender.written(this, n, checksums);
  }

  /** Every chunk's checksum of the finished block: the outside writer's, or those computed on append. */
  int[] finishedChecksums() {
    int[] outside = writtenCrcs;
    return outside != null ? outside.clone() : crcs.finish();
  }

  @Override
  public Path path() {
    return path;
  }

  @Override
  public void hold() {
    held = true;
  }
}
