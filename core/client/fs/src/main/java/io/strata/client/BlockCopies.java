package io.strata.client;

import io.strata.client.options.ReadType;
import io.strata.common.exception.CorruptBlockException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The copies of a file's blocks that one {@link FileInStream} reads from: which copy a read of a block opens, and
 * how (short-circuit from the worker on this host, over the worker's block transfer protocol, or streamed over
 * gRPC), and the copies that failed it.
 *
 * <p>The copy: the nearest worker that holds the block ({@link WorkerSelector#nearest}: this node, then this
 * rack, then any) and has not failed this stream; for a persisted file whose block no such worker holds, a worker
 * that reads it from the under file system ({@link WorkerSelector#ufsReadWorker}), caching it unless the read
 * type is NO_CACHE. When every copy of a block of a file not persisted is on a worker that failed before, those
 * workers are tried again (HDFS does the same with its dead nodes).
 *
 * <p>Failover ({@link #failedAttempt}): a read that fails because of its copy ({@link BlockRetry#isCopyFailure})
 * leaves that worker out for the rest of the stream, then backs off within the read's {@link BlockRetry}; a copy
 * that fails its checksum ({@link CorruptBlockException}) is reported to the master, and only that block's copy
 * on that worker is left out. After the last retry, or when no copy is left, the error names the file, the
 * position, the block and every worker tried with its failure.
 *
 * <p>Not thread-safe: its stream's one reader.
 */
final class BlockCopies {
  private static final Logger LOG = LoggerFactory.getLogger(BlockCopies.class);

  private final FileSystemContext context;
  private final WorkerSelector selector;
  private final URIStatus file;
  private final ReadType readType;
  /** The next block's short-circuit open, started while a sequential read is on this one; null when off. */
  private final ShortCircuitAhead ahead;
  /** Workers a read of this stream failed on (not for a corrupt copy), each with its last failure. */
  private final Map<WorkerAddress, String> failedWorkers = new LinkedHashMap<>();
  /** Blocks with a copy found corrupt by this stream: the last finding, and the workers of those copies. */
  private final Map<Long, CorruptBlockException> corrupt = new HashMap<>();
  private final Map<Long, Set<WorkerAddress>> corruptOn = new HashMap<>();
  /** Workers whose block transfer service this stream could not reach (it streams from them over gRPC). */
  private final Set<WorkerAddress> transferFallbacks = new HashSet<>();

  BlockCopies(FileSystemContext context, WorkerSelector selector, URIStatus file, ReadType readType,
      ShortCircuitAhead ahead) {
    this.context = context;
    this.selector = selector;
    this.file = file;
    this.readType = readType;
    this.ahead = ahead;
  }

  /** Workers this stream stopped reading from after a failure. */
  Set<WorkerAddress> failedWorkers() {
    return Set.copyOf(failedWorkers.keySet());
  }

  /** The nearest worker with a copy of {@code block} not failed yet, or null. */
  WorkerAddress nearest(FileBlockInfo block) throws IOException {
    return selector.nearest(block.locations(), skipFor(block));
  }

  /**
   * While a block is read, the next one's short-circuit open (its round trips to the worker) goes on in the
   * background ({@link ShortCircuitAhead}), when its nearest copy is on this host.
   */
  void openAhead(FileBlockInfo next) throws IOException {
    WorkerAddress w = nearest(next);
    if (w != null && context.onThisHost(w)) {
      ahead.start(w, next.blockId(), readType == ReadType.CACHE_PROMOTE, inlineMax(next));
    }
  }

  /**
   * A read from {@code failed} threw {@code e}: when it is a failure of that copy, the worker is left out for
   * the rest of this stream and, if retries and time are left, this returns after a backoff (the caller
   * tries the next copy, or the under file system); otherwise throws the final error.
   */
  void failedAttempt(BlockRetry r, BlockRangeReader failed, FileBlockInfo block, long position,
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

  /**
   * Opens a reader of the range on the nearest copy not failed yet. An open that fails as a copy failure (the
   * worker lost the block since the master listed it, cannot be reached, its copy is corrupt) is handled as a
   * failed read: that worker is left out, and after the backoff the next copy (then the under file system) is
   * opened, within the block's retries. A failure with no copy left to try is final: it names everything tried.
   */
  BlockRangeReader openOrFail(FileBlockInfo block, long offset, long length, BlockRetry r, long position)
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
}
