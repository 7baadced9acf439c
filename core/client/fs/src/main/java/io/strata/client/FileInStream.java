package io.strata.client;

import io.grpc.stub.StreamObserver;
import io.strata.client.options.ReadType;
import io.strata.common.exception.CorruptBlockException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.OutOfRangeException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.CacheBlockRequest;
import io.strata.proto.CacheBlockResponse;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a complete file: sequentially (one block stream at a time, opened at the current position),
 * with {@link #seek}, and with positioned reads that leave the position alone.
 *
 * <p>Where each block is read: from the nearest worker that holds it ({@link WorkerSelector#nearest}: this
 * node, then this rack, then any). A block of a persisted file that no reachable worker holds is
 * read through a worker from the under file system ({@link WorkerSelector#ufsReadWorker}); that worker
 * caches it unless the read type is NO_CACHE. Reads of a persisted file always allow the under file system
 * fallback, so a block evicted since the file was opened is still read. A block of a file that is not
 * persisted and is on no reachable worker fails with UNAVAILABLE.
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
 * <p>Passive caching (when enabled and the read type is not NO_CACHE): once a block has been read from a
 * worker on another host, a worker on this host, if any, is asked to cache it (CacheBlock, fire and
 * forget), once per block per stream.
 *
 * <p>Local page cache ({@code strata.user.client.cache.enabled}): reads are served by a {@link PagedReader} over
 * the context's {@link LocalPageCache}, which reads missing pages through a second stream of this class
 * without the cache.
 *
 * <p>Not thread-safe: one reader.
 */
public final class FileInStream extends InputStream {
  private static final Logger LOG = LoggerFactory.getLogger(FileInStream.class);

  private final FileSystemContext context;
  private final WorkerSelector selector;
  private final ReadType readType;
  private final boolean passiveCache;
  private final Set<Long> cacheRequested = new HashSet<>();
  private final URIStatus file;
  private final List<FileBlockInfo> blocks;
  /** Workers a read of this stream failed on (not for a corrupt copy), each with its last failure. */
  private final java.util.Map<WorkerAddress, String> failedWorkers = new java.util.LinkedHashMap<>();
  /** Blocks with a copy found corrupt by this stream: the last finding, and the workers of those copies. */
  private final java.util.Map<Long, CorruptBlockException> corrupt = new java.util.HashMap<>();
  private final java.util.Map<Long, Set<WorkerAddress>> corruptOn = new java.util.HashMap<>();
  private final BlockRetry.Policy retryPolicy;
  /** Retries of the block the sequential reader is on ({@link #retryBlock}), or null before any failure. */
  private BlockRetry retry;
  private long retryBlock = -1;
  private long pos;
  private BlockRangeReader reader;
  /** Workers whose block transfer service this stream could not reach (it streams from them over gRPC). */
  private final Set<WorkerAddress> transferFallbacks = new HashSet<>();
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
    this.selector = selector;
    this.file = file;
    this.readType = readType;
    this.passiveCache = readType != ReadType.NO_CACHE && context.conf().get(ClientKeys.PASSIVE_CACHE_ENABLED);
    this.blocks = file.blocks();
    this.retryPolicy = BlockRetry.Policy.reads(context.conf());
    this.kept = new KeptBlocks(context, readType == ReadType.CACHE_PROMOTE);
    this.ahead = context.conf().get(ClientKeys.SHORT_CIRCUIT_OPEN_AHEAD)
        ? new ShortCircuitAhead(context.shortCircuit(), context.background(),
            context.conf().get(ClientKeys.SHORT_CIRCUIT_CHECKSUM_VERIFY)) : null;
  }

  /** Workers this stream stopped reading from after a failure (the next copy or the UFS served instead). */
  public Set<WorkerAddress> failedWorkers() {
    if (paged != null) {
      return paged.raw().failedWorkers();
    }
    return Set.copyOf(failedWorkers.keySet());
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
      if (reader == null) {
        openReaderAt(pos);
      }
      try {
        int n = reader.read(b, off, (int) Math.min(len, readerEnd - pos));
        if (n < 0) {
          reader.close();
          reader = null;
          continue;
        }
        pos += n;
        if (pos == readerEnd) {
          reader.close();
          blockRead(readerBlock, reader.worker());
          reader = null;
          retry = null;
        }
        return n;
      } catch (IOException e) {
        BlockRangeReader failed = reader;
        reader = null;
        failed.close();
        // Nothing of this call was delivered: the next attempt opens the block again at pos, exactly.
        failedAttempt(retryOf(readerBlock), failed, readerBlock, pos, e);
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

  /**
   * A read from {@code failed} threw {@code e}: when it is a failure of that copy, the worker is left out for
   * the rest of this stream and, if retries and time are left, this returns after a backoff (the caller
   * tries the next copy, or the under file system); otherwise throws the final error.
   */
  private void failedAttempt(BlockRetry r, BlockRangeReader failed, FileBlockInfo block, long position,
      IOException e) throws IOException {
    failedAttempt(r, failed.worker(), failed.source(), block, position, e);
  }

  private void failedAttempt(BlockRetry r, WorkerAddress worker, String source, FileBlockInfo block,
      long position, IOException e) throws IOException {
    if (!BlockRetry.isCopyFailure(e)) {
      if (r.failures().isEmpty()) {
        throw e;
      }
      throw r.finalError(describe(block, position), e);
    }
    if (!corruptCopy(e, block.blockId(), worker)) {
      failedWorkers.put(worker, BlockRetry.describe(e));
    }
    LOG.info("Reading block {} of {} at position {} from {} failed ({}); trying another copy", block.blockId(),
        file.path(), position, source, e.getMessage());
    if (!r.retryAfter(source, e)) {
      throw r.finalError(describe(block, position), e);
    }
  }

  private String describe(FileBlockInfo block, long position) {
    return "Reading " + file.path() + " at position " + position + " (block " + block.blockId() + ", bytes "
        + block.offset() + ".." + (block.offset() + block.length()) + ")";
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
    reader = openOrFail(block, inBlock, len, retryOf(block), position);
    readerBlock = block;
    readerEnd = position + len;
    int next = (int) (position / file.blockSize()) + 1;
    if (ahead != null && reader instanceof ShortCircuitBlockReader && next < blocks.size()) {
      // While this block is read, the next one's open (its round trips to the worker) goes on in the background.
      FileBlockInfo nextBlock = blocks.get(next);
      WorkerAddress w = selector.nearest(nextBlock.locations(), skipFor(nextBlock));
      if (w != null && context.onThisHost(w)) {
        ahead.start(w, nextBlock.blockId(), readType == ReadType.CACHE_PROMOTE, inlineMax(nextBlock));
      }
    }
  }

  /**
   * Opens a reader of the range on the nearest copy not failed yet. An open that fails as a copy failure (the
   * worker lost the block since the master listed it, cannot be reached, its copy is corrupt) is handled as a
   * failed read: that worker is left out, and after the backoff the next copy (then the under file system) is
   * opened, within the block's retries. A failure with no copy left to try is final: it names everything tried.
   */
  private BlockRangeReader openOrFail(FileBlockInfo block, long offset, long length, BlockRetry r, long position)
      throws IOException {
    while (true) {
      WorkerAddress[] tried = new WorkerAddress[1];
      try {
        return open(block, offset, length, tried);
      } catch (IOException e) {
        if (tried[0] == null || !BlockRetry.isCopyFailure(e)) {
          if (r.failures().isEmpty()) {
            throw e;
          }
          throw r.finalError(describe(block, position), e);
        }
        failedAttempt(r, tried[0], "worker " + tried[0] + " (open)", block, position, e);
      }
    }
  }

  /** A worker that failed is skipped for every block; one whose copy was corrupt only for that block. */
  private Set<WorkerAddress> skipFor(FileBlockInfo block) {
    if (!corruptOn.containsKey(block.blockId())) {
      return failedWorkers.keySet();
    }
    Set<WorkerAddress> skip = new HashSet<>(failedWorkers.keySet());
    skip.addAll(corruptOn.get(block.blockId()));
    return skip;
  }

  /** Opens the range on the copy chosen now; {@code tried[0]} is set to that copy's worker before it is asked. */
  private BlockRangeReader open(FileBlockInfo block, long offset, long length, WorkerAddress[] tried)
      throws IOException {
    Set<WorkerAddress> skip = skipFor(block);
    WorkerAddress chosen = selector.nearest(block.locations(), skip);
    boolean persisted = file.isPersisted();
    if (chosen == null && !persisted && !failedWorkers.isEmpty()) {
      // Every listed copy is on a worker that failed earlier in this stream, and the under file system holds
      // no copy: as HDFS does with its dead nodes, those workers get another try (a worker restarted, a
      // connection reset, a deadline missed under load), after the backoff. The block's retries bound it.
      chosen = selector.nearest(block.locations(), corruptOn.getOrDefault(block.blockId(), Set.of()));
      if (chosen != null) {
        LOG.info("Every copy of block {} of {} is on a worker that failed earlier; trying {} again", block.blockId(),
            file.path(), chosen);
      }
    }
    boolean unlisted = chosen == null;
    if (chosen == null) {
      CorruptBlockException bad = corrupt.get(block.blockId());
      if (!persisted && bad != null) {
        throw new io.strata.common.exception.DataLossException("Block " + block.blockId() + " of " + file.path()
            + " is lost: its copy on worker " + bad.worker() + " is corrupt at offset " + bad.offset() + ", no other "
            + "worker holds it (failed: " + skip + ") and the file is not in the under file system "
            + "(persistence state " + file.persistenceState() + ")", bad);
      }
      if (!persisted) {
        throw new UnavailableException("Block " + block.blockId() + " of " + file.path()
            + " is on no reachable worker (locations: " + block.locations().size() + ", failed: "
            + failedWorkers + ", corrupt: " + corruptOn.getOrDefault(block.blockId(), Set.of())
            + ") and the file is not in the under file system (persistence state "
            + file.persistenceState() + "), so no copy is left to try");
      }
      chosen = ufsReader(block, skip);
    }
    boolean ufsOnly = unlisted && corruptOn.getOrDefault(block.blockId(), Set.of()).contains(chosen);
    tried[0] = chosen;
    // Short-circuit needs the worker's domain socket on this machine: the host names decide, not the
    // configured node (which may be wrong, and a socket path is derived from a port any worker may share).
    if (!unlisted && context.onThisHost(chosen)) {
      BlockRangeReader sc = shortCircuit(chosen, block, offset, length);
      if (sc != null) {
        return sc;
      }
    }
    if (!unlisted && chosen.transferPort() > 0) {
      BlockRangeReader t = transfer(chosen, block, offset, length, persisted);
      if (t != null) {
        return t;
      }
    }
    return new BlockReader(context, chosen, block.blockId(), offset, length,
        readType == ReadType.CACHE_PROMOTE, persisted, readType == ReadType.NO_CACHE, unlisted, ufsOnly);
  }

  /**
   * The worker to read a block of a persisted file from the under file system: one not skipped, else, when
   * only workers whose copy of it this stream found corrupt are left, one of those (it reads the under file
   * system's copy, not its own: {@code ufs_only}).
   */
  private WorkerAddress ufsReader(FileBlockInfo block, Set<WorkerAddress> skip) throws IOException {
    try {
      return selector.ufsReadWorker(block.blockId(), skip);
    } catch (UnavailableException e) {
      if (!corruptOn.containsKey(block.blockId())) {
        throw e;
      }
      WorkerAddress w = selector.ufsReadWorker(block.blockId(), failedWorkers.keySet());
      LOG.info("Only workers with a corrupt copy of block {} of {} are left; {} reads it from the under file "
          + "system instead of its copy", block.blockId(), file.path(), w);
      return w;
    }
  }

  /**
   * The block read over the worker's block transfer protocol, or null to stream it over gRPC: transfers are
   * off, the worker's transfer service cannot be reached (logged once per worker), or the worker no longer
   * holds a block of a persisted file (the data service then reads it from the under file system).
   */
  private BlockRangeReader transfer(WorkerAddress worker, FileBlockInfo block, long offset, long length,
      boolean persisted) throws IOException {
    io.strata.client.transfer.TransferClient client = context.transfer();
    if (client == null) {
      return null;
    }
    try {
      return new TransferBlockReader(context, client, worker, block.blockId(), offset, length,
          readType == ReadType.CACHE_PROMOTE);
    } catch (io.strata.client.transfer.TransferClient.NotReached e) {
      if (transferFallbacks.add(worker)) {
        LOG.info("Block transfers from worker {} are not possible ({}); streaming over gRPC", worker, e.getMessage());
      }
      return null;
    } catch (io.strata.common.exception.NotFoundException e) {
      if (persisted) {
        return null;
      }
      throw e;
    }
  }

  /**
   * What a short-circuit open of the block asks to have inline: a small block comes in the open's answer (one
   * round trip, nothing left open at the worker; {@link ClientKeys#SHORT_CIRCUIT_READ_INLINE_MAX}).
   */
  private int inlineMax(FileBlockInfo block) {
    return inlineMax(context, block);
  }

  static int inlineMax(FileSystemContext context, FileBlockInfo block) {
    int max = context.shortCircuitInlineMax();
    return block.length() <= max ? max : 0;
  }

  /** The block read short-circuit from the worker on this host, or null to stream it (reason logged once). */
  private BlockRangeReader shortCircuit(WorkerAddress worker, FileBlockInfo block, long offset, long length) {
    io.strata.client.shortcircuit.ShortCircuitClient sc = context.shortCircuit();
    io.strata.client.shortcircuit.ShortCircuitClient.OpenBlock opened =
        ahead == null ? null : ahead.take(worker, block.blockId());
    if (opened == null) {
      opened = sc.open(worker, block.blockId(), readType == ReadType.CACHE_PROMOTE, inlineMax(block));
    }
    if (opened == null) {
      return null;
    }
    if (opened.length() < offset + length) {
      LOG.warn("Worker {} holds {} bytes of block {}, fewer than the {} the master lists; streaming instead",
          worker, opened.length(), block.blockId(), offset + length);
      opened.close();
      return null;
    }
    try {
      return new ShortCircuitBlockReader(opened, worker, offset, length,
          context.conf().get(ClientKeys.SHORT_CIRCUIT_CHECKSUM_VERIFY));
    } catch (IOException e) {
      // No checksums to be had over the socket: the data port gives the answer (and a corrupt copy's error).
      LOG.debug("Short-circuit checksums of block {} on {} unavailable; streaming instead", block.blockId(), worker, e);
      opened.close();
      return null;
    }
  }

  /**
   * A copy that failed its checksum: the master hears of it (best effort), and this stream skips that copy
   * of the block from now on. False when {@code failure} is no checksum failure.
   */
  private boolean corruptCopy(IOException failure, long blockId, WorkerAddress worker) {
    if (!(failure instanceof CorruptBlockException)) {
      return false;
    }
    CorruptBlockException e = (CorruptBlockException) failure;
    corrupt.put(blockId, e);
    corruptOn.computeIfAbsent(blockId, id -> new HashSet<>()).add(worker);
    LOG.warn("{}; reading it from another copy", e.getMessage());
    try {
      context.callMaster(m -> m.reportCorruptBlock(io.strata.proto.ReportCorruptBlockRequest.newBuilder()
          .setBlockId(e.blockId()).setWorker(io.strata.proto.WorkerAddressProto.newBuilder().setHost(worker.host())
              .setRpcPort(worker.rpcPort())).setOffset(e.offset()).setReason(e.getMessage()).build()));
    } catch (io.strata.common.exception.StrataException | RuntimeException re) {
      LOG.warn("Cannot report the corrupt copy of block {} on {} to the master: {}", e.blockId(), worker,
          re.toString());
    }
    return true;
  }

  /** Passive caching: a block read from another host is cached on this host's worker too. */
  private void blockRead(FileBlockInfo block, WorkerAddress from) {
    if (!passiveCache || selector.isLocal(from) || !cacheRequested.add(block.blockId())) {
      return;
    }
    WorkerAddress local;
    try {
      local = selector.localWorker(block.blockId());
    } catch (IOException e) {
      LOG.debug("Passive caching of block {} skipped: no worker list", block.blockId(), e);
      return;
    }
    if (local == null) {
      return;
    }
    try {
      context.worker(local).cacheBlock(CacheBlockRequest.newBuilder().setBlockId(block.blockId()).build(),
          new StreamObserver<CacheBlockResponse>() {
            @Override
            public void onNext(CacheBlockResponse value) {
              if (!value.getAccepted()) {
                LOG.debug("Worker {} declined to cache block {} (its queue is full)", local, block.blockId());
              }
            }

            @Override
            public void onError(Throwable t) {
              LOG.debug("Passive caching of block {} on worker {} failed", block.blockId(), local, t);
            }

            @Override
            public void onCompleted() {}
          });
    } catch (RuntimeException e) {
      LOG.debug("Passive caching of block {} on worker {} failed", block.blockId(), local, e);
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
    if (reader != null) {
      reader.close();
      reader = null;
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
        BlockRangeReader reading = keptRange != null ? keptRange : openOrFail(block, inBlock, n, r, p);
        try (reading) {
          // A retry reads the whole range again into the same bytes of b: nothing is skipped or doubled.
          reading.readFully(b, off + done, n);
          if (inBlock + n == block.length()) {
            blockRead(block, reading.worker());
          }
          break;
        } catch (IOException e) {
          dropKept(block.blockId()); // the retry chooses its copy afresh
          failedAttempt(r, reading, block, p, e);
        }
      }
      done += n;
    }
    return total;
  }

  /** The range from the block kept open for positioned reads, or null to read it the usual way. */
  private BlockRangeReader keptReader(FileBlockInfo block, long offset, long length) throws IOException {
    return kept.reader(block, offset, length, () -> selector.nearest(block.locations(), skipFor(block)));
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
      paged.raw().unbuffer();
    }
    if (reader != null) {
      reader.close();
      reader = null;
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
  }
}
