package io.strata.worker.store;

import io.strata.common.exception.InternalException;
import io.strata.common.id.BlockId;
import io.strata.worker.store.BlockStore.BlockMeta;
import io.strata.worker.store.BlockStore.TempBlock;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends temp blocks: {@link #commit} makes one a committed block (fsynced where its tier asks, renamed into
 * {@code blocks/}, its name fsynced, then indexed and protected), {@link #abort} drops one and returns its
 * reservation; the temp-block reaper finds the abandoned ones ({@link #idleTemps}) and the master's lease
 * recovery the ones of recovered files ({@link #abortWritesOf}).
 *
 * <p>Thread-safe; commit and abort of one temp block race safely (the first to close it wins). The store's
 * monitor ({@link BlockIndex#lock}) is taken for the index and accounting steps only, never across the
 * fsync, the rename or the deletion.
 */
final class Commits {
  private static final Logger LOG = LoggerFactory.getLogger(Commits.class);

  private final BlockIndex index;
  private final DirFailures failures;
  private final BlockAnnotator annotator;
  private final Durability durability;
  private final Clock clock;

  Commits(BlockIndex index, DirFailures failures, BlockAnnotator annotator, Durability durability, Clock clock) {
    this.index = index;
    this.failures = failures;
    this.annotator = annotator;
    this.durability = durability;
    this.clock = clock;
  }

  BlockMeta commit(TempBlock temp) throws IOException {
    Temp t = (Temp) temp;
    synchronized (index.lock) {
      if (t.closed) {
        throw new IllegalStateException(t.abortedBecause != null ? t.abortedMessage()
            : "Temp block " + t.blockId + " is already committed or aborted (its dir failed, or it was idle past "
            + "strata.worker.temp.block.timeout)");
      }
      t.closed = true;
    }
    Path tmpSidecar = ChecksumSidecar.of(t.path);
    try {
      // Durable before it has a committed name, and the name durable before the master hears of it: a
      // crash leaves either no block or a whole one. The checksum sidecar gets its name first, so a block
      // file never lacks one.
      try (FileChannel ch = t.channel) {
        if (t.dir.fsync) {
          durability.syncFile(ch);
        }
      }
      ChecksumSidecar.write(tmpSidecar, t.length, t.finishedChecksums(), t.dir.fsync ? durability : null);
      Files.move(tmpSidecar, t.dir.sidecarPath(t.blockId), StandardCopyOption.ATOMIC_MOVE);
      Files.move(t.path, t.dir.blockPath(t.blockId), StandardCopyOption.ATOMIC_MOVE);
      if (t.dir.fsync) {
        durability.syncDir(t.dir.blocksDir);
      }
    } catch (IOException e) {
      boolean ours;
      synchronized (index.lock) {
        // Only this write's claim: a failed dir let go of it already, and a retry may hold the id now. Ours, it
        // becomes a plain claim (a null entry) until the block's own names are unlinked, outside this monitor: an
        // unlink on the failing disk may hang, and must not hold every other dir's reads, writes and removals. Claimed,
        // no retry's block can be committed at the same path before the unlink.
        ours = index.writing.get(t.blockId) == t;
        if (ours) {
          index.writing.put(t.blockId, null);
        }
        if (t.dir.isGood()) {
          t.dir.used -= t.reserved; // a failed dir's accounting was cleared with it
        }
      }
      if (ours) {
        try {
          durability.unlink(t.dir.blockPath(t.blockId));
          durability.unlink(t.dir.sidecarPath(t.blockId));
        } catch (IOException ignored) {
          // the dir is failing, or the probe below will keep it
        } finally {
          synchronized (index.lock) {
            index.writing.remove(t.blockId, null);
          }
        }
      }
      index.space.changed();
      try {
        Files.deleteIfExists(t.path); // this write's own temp names
        Files.deleteIfExists(tmpSidecar);
      } catch (IOException ignored) {
        // tmp/ is emptied at start
      }
      if (!failures.dirFailed(t.dir, e)) {
        throw DirProbe.transientError("Committing block " + t.blockId, t.dir, e);
      }
      throw new InternalException("Committing block " + t.blockId + " failed: storage dir " + t.dir.root
          + " failed (" + e + ")", e);
    }
    synchronized (index.lock) {
      index.writing.remove(t.blockId, t);
      if (!t.dir.isGood()) {
        throw new InternalException("Storage dir " + t.dir.root + " failed while block " + t.blockId
            + " was committed");
      }
      index.committed.put(t.blockId, t.dir);
      t.dir.blocks.put(t.blockId, t.length);
      t.dir.used -= t.reserved - t.length; // the unused part of a whole-block reservation goes back
      index.evictable.remove(t.blockId); // a new copy is protected until the master says its file is persisted
    }
    index.space.changed();
    index.counters.written(t.dir.tierOrdinal, t.length);
    annotator.onAccess(t.blockId);
    return new BlockMeta(t.blockId, t.length, t.dir.tierAlias);
  }

  void abort(TempBlock temp) {
    abort((Temp) temp, null);
  }

  /** Aborts {@code t}; {@code why} (null: its own writer asked) is what its writer is told at its next call. */
  void abort(Temp t, String why) {
    synchronized (index.lock) {
      if (t.closed) {
        return;
      }
      if (why != null) {
        t.abortedBecause = why;
      }
      t.closed = true;
      index.writing.remove(t.blockId, t);
      if (t.dir.isGood()) {
        t.dir.used -= t.reserved;
      }
    }
    index.space.changed();
    try {
      t.channel.close();
      Files.deleteIfExists(t.path);
    } catch (IOException e) {
      LOG.warn("Cannot remove temp block {}: {}", t.path, e.toString());
    }
  }

  /** Aborts the blocks being written of these files (the master recovered them: their writers lost their leases). */
  void abortWritesOf(Collection<Long> fileIds) {
    Set<Long> files = new HashSet<>(fileIds);
    List<Temp> doomed = new ArrayList<>();
    synchronized (index.lock) {
      for (Temp t : index.writing.values()) {
        if (t != null && !t.closed && files.contains(BlockId.fileId(t.blockId))) {
          doomed.add(t);
        }
      }
    }
    for (Temp t : doomed) {
      LOG.info("Temp block {}: the master says its file ended (recovered as its writer lost its lease, complete, or "
          + "never created); removing it", t.blockId);
      abort(t, "the master says its file " + BlockId.fileId(t.blockId) + " ended: recovered as its writer lost its "
          + "lease, complete, or never created");
    }
  }

  /** The files of the held temp blocks ({@link TempBlock#hold}): those the master's held-files check asks about. */
  Set<Long> heldFileIds() {
    Set<Long> out = new HashSet<>();
    synchronized (index.lock) {
      for (Temp t : index.writing.values()) {
        if (t != null && !t.closed && t.held) {
          out.add(BlockId.fileId(t.blockId));
        }
      }
    }
    return out;
  }

  /**
   * Temp blocks idle for longer than {@code idleMs}: their writers died without closing. Held blocks
   * ({@link TempBlock#hold}) are never among them: their owner's liveness is its file's lease.
   */
  List<Temp> idleTemps(long idleMs) {
    synchronized (index.lock) {
      long now = clock.millis();
      List<Temp> out = new ArrayList<>();
      for (Temp t : index.writing.values()) {
        if (t != null && !t.closed && !t.held && now - t.lastAppendMs > idleMs) {
          out.add(t);
        }
      }
      return out;
    }
  }
}
