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
  /** Writes a temp block's bytes, reserving room as they come ({@link WriteSpace#append}). */
  interface Appender {
    void append(Temp t, ByteBuffer data) throws IOException;
  }

  final long blockId;
  final long maxLength;
  final StorageDir dir;
  final Path path;
  final FileChannel channel;
  private final Appender appender;
  volatile long length;
  /** Bytes this temp block holds in its dir's {@code used}: at least {@link #length}. Store monitor. */
  long reserved;
  /** Reserved whole by {@link WriteSpace#createReserved} and not yet taken by its writer. Store monitor. */
  boolean awaitingWriter;
  volatile long lastAppendMs;
  volatile boolean closed;
  /** The checksums of what was appended ({@link WriteSpace#append}); the writer thread only. */
  final ChunkChecksums.Builder crcs = new ChunkChecksums.Builder();

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
}
