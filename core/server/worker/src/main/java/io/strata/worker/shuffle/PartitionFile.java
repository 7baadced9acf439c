package io.strata.worker.shuffle;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.shuffle.BatchHeader;
import io.strata.worker.rpc.Committer;
import io.strata.worker.store.BlockStore;
import io.strata.worker.ufs.MasterClient;
import io.strata.worker.ufs.UfsOperations;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker's copy of one shuffle partition file: an append-only sequence of batches (a
 * {@link BatchHeader} then its data) kept in the block store as temp blocks of the Strata file the driver
 * created ({@link PartitionBlocks}) (block {@code i} of file {@code fileId} is {@code BlockId.of(fileId, i)}; a batch may straddle
 * two blocks). Blocks land where the store puts new blocks (the top tier with room, evicting or moving
 * others down), like any write. The blocks are held ({@link BlockStore.TempBlock#hold}): a partition idle
 * for longer than {@code strata.worker.temp.block.timeout} between pushes keeps them; they live as long as
 * the driver's lease on the file, and go at seal (committed), drop, or the lease's recovery.
 *
 * <p>Invariants: header and data of a batch are appended under this object's lock, so batches never
 * interleave; an append that fails part-way (no room, a dir failure) marks the copy broken: later appends
 * and the seal fail, the driver uses the other copy (or Spark recomputes the stage). After a seal starts, no
 * append is accepted. The seal's commits and UFS copy run without the lock.
 *
 * <p>The seal, in three steps, so that a seal of many copies commits all their blocks at the master in one call
 * ({@link ShuffleStore#seal}): {@link #sealLocally} stops appends, checks this copy against the primary's seal when
 * it is a replica committing beside it (another length or CRC drops this copy instead) and commits its blocks in the
 * store; the caller commits them at the master (in place of a failed primary: each commit then replaces that
 * primary's copy) and tells {@link #committedAtMaster} the answer; {@link #finish} waits for the seal and writes the
 * file's under file system copy from the blocks. The commit happens once (a later seal gets its result or failure);
 * the write-through once it is asked for.
 *
 * <p>Replicas: a primary appends at the end ({@link #append}) and forwards each batch with the offset it got; a
 * replica appends it at that offset ({@link #appendAt}), so the two copies are alike byte for byte (the replica's
 * is always a prefix of the primary's) and both can be committed as copies of one Strata file's blocks. A gap
 * that will not fill (a forward its primary gave up) freezes the replica's copy at its length (it can still be
 * sealed, in its primary's place); the primary refuses further pushes for the partition ({@link #replicaGap}), so
 * the client revives it elsewhere.
 *
 * <p>Thread-safe.
 */
final class PartitionFile {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionFile.class);
  private final ShuffleStore.PartitionSpec spec;
  private final BlockStore store;
  /** The worker's bound on forwarded batches waiting, shared by its copies. */
  private final ParkingBudget parking;
  /** This copy's bytes: its temp blocks and write-behind buffer. Guarded by this. */
  private final PartitionBlocks bytes;
  private long length;
  private long batches;
  private IOException broken;
  private final java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
  private CompletableFuture<Seal> sealed;
  private CompletableFuture<Void> written;
  /** Whether the seal began committing blocks (at the master too): set once, before the first commit. */
  private volatile boolean commitAttempted;
  /** UFS copies of this copy begun so far (a failed one lets a later seal begin another). Guarded by this. */
  private int writesBegun;
  /** What one parked batch counts against the parking budget besides its data (see {@code Parked.held}). */
  static final long PARKED_OVERHEAD = 512;
  /** A forwarded batch that came before the ones before it, with what waits for it to be appended. */
  private record Parked(BatchHeader header, ByteBuffer data, CompletableFuture<Void> applied) {
    /**
     * What a parked batch costs the heap besides its bytes (the request's proto, this record, the header, the buffer,
     * the future and the tree's entry): counted against the parking budget, or a stream of empty batches would hold
     * many times the budget.
     */
    static final long OVERHEAD = PARKED_OVERHEAD;

    /** Its size in the file. */
    long bytes() {
      return (long) BatchHeader.BYTES + data.remaining();
    }

    /** What it holds of the parking budget. */
    long held() {
      return OVERHEAD + data.remaining();
    }
  }
  /** On a replica: forwarded batches waiting for the ones before them, by offset. Guarded by this. */
  private final java.util.TreeMap<Long, Parked> parked = new java.util.TreeMap<>();
  /** On a replica: why this copy takes no more batches though it can still be sealed (a gap), or null. */
  private FailedPreconditionException frozen;
  /** On a primary: why the replica's copy has a gap, or null. */
  private volatile String replicaGap;

  PartitionFile(ShuffleStore.PartitionSpec spec, BlockStore store, AppendBuffers buffers, ParkingBudget parking) {
    this.spec = spec;
    this.store = store;
    this.parking = parking;
    this.bytes = new PartitionBlocks(spec, store, buffers, describe());
  }

  ShuffleStore.PartitionSpec spec() {
    return spec;
  }

  /**
   * Appends one batch atomically (header then data, nothing in between) at the end; returns where its header
   * begins (how the batch is forwarded to the replica).
   */
  synchronized long append(BatchHeader header, ByteBuffer data) throws IOException {
    checkOpen();
    long at = length;
    appendNow(header, data);
    return at;
  }

  /**
   * On a replica: appends a forwarded batch at {@code offset}, where its primary appended it, so this copy holds
   * the primary's bytes whatever order forwards arrive in (every byte here is at the primary's place: this copy
   * is always a prefix of the primary's). A batch that arrives before those before it waits (parked, holding its
   * bytes) until they are appended. The future completes when the batch is appended; it fails when this copy
   * breaks, is sealed or dropped before that. A second batch at a place already taken breaks this copy (it can
   * no longer be the primary's), as does an append that fails part-way.
   */
  CompletableFuture<Void> appendAt(long offset, BatchHeader header, ByteBuffer data) {
    List<Parked> applied = new ArrayList<>();
    List<Parked> failed = List.of();
    CompletableFuture<Void> mine;
    IOException error = null;
    synchronized (this) {
      try {
        checkOpen();
        if (offset < length || parked.containsKey(offset)) {
          throw breakCopy(new FailedPreconditionException(describe() + " already holds bytes at offset " + offset
              + " (" + length + " appended): a second forwarded batch for that place breaks this copy"));
        }
        if (offset > length) {
          Parked p = new Parked(header, data, new CompletableFuture<>());
          checkParkable(offset, p.bytes());
          if (!parking.tryTake(p.held())) {
            // Frozen, not broken: what is here is still a prefix of the primary's copy, fit to be sealed.
            frozen = new FailedPreconditionException(describe() + " got a forwarded batch for offset " + offset
                + " while this worker already holds " + parking.held() + " bytes of forwarded batches waiting for "
                + "the ones before them (at most " + parking.totalMax() + ", strata.worker.shuffle.replica.parked.max); "
                + "it takes no more batches");
            throw frozen;
          }
          parked.put(offset, p);
          return p.applied();
        }
        appendNow(header, data);
        mine = CompletableFuture.completedFuture(null);
        while (!parked.isEmpty() && parked.firstKey() <= length) {
          if (parked.firstKey() < length) {
            throw breakCopy(new FailedPreconditionException(describe() + " has a forwarded batch at offset "
                + parked.firstKey() + ", inside the batch before it (" + length + " appended): not its primary's"));
          }
          Parked next = parked.firstEntry().getValue();
          appendNow(next.header(), next.data()); // on failure it stays parked and fails below with the rest
          parked.pollFirstEntry();
          parking.release(next.held());
          applied.add(next);
        }
      } catch (IOException e) {
        error = e;
        mine = CompletableFuture.failedFuture(e);
        failed = takeParked();
      }
    }
    for (Parked p : applied) {
      p.applied().complete(null);
    }
    fail(failed, error);
    return mine;
  }

  /**
   * A forwarded batch of {@code bytes} (header included) for {@code offset}, past this copy's end, may wait here only
   * within {@code maxAhead} bytes of that end and beside the batches already waiting, never over one: its primary
   * has at most its own buffered bytes in flight, and overlapping places are no primary's. So what waits here is
   * bounded by {@code maxAhead} whatever a client sends. Call with the monitor held.
   */
  private void checkParkable(long offset, long bytes) throws IOException {
    long maxAhead = parking.aheadMax();
    if (offset - length > maxAhead - bytes) {
      throw breakCopy(new FailedPreconditionException(describe() + " got a forwarded batch for offset " + offset
          + ", " + (offset - length) + " bytes past its end (" + length + "): a primary forwards at most " + maxAhead
          + " bytes ahead (twice strata.worker.shuffle.buffer.high.watermark or a message's size)"));
    }
    java.util.Map.Entry<Long, Parked> before = parked.floorEntry(offset);
    java.util.Map.Entry<Long, Parked> after = parked.ceilingEntry(offset);
    if ((before != null && before.getKey() + BatchHeader.BYTES + before.getValue().data().remaining() > offset)
        || (after != null && offset + bytes > after.getKey())) {
      throw breakCopy(new FailedPreconditionException(describe() + " got a forwarded batch for offset " + offset
          + " overlapping one waiting there: not its primary's"));
    }
  }

  /**
   * On a replica: the forward that carried {@code f}'s batch was given up by its primary (cancelled, or its
   * deadline passed) while the batch waited for those before it. The primary counts that forward as failed and
   * forwards nothing more for this partition, so the gap before it will not fill: this copy is frozen at its
   * length (a prefix of the primary's holding every batch acknowledged through it, so still fit to be sealed in
   * the primary's place) and every waiting batch is let go. Nothing happens when {@code f}'s batch was appended
   * or failed already.
   */
  void gaveUp(CompletableFuture<Void> f) {
    freezeIf(() -> parked.values().stream().anyMatch(p -> p.applied() == f) ? "has a gap at offset " + length
        + ": the forward of a batch after it was given up by its primary" : null);
  }

  /**
   * On a replica: a forwarded batch for {@code offset} will never be appended (its primary gave up on the forward
   * before it was applied here). When that place is still empty, the gap will not fill: this copy is frozen as in
   * {@link #gaveUp} and what waits behind it is let go.
   */
  void neverComing(long offset) {
    freezeIf(() -> offset >= length && sealed == null
        ? "has a gap at offset " + offset + ": its primary gave up the forward of the batch for it" : null);
  }

  /**
   * Freezes this copy when {@code why} (asked under the lock) names a reason, null otherwise; the batches waiting
   * are failed outside the lock.
   */
  private void freezeIf(java.util.function.Supplier<String> why) {
    List<Parked> failed;
    IOException reason;
    synchronized (this) {
      String w = why.get();
      if (w == null) {
        return;
      }
      if (frozen == null) {
        frozen = new FailedPreconditionException(describe() + " " + w + "; it takes no more batches");
      }
      reason = frozen;
      failed = takeParked();
    }
    fail(failed, reason);
  }

  /** Whether this copy is broken: it cannot be sealed (tests). */
  synchronized boolean broken() {
    return broken != null;
  }

  /** Forwarded batches waiting here for the ones before them (tests). */
  synchronized int parkedBatches() {
    return parked.size();
  }

  /**
   * On a primary: records that the replica's copy has a gap (a forward to it failed, or batches appended here were
   * not forwarded): from then on pushes for this partition are refused, naming the replica, and the client
   * revives the partition elsewhere. Null while the replica's copy is whole.
   */
  void replicaGap(String why) {
    replicaGap = why;
  }

  String replicaGap() {
    return replicaGap;
  }

  private void checkOpen() throws FailedPreconditionException {
    if (frozen != null) {
      throw frozen;
    }
    if (sealed != null) {
      throw new FailedPreconditionException(describe() + " is sealed: it takes no more batches (a map task of "
          + "an older stage attempt pushing late)");
    }
    if (broken != null) {
      throw new FailedPreconditionException(describe() + " is broken (" + broken.getMessage()
          + "); it takes no more batches", broken);
    }
  }

  private IOException breakCopy(IOException why) {
    if (broken == null) {
      broken = why;
    }
    return why;
  }

  /** Takes every waiting forwarded batch out (the caller fails them outside the lock). */
  private List<Parked> takeParked() {
    assert Thread.holdsLock(this);
    if (parked.isEmpty()) {
      return List.of();
    }
    List<Parked> out = new ArrayList<>(parked.values());
    parked.clear();
    for (Parked p : out) {
      parking.release(p.held());
    }
    return out;
  }

  private static void fail(List<Parked> batches, IOException why) {
    for (Parked p : batches) {
      p.applied().completeExceptionally(why);
    }
  }

  /**
   * Header then data, into this copy's blocks ({@link PartitionBlocks#append}); marks the copy broken when a write
   * fails part-way.
   */
  private void appendNow(BatchHeader header, ByteBuffer data) throws IOException {
    try {
      ByteBuffer head = header.toBuffer();
      crc.update(head.duplicate());
      crc.update(data.duplicate());
      bytes.append(head, data);
    } catch (IOException | RuntimeException e) {
      broken = e instanceof IOException io ? io : new IOException(e);
      throw broken;
    }
    length += BatchHeader.BYTES + (long) data.remaining();
    batches++;
  }

  /** Writes what the write-behind buffer holds; marks the copy broken when that fails. */
  private void flush() throws IOException {
    try {
      bytes.flush();
    } catch (IOException | RuntimeException e) {
      broken = e instanceof IOException io ? io : new IOException(e);
      throw broken;
    }
  }

  synchronized long length() {
    return length;
  }

  /** Bytes written to this copy's blocks so far: {@link #length} less what the write-behind buffer holds (tests). */
  synchronized long writtenBytes() {
    return bytes.written();
  }

  synchronized long batches() {
    return batches;
  }

  /** A sealed copy: its length and the CRC32C of all its bytes. */
  record Seal(long length, int crc32c) {}

  /** This copy's length and CRC32C now. */
  synchronized Seal current() {
    return new Seal(length, (int) crc.getValue());
  }

  /**
   * Whether the seal began committing this copy's blocks: until then (a copy found unlike its primary's, or
   * broken) none of its blocks can have reached the master.
   */
  boolean commitAttempted() {
    return commitAttempted;
  }

  /** The seal of this copy when its blocks are committed (whatever became of its UFS copy); else null. */
  synchronized Seal committed() {
    return sealed != null && sealed.isDone() && !sealed.isCompletedExceptionally() ? sealed.join() : null;
  }

  /**
   * A seal's first step, here only: this copy's seal ({@code mine}, null when another caller's seal came first), the
   * blocks it committed in the store, and the master commits they need ({@code commits}: empty when there is nothing
   * to commit there, or this caller's seal failed already). {@code outcome} completes with the seal.
   */
  record Local(CompletableFuture<Seal> outcome, CompletableFuture<Seal> mine, Seal seal,
      List<Committer.Commit> commits) {}

  /**
   * Stops appends and, unless another caller's seal came first, checks this copy against {@code expect} and commits
   * its blocks in the store (not at the master: {@link #committedAtMaster}). A failure here fails the seal at once,
   * with every block removed again. Blocks for the store's commits (renames, checksum files).
   */
  Local sealLocally(Seal expect, String inPlaceOf) {
    CompletableFuture<Seal> mine = null;
    CompletableFuture<Seal> theirs;
    List<BlockStore.TempBlock> blocks = null;
    long total = 0;
    int crcNow = 0;
    List<Parked> unplaced;
    synchronized (this) {
      if (sealed == null) {
        sealed = new CompletableFuture<>();
        mine = sealed;
        try {
          flush();
        } catch (IOException e) {
          // broken now: the commit below fails, naming it
        }
        bytes.release();
        blocks = bytes.temps();
        total = length;
        crcNow = (int) crc.getValue();
      }
      theirs = sealed;
      unplaced = takeParked(); // the gap before them stays: this copy is shorter than its primary's
    }
    if (mine == null) {
      failParked(unplaced);
      return new Local(theirs, null, null, List.of());
    }
    Seal mineSeal = new Seal(total, crcNow);
    List<Committer.Commit> commits = new ArrayList<>(blocks.size());
    try {
      failParked(unplaced);
      if (broken != null) {
        throw new FailedPreconditionException(describe() + " cannot be sealed: it is broken ("
            + broken.getMessage() + ")", broken);
      }
      if (expect != null && !expect.equals(mineSeal)) {
        throw new FailedPreconditionException(String.format("%s differs from its primary's copy (%d bytes, CRC32C "
            + "%08x here; %d bytes, %08x there): not committed", describe(), mineSeal.length(), mineSeal.crc32c(),
            expect.length(), expect.crc32c()));
      }
      commitAttempted = true;
      for (BlockStore.TempBlock t : blocks) {
        BlockStore.BlockMeta meta = store.commit(t);
        // In place of a failed primary: the master drops that primary's copy (listed or not) for good.
        commits.add(new Committer.Commit(meta.blockId(), meta.length(), meta.tier(), inPlaceOf));
      }
    } catch (IOException | RuntimeException e) {
      unseal(mine, blocks, commits, e);
      return new Local(theirs, mine, mineSeal, List.of());
    } catch (Error e) {
      unseal(mine, blocks, commits, new IOException("Sealing " + describe() + " failed: " + e, e));
      throw e;
    }
    return new Local(theirs, mine, mineSeal, commits); // published by committedAtMaster, even with nothing to commit
  }

  private void failParked(List<Parked> unplaced) {
    fail(unplaced, new FailedPreconditionException(describe() + " was sealed before the batches before this "
        + "one arrived"));
  }

  /**
   * A seal's second step, which publishes it: the master's answer to its commits ({@code failure}: null when every
   * one was taken, or there were none, else the first refusal). A refused seal fails with every block of this copy
   * removed again here.
   */
  void committedAtMaster(Local l, Exception failure) {
    if (l.mine() == null || l.mine().isDone()) {
      return;
    }
    if (failure == null) {
      l.mine().complete(l.seal());
      return;
    }
    List<BlockStore.TempBlock> blocks;
    synchronized (this) {
      blocks = bytes.temps();
    }
    unseal(l.mine(), blocks, l.commits(), failure);
  }

  /**
   * Fails a seal: aborts the temp blocks and removes those committed in the store (the master hears at the next
   * heartbeat: a copy sealed elsewhere in this one's place, its replica's, commits blocks of the same ids, and must
   * not be listed beside part of this one).
   */
  private void unseal(CompletableFuture<Seal> mine, List<BlockStore.TempBlock> blocks, List<Committer.Commit> done,
      Exception e) {
    for (BlockStore.TempBlock t : blocks) {
      store.abort(t); // a no-op for those committed
    }
    for (Committer.Commit c : done) {
      try {
        store.remove(c.blockId());
      } catch (IOException re) {
        LOG.warn("Block {} of {}, committed before its seal failed, cannot be removed: {}", c.blockId(), describe(),
            re.toString());
      }
    }
    mine.completeExceptionally(e);
  }

  /**
   * A seal's last step: waits for the seal (this caller's or another's) and, with {@code writeThrough}, writes the
   * UFS copy once, at {@code target} when it is this copy's first write (a target the master named for it before the
   * seal was published; null: where the master names when asked). Blocks for the UFS write.
   */
  Seal finish(Local l, UfsOperations ufs, boolean writeThrough, MasterClient.UfsTarget target) throws IOException {
    Seal done = await(l.outcome(), "seal");
    if (writeThrough) {
      writeThroughOnce(ufs, done, target);
    }
    return done;
  }

  /** Waits for another caller's seal or UFS copy of this copy ({@code what}); its failure is thrown here. */
  private <T> T await(CompletableFuture<T> f, String what) throws IOException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("Interrupted waiting for the " + what + " of " + describe());
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable c = e.getCause();
      throw c instanceof IOException io ? io : new IOException(c);
    }
  }

  private void writeThroughOnce(UfsOperations ufs, Seal done, MasterClient.UfsTarget target) throws IOException {
    CompletableFuture<Void> mine = null;
    CompletableFuture<Void> theirs;
    List<Long> ids = new ArrayList<>();
    synchronized (this) {
      if (written == null) {
        written = new CompletableFuture<>();
        mine = written;
        if (writesBegun++ > 0) {
          // The master names a new target each time it is asked and completes the file at the last one: a target
          // asked before the seal was published is only this copy's first write's (later ones ask again).
          target = null;
        }
      }
      theirs = written;
      for (BlockStore.TempBlock t : bytes.temps()) {
        ids.add(t.blockId());
      }
    }
    if (mine != null) {
      try {
        UfsCopy.write(store, ufs, spec.fileId(), target, ids, done.length(), describe());
        mine.complete(null);
      } catch (IOException | RuntimeException e) {
        synchronized (this) {
          written = null; // a later seal may try again
        }
        mine.completeExceptionally(e);
      }
    }
    await(theirs, "UFS copy");
  }

  /** Drops what is not committed (temp blocks); with {@code committed}, the committed copies too. */
  void drop(boolean committed) {
    List<BlockStore.TempBlock> blocks;
    List<Parked> unplaced;
    synchronized (this) {
      if (sealed == null) {
        sealed = CompletableFuture.failedFuture(new FailedPreconditionException(describe() + " was dropped"));
        written = CompletableFuture.failedFuture(new FailedPreconditionException(describe() + " was dropped"));
      }
      blocks = bytes.temps();
      unplaced = takeParked();
      bytes.release();
    }
    fail(unplaced, new FailedPreconditionException(describe() + " was dropped"));
    for (BlockStore.TempBlock t : blocks) {
      store.abort(t);
      if (committed) {
        try {
          store.remove(t.blockId());
        } catch (IOException e) {
          // The master still lists it; its next removal request or the file's deletion removes it.
        }
      }
    }
  }

  String describe() {
    return "Partition " + spec.partitionId() + " of shuffle " + spec.shuffleId() + " of " + spec.appId()
        + " (file " + spec.fileId() + ")";
  }
}
