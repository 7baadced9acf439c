package io.strata.client;

import io.strata.client.options.ReadType;
import io.strata.common.exception.CorruptBlockException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.OutOfRangeException;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Set;

/**
 * Reads a complete file: sequentially (one block stream at a time, opened at the current position),
 * with {@link #seek}, and with positioned reads that leave the position alone.
 *
 * <p>Where each block is read ({@link BlockCopies} chooses the copy, and fails over): from the nearest worker
 * that holds it ({@link WorkerSelector#nearest}: this node, then this rack, then any). A block of a persisted
 * file that no reachable worker holds is read through a worker from the under file system
 * ({@link WorkerSelector#ufsReadWorker}); that worker caches it unless the read type is NO_CACHE. Reads of a
 * persisted file always allow the under file system fallback, so a block evicted since the file was opened is
 * still read. A block of a file that is not persisted and is on no reachable worker fails with UNAVAILABLE.
 *
 * <p>Failover ({@link BlockRetry}): a read that fails because of its copy (the worker gone, silent past the
 * RPC timeout, the stream reset or cut short, NOT_FOUND, DATA_LOSS such as a corrupt copy) marks that worker
 * failed for the rest of this stream, backs off, and reads on from the block's next copy, then, for a
 * persisted file, from the under file system through another worker. It resumes at the exact position: a
 * sequential read has delivered nothing of the failed call, so the block is opened again at {@link #getPos};
 * a positioned read reads its whole range again into the same bytes of the caller's array. When every copy
 * of a block of a file not persisted is on a worker that failed before, those workers are tried again (HDFS
 * does the same with its dead nodes): a worker restarted or a deadline missed under load is not a lost
 * block, and the block's retries bound the attempts. After the last
 * retry ({@link ClientKeys#BLOCK_READ_RETRY_MAX}, {@link ClientKeys#BLOCK_RETRY_TOTAL_TIMEOUT}) or when no
 * copy is left, the error names the file, the position, the block and every worker tried with its failure.
 *
 * <p>Checksums: a block copy that fails its checksum ({@link CorruptBlockException}, from either reader) is
 * reported to the master (which drops that copy when the bytes exist elsewhere) and is failed over like
 * any failed copy, except that only that block's copy on that worker is left out (the worker is not
 * dead). When no other copy is left and the file is not persisted, the read fails with DATA_LOSS.
 *
 * <p>Passive caching ({@link PassiveCaching}; when enabled and the read type is not NO_CACHE): once a block
 * has been read from a worker on another host, a worker on this host, if any, is asked to cache it
 * (CacheBlock, fire and forget), once per block per stream.
 *
 * <p>Local page cache ({@code strata.user.client.cache.enabled}): reads are served by a {@link PagedReader} over
 * the context's {@link LocalPageCache}, which reads missing pages through a second stream of this class
 * without the cache.
 *
 * <p>Not thread-safe: one reader.
 */
public final class FileInStream extends InputStream {
  private final FileSystemContext context;
  private final ReadType readType;
  private final URIStatus file;
  private final List<FileBlockInfo> blocks;
  /** Which copy of a block each read opens, and the copies that failed this stream. */
  private final BlockCopies copies;
  /** Asks this host's worker to cache a block read from another host. */
  private final PassiveCaching passiveCache;
  private final BlockRetry.Policy retryPolicy;
  /** Retries of the block the sequential reader is on ({@link #retryBlock}), or null before any failure. */
  private BlockRetry retry;
  private long retryBlock = -1;
  private long pos;
  /** What this stream holds open at workers, let go at close, or by a cleaner if it is dropped unclosed. */
  private final Held held;
  private final java.lang.ref.Cleaner.Cleanable cleanable;
  private FileBlockInfo readerBlock;
  /** The blocks positioned reads read short-circuit, kept open ({@link KeptBlocks}). */
  private final KeptBlocks kept;
  /** The next block's short-circuit open, started while a sequential read is on this one; null when off. */
  private final ShortCircuitAhead ahead;

  private long readerEnd;
  private boolean closed;
  /** Serves reads from the local page cache, or null when the cache is off (or for the stream under it). */
  private final PagedReader paged;

  FileInStream(FileSystemContext context, WorkerSelector selector, URIStatus file, ReadType readType) {
    this(context, selector, file, readType, context.pageCache());
  }

