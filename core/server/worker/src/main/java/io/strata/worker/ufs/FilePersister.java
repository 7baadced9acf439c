package io.strata.worker.ufs;

import io.strata.common.exception.DataLossException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.server.ufs.UfsManager;
import io.strata.server.ufs.UnderFileSystem;
import io.strata.worker.store.BlockStore;
import io.strata.worker.ufs.MasterClient.BlockInfo;
import io.strata.worker.ufs.MasterClient.Location;
import io.strata.worker.ufs.MasterClient.PersistCommand;
import io.strata.worker.ufs.MasterClient.PersistResult;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the master's persist commands: writes a complete file's blocks, in order, to the under file
 * system file the master names (a temporary name it renames into place on success). Each block is read
 * from the local store when it is here, else from a worker the master listed for it (the next one is
 * tried only while nothing of the block was written). On success the result is ok with the bytes
 * written; on any failure the partial UFS file is deleted and the result carries the error.
 *
 * <p>Results wait here until a heartbeat carrying them succeeds ({@link #results()} then
 * {@link #acknowledge}). A command for a file queued or being persisted here, or whose result is not delivered
 * yet, is dropped (counted): the master re-sends a command it had no answer to within its persist timeout, and
 * places the copy of the one in hand when its result comes. The executor's queue is bounded (the worker's
 * strata.worker.persist.queue.max): a command it refuses gets a failed result at once, delivered in the next
 * heartbeat, so the master retries it after its retry interval rather than a persist timeout later, and commands
 * sent again after master-side timeouts never pile up here.
 *
 * <p>Thread-safe: {@link #submit} from the heartbeat thread returns at once; persisting runs on the
 * injected persist executor. The active set and the results are guarded by this object's monitor.
 */
final class FilePersister {
  private static final Logger LOG = LoggerFactory.getLogger(FilePersister.class);
  private static final int BUFFER = 1 << 20;

  private final BlockStore store;
  private final MasterClient master;
  private final UfsManager ufs;
  private final PeerClient peers;
  private final Executor executor;
  private final Set<Long> active = new HashSet<>();
  private final Map<Long, PersistResult> results = new LinkedHashMap<>();
  /** Bytes of the files persisted, and persists that failed, so far (the worker's metrics). */
  final java.util.concurrent.atomic.LongAdder persistedBytes = new java.util.concurrent.atomic.LongAdder();
  final java.util.concurrent.atomic.LongAdder failures = new java.util.concurrent.atomic.LongAdder();
  /** Commands refused for a full queue, and commands dropped for a file already in hand, so far. */
  final java.util.concurrent.atomic.LongAdder refused = new java.util.concurrent.atomic.LongAdder();
  final java.util.concurrent.atomic.LongAdder duplicates = new java.util.concurrent.atomic.LongAdder();
  /** Told when a result is ready to go to the master (so it goes in a heartbeat now, not at the next one). */
  volatile Runnable onResult = () -> { };

  FilePersister(BlockStore store, MasterClient master, UfsManager ufs, PeerClient peers, Executor executor) {
    this.store = store;
    this.master = master;
    this.ufs = ufs;
    this.peers = peers;
    this.executor = executor;
  }

  /**
   * Starts persisting {@code cmd}'s file; false when it is dropped (already in hand), refused (the executor's queue
   * is full: a failed result goes to the master) or the worker is stopping.
   */
  boolean submit(PersistCommand cmd) {
    long fileId = cmd.fileId();
    synchronized (this) {
      if (active.contains(fileId) || results.containsKey(fileId)) {
        duplicates.increment();
        return false;
      }
      active.add(fileId);
      try {
        executor.execute(() -> {
          PersistResult r = persist(cmd);
          synchronized (this) {
            active.remove(fileId);
            results.put(fileId, r);
          }
          onResult.run();
        });
        return true;
      } catch (RejectedExecutionException e) {
        active.remove(fileId);
        if (executor instanceof java.util.concurrent.ExecutorService es && es.isShutdown()) {
          return false; // the worker is stopping: the master finds the worker lost and sends the file elsewhere
        }
        refused.increment();
        results.put(fileId, new PersistResult(fileId, false, "Worker " + master.workerId() + " refused to persist "
            + "file " + fileId + ": its persist queue is full (strata.worker.persist.queue.max)", 0,
            cmd.target().uri()));
      }
    }
    LOG.info("Refused to persist file {}: the persist queue is full (strata.worker.persist.queue.max); the master "
        + "sends it again", fileId);
    onResult.run();
    return false;
  }

  /** Results not yet delivered to the master, oldest first. */
  synchronized List<PersistResult> results() {
    return new ArrayList<>(results.values());
  }

  /** Drops results a successful heartbeat delivered. */
  synchronized void acknowledge(Collection<PersistResult> delivered) {
    for (PersistResult r : delivered) {
      results.remove(r.fileId(), r);
    }
  }

  /** Files being persisted now. */
  synchronized int active() {
    return active.size();
  }

  /** Persists {@code cmd}'s file on the calling thread; never throws. */
  PersistResult persist(PersistCommand cmd) {
    String uri = cmd.target().uri();
    UfsManager.Lease lease = null; // held until the stream is closed or abandoned: the client is not closed under it
    UnderFileSystem fs = null;
    OutputStream out = null;
    long written = 0;
    try {
      lease = ufs.acquire(uri, cmd.target().options());
      fs = lease.ufs();
      out = fs.createNonRecursive(uri); // the master made the parent; a delete racing us must win
      byte[] scratch = new byte[BUFFER];
      for (BlockInfo b : cmd.blocks()) {
        copyBlock(cmd.fileId(), b, out, scratch);
        written += b.length();
      }
      out.close();
      out = null;
      persistedBytes.add(written);
      LOG.info("Persisted file {} to {} ({} bytes, {} blocks)", cmd.fileId(), uri, written, cmd.blocks().size());
      return new PersistResult(cmd.fileId(), true, "", written, cmd.target().uri());
    } catch (Throwable t) {
      StrataException e = UfsErrors.wrap("Persisting file " + cmd.fileId() + " to " + uri, t);
      if (out != null) {
        try {
          out.close();
        } catch (IOException | RuntimeException ignored) {
          // deleted next
        }
      }
      if (fs != null) {
        try {
          fs.delete(uri, false);
        } catch (IOException | RuntimeException d) {
          LOG.warn("Cannot delete the partial under file system file {}: {}", uri, d.toString());
        }
      }
      failures.increment();
      LOG.warn("{}", e.getMessage());
      return new PersistResult(cmd.fileId(), false, e.getMessage(), 0, cmd.target().uri());
    } finally {
      if (lease != null) {
        lease.close();
      }
    }
  }

  private void copyBlock(long fileId, BlockInfo b, OutputStream out, byte[] scratch) throws IOException {
    try {
      copyLocal(fileId, b, out, scratch);
      return;
    } catch (NotFoundException e) {
      // Not on this worker: read it from one that has it.
    } catch (io.strata.common.exception.CorruptBlockException e) {
      // The master drops this copy if another or the UFS holds the bytes, so the next attempt is sent to
      // a worker with a good one; told nothing, it would send every attempt here.
      long self = master.workerId();
      for (Location loc : b.locations()) {
        if (loc.workerId() == self) {
          CorruptReports.report(master, b.blockId(), loc.address(), e);
        }
      }
      throw e;
    }
    copyFromPeer(fileId, b, out, scratch);
  }

  private void copyLocal(long fileId, BlockInfo b, OutputStream out, byte[] scratch) throws IOException {
    try (BlockStore.ReadHandle h = store.openForRead(b.blockId(), false)) {
      if (h.meta().length() != b.length()) {
        throw new DataLossException("Block " + b.blockId() + " of file " + fileId + " has " + h.meta().length()
            + " bytes on this worker; the master knows " + b.length());
      }
      FileChannel ch = h.channel();
      // The under file system copy becomes the source of truth: every chunk is checked against the block's
      // stored checksums before the persist can succeed, so a corrupt copy is never persisted.
      int[] stored = h.checksums();
      io.strata.common.checksum.ChunkChecksums.Builder seen = new io.strata.common.checksum.ChunkChecksums.Builder();
      int checked = 0;
      long pos = 0;
      ByteBuffer buf = ByteBuffer.wrap(scratch);
      while (pos < b.length()) {
        buf.clear().limit((int) Math.min(scratch.length, b.length() - pos));
        int r = ch.read(buf, pos);
        if (r < 0) {
          throw new DataLossException("Block " + b.blockId() + " file ended at " + pos + " of " + b.length());
        }
        seen.update(scratch, 0, r);
        checked = checkChunks(b.blockId(), seen, seen.completed(), stored, checked);
        out.write(scratch, 0, r);
        pos += r;
      }
      seen.finish();
      checkChunks(b.blockId(), seen, stored.length, stored, checked);
    }
  }

  private void copyFromPeer(long fileId, BlockInfo b, OutputStream out, byte[] scratch) throws IOException {
    long self = master.workerId();
    StrataException last = null;
    for (Location loc : b.locations()) {
      if (loc.workerId() == self) {
        continue;
      }
      long[] sent = {0};
      try {
        peers.read(loc.address(), b.blockId(), b.length(), chunk -> {
          sent[0] += chunk.remaining();
          write(out, chunk, scratch);
        });
        return;
      } catch (StrataException e) {
        if (e instanceof io.strata.common.exception.CorruptBlockException c) {
          CorruptReports.report(master, b.blockId(), loc.address(), c);
        }
        if (sent[0] > 0) {
          throw e; // part of it is in the file already: no other copy can continue it
        }
        last = e;
      }
    }
    throw new UnavailableException("Block " + b.blockId() + " of file " + fileId + " is not on this worker and "
        + "no other worker could send it" + (last == null ? " (the master listed none)" : ": " + last.getMessage()));
  }

  /** Compares chunks [from, to) read here with the stored checksums; returns {@code to}. */
  private static int checkChunks(long blockId, io.strata.common.checksum.ChunkChecksums.Builder seen, int to,
      int[] stored, int from) throws io.strata.common.exception.CorruptBlockException {
    for (int i = from; i < to; i++) {
      if (i >= stored.length || seen.get(i) != stored[i]) {
        throw new io.strata.common.exception.CorruptBlockException(blockId, "this worker",
            io.strata.common.checksum.ChunkChecksums.chunkStart(i), "its bytes fail their stored checksum; not "
            + "persisting a corrupt copy");
      }
    }
    return to;
  }

  private static void write(OutputStream out, ByteBuffer chunk, byte[] scratch) throws IOException {
    while (chunk.hasRemaining()) {
      int k = Math.min(scratch.length, chunk.remaining());
      chunk.get(scratch, 0, k);
      out.write(scratch, 0, k);
    }
  }
}