  private FileInStream(FileSystemContext context, WorkerSelector selector, URIStatus file, ReadType readType,
      LocalPageCache pages) {
    this.paged = pages == null ? null
        : new PagedReader(pages, file, new FileInStream(context, selector, file, readType, null));
    this.context = context;
    this.file = file;
    this.readType = readType;
    this.blocks = file.blocks();
    this.retryPolicy = BlockRetry.Policy.reads(context.conf());
    this.kept = new KeptBlocks(context, readType == ReadType.CACHE_PROMOTE);
    this.ahead = context.conf().get(ClientKeys.SHORT_CIRCUIT_OPEN_AHEAD)
        ? new ShortCircuitAhead(context.shortCircuit(), context.background(),
            context.conf().get(ClientKeys.SHORT_CIRCUIT_CHECKSUM_VERIFY), context::isClosed) : null;
    this.held = new Held(kept, ahead);
    this.cleanable = StreamCleaner.register(this, held);
    this.copies = new BlockCopies(context, selector, file, readType, ahead);
    this.passiveCache = new PassiveCaching(context, selector, readType);
  }

  /** Workers this stream stopped reading from after a failure (the next copy or the UFS served instead). */
  public Set<WorkerAddress> failedWorkers() {
    if (paged != null) {
      return paged.raw().failedWorkers();
    }
    return copies.failedWorkers();
  }

  /** Short-circuit reads of this stream's client: blocks opened, and why reads fell back to streaming. */
  public io.strata.client.shortcircuit.ShortCircuitClient shortCircuit() {
    return context.shortCircuit();
  }

  /** How this stream reads: the open call's read type, or the configured default. */
  public ReadType readType() {
    return readType;
  }

  public long length() {
    return file.length();
  }

  public long getPos() {
    return pos;
  }

  public long remaining() {
    return file.length() - pos;
  }

  @Override
  public int available() {
    return (int) Math.min(Integer.MAX_VALUE, remaining());
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    int n = read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    ensureOpen();
    if (off < 0 || len < 0 || off + len > b.length) {
      throw new IndexOutOfBoundsException("off=" + off + " len=" + len + " array=" + b.length);
    }
    if (len == 0) {
      return 0;
    }
    if (pos >= file.length()) {
      return -1;
    }
    if (paged != null) {
      int n = paged.read(pos, b, off, len, true);
      pos += n;
      return n;
    }
    while (true) {
      if (held.reader == null) {
        openReaderAt(pos);
      }
      try {
        int n = held.reader.read(b, off, (int) Math.min(len, readerEnd - pos));
        if (n < 0) {
          held.reader.close();
          held.reader = null;
          continue;
        }
        pos += n;
        if (pos == readerEnd) {
          held.reader.close();
          passiveCache.blockRead(readerBlock, held.reader.worker());
          held.reader = null;
          retry = null;
        }
        return n;
      } catch (IOException e) {
        BlockRangeReader failed = held.reader;
        held.reader = null;
        failed.close();
        // Nothing of this call was delivered: the next attempt opens the block again at pos, exactly.
        copies.failedAttempt(retryOf(readerBlock), failed, readerBlock, pos, e);
      }
    }
  }

  /** The retries of the block being read sequentially (a new block starts afresh). */
  private BlockRetry retryOf(FileBlockInfo block) {
    if (retry == null || retryBlock != block.blockId()) {
      retry = new BlockRetry(retryPolicy);
      retryBlock = block.blockId();
    }
    return retry;
  }

  private FileBlockInfo blockAt(long position) {
    long blockSize = file.blockSize();
    int index = (int) (position / blockSize);
    return blocks.get(index);
  }

  private void openReaderAt(long position) throws IOException {
    FileBlockInfo block = blockAt(position);
    long inBlock = position - block.offset();
    long len = block.length() - inBlock;
    held.reader = copies.openOrFail(block, inBlock, len, retryOf(block), position);
    readerBlock = block;
    readerEnd = position + len;
    int next = (int) (position / file.blockSize()) + 1;
    if (ahead != null && held.reader instanceof ShortCircuitBlockReader && next < blocks.size()) {
      // While this block is read, the next one's open (its round trips to the worker) goes on in the background.
      copies.openAhead(blocks.get(next));
    }
  }

  /** Moves the position; the next read starts there. */
  public void seek(long position) throws IOException {
    ensureOpen();
    if (position < 0) {
      throw new InvalidArgumentException("Cannot seek to negative position " + position + " in " + file.path());
    }
    if (position > file.length()) {
      throw new OutOfRangeException("Cannot seek to " + position + " in " + file.path() + ": the file has "
          + file.length() + " bytes");
    }
    if (position == pos) {
      return;
    }
    if (held.reader != null) {
      held.reader.close();
      held.reader = null;
    }
    pos = position;
  }

  @Override
  public long skip(long n) throws IOException {
    if (n <= 0) {
      return 0;
    }
    long target = Math.min(file.length(), pos + n);
    long skipped = target - pos;
    seek(target);
    return skipped;
  }

  /**
   * Reads up to len bytes at {@code position} without moving the stream's position; returns -1 when
   * position is at or past the end.
   */
  public int positionedRead(long position, byte[] b, int off, int len) throws IOException {
    ensureOpen();
    if (position < 0) {
      throw new InvalidArgumentException("Negative read position " + position + " in " + file.path());
    }
    if (off < 0 || len < 0 || off + len > b.length) {
      throw new IndexOutOfBoundsException("off=" + off + " len=" + len + " array=" + b.length);
    }
    if (position >= file.length()) {
      return -1;
    }
    if (paged != null) {
      return paged.read(position, b, off, len, false);
    }
    int total = (int) Math.min(len, file.length() - position);
    int done = 0;
    while (done < total) {
      long p = position + done;
      FileBlockInfo block = blockAt(p);
      long inBlock = p - block.offset();
      int n = (int) Math.min(total - done, block.length() - inBlock);
      BlockRetry r = new BlockRetry(retryPolicy);
      while (true) {
        BlockRangeReader keptRange = keptReader(block, inBlock, n);
        BlockRangeReader reading = keptRange != null ? keptRange : copies.openOrFail(block, inBlock, n, r, p);
        try (reading) {
          // A retry reads the whole range again into the same bytes of b: nothing is skipped or doubled.
          reading.readFully(b, off + done, n);
          if (inBlock + n == block.length()) {
            passiveCache.blockRead(block, reading.worker());
          }
          break;
        } catch (IOException e) {
          dropKept(block.blockId()); // the retry chooses its copy afresh
          copies.failedAttempt(r, reading, block, p, e);
        }
      }
      done += n;
    }
    return total;
  }

  /** The range from the block kept open for positioned reads, or null to read it the usual way. */
  private BlockRangeReader keptReader(FileBlockInfo block, long offset, long length) throws IOException {
    return kept.reader(block, offset, length, () -> copies.nearest(block));
  }

  private void dropKept(long blockId) {
    kept.drop(blockId);
  }

  /** Reads exactly len bytes at position or fails with OutOfRangeException. */
  public void readFully(long position, byte[] b, int off, int len) throws IOException {
    if (position < 0 || position + len > file.length()) {
      throw new OutOfRangeException("Cannot read " + len + " bytes at " + position + " of " + file.path()
          + ": the file has " + file.length() + " bytes");
    }
    positionedRead(position, b, off, len);
  }

  private void ensureOpen() throws IOException {
    if (closed) {
      throw new IOException("The stream reading " + file.path() + " is closed");
    }
  }

  /**
   * Gives back the open block streams (their sockets and the workers' block locks) and keeps the position
   * and the file's block list: the next read opens what it needs again (Hadoop's CanUnbuffer).
   */
  public void unbuffer() {
    if (paged != null) {
      paged.unbuffer();
    }
    if (held.reader != null) {
      held.reader.close();
      held.reader = null;
    }
    kept.closeAll();
    if (ahead != null) {
      ahead.discard();
    }
  }

  @Override
  public void close() {
    if (paged != null) {
      paged.close();
    }
    unbuffer();
    closed = true;
    cleanable.clean(); // nothing is held now; the cleaner forgets this stream
  }

  /**
   * The open parts of a stream: its current block reader, its kept blocks and its short-circuit opens ahead. Touched
   * by the stream's thread, and by the {@link StreamCleaner}'s only once the stream is unreachable (or closed): a
   * stream dropped without {@link #close} lets go of its short-circuit read locks at the workers (which would keep
   * blocks from eviction and removal) and its prefetched chunks.
   */
  private static final class Held implements Runnable {
    private final KeptBlocks kept;
    private final ShortCircuitAhead ahead;
    BlockRangeReader reader;

    Held(KeptBlocks kept, ShortCircuitAhead ahead) {
      this.kept = kept;
      this.ahead = ahead;
    }

    @Override
    public void run() {
      if (reader != null) {
        reader.close();
        reader = null;
      }
      kept.closeAll();
      if (ahead != null) {
        ahead.discard();
      }
    }
  }
}