package io.strata.worker.shuffle;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.id.BlockId;
import io.strata.worker.store.BlockStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Where one partition copy's bytes go: temp blocks of its Strata file in the block store (block {@code i} of file
 * {@code fileId} is {@code BlockId.of(fileId, i)}; a batch may straddle two), held until the seal, drop or lease
 * recovery, with a small write-behind buffer in front ({@link #buffer}).
 *
 * <p>Not thread-safe: its {@link PartitionFile}'s lock guards it.
 */
final class PartitionBlocks {
  /**
   * Batches up to this many bytes are appended with their header in one write; a copy's write-behind buffer holds
   * at most this many.
   */
  private static final int COALESCE_MAX = 64 << 10;
  /**
   * Room reserved in a block at a time for the write-behind buffer's batches: what the buffer holds at most, so a
   * thousand partitions hold no more reserved ahead than they could buffer.
   */
  private static final long GRANT_STEP = COALESCE_MAX;
  private final ShuffleStore.PartitionSpec spec;
  private final BlockStore store;
  private final AppendBuffers buffers;
  private final String describe;
  /** Write-behind: batches appended (acknowledged) and not yet written to the current block, or null. */
  private ByteBuffer pending;
  /** The room the current block holds reserved, as its last grant answered (0 before one). */
  private long granted;
  private final List<BlockStore.TempBlock> temps = new ArrayList<>();

  PartitionBlocks(ShuffleStore.PartitionSpec spec, BlockStore store, AppendBuffers buffers, String describe) {
    this.spec = spec;
    this.store = store;
    this.buffers = buffers;
    this.describe = describe;
  }

  /**
   * Appends a header then its data: into the write-behind buffer when it takes them ({@link #buffer}), else written
   * through after what the buffer holds. A failure part-way leaves the copy's bytes unusable (its caller marks it
   * broken).
   */
  void append(ByteBuffer head, ByteBuffer data) throws IOException {
    if (buffer(head, data)) {
      return;
    }
    flush();
    if (data.remaining() <= COALESCE_MAX) {
      // One write instead of two: on a small batch the system call, not the copy, is the cost.
      ByteBuffer one = ByteBuffer.allocate(head.remaining() + data.remaining());
      one.put(head).put(data.duplicate()).flip();
      write(one);
    } else {
      write(head);
      write(data.duplicate());
    }
  }

  /** The temp blocks so far, in order (a copy of the list). */
  List<BlockStore.TempBlock> temps() {
    return new ArrayList<>(temps);
  }

  /** Bytes written to the blocks so far (what the write-behind buffer holds not counted). */
  long written() {
    return temps.stream().mapToLong(BlockStore.TempBlock::length).sum();
  }

  /**
   * Write-behind: keeps a small batch in this copy's buffer (at most {@link #COALESCE_MAX} bytes, out of the
   * worker's {@link AppendBuffers}) instead of writing it now, so the many small batches a partition gets (one
   * per map task and push) reach its block in a few writes: when the buffer fills, before a batch written through,
   * and at the seal. A batch is only kept when its room in the current block is reserved already (granted through
   * the store's accounting, a step at a time), so writing it later cannot fail for space: once acknowledged it is
   * in the store's hands as much as an appended one. Returns false, keeping nothing, when the batch is too big,
   * would end past the current block, or finds no room in the budget or the store.
   */
  private boolean buffer(ByteBuffer head, ByteBuffer data) throws IOException {
    int n = head.remaining() + data.remaining();
    if (n > COALESCE_MAX) {
      return false;
    }
    if (pending != null && pending.position() + n > COALESCE_MAX) {
      flush();
    }
    BlockStore.TempBlock current = currentBlock();
    long end = current.length() + (pending == null ? 0 : pending.position()) + n;
    if (end > spec.blockSize()) {
      return false;
    }
    if (end > granted && !grant(current, end)) {
      return false; // no room made: written through, where the append itself fails if there is none
    }
    int needed = (pending == null ? 0 : pending.position()) + n;
    if (pending == null || pending.capacity() < needed) {
      int capacity = Math.min(COALESCE_MAX, Math.max(needed, pending == null ? 4096 : pending.capacity() * 2));
      if (!buffers.take(capacity - (pending == null ? 0 : pending.capacity()))) {
        return false;
      }
      ByteBuffer bigger = ByteBuffer.allocate(capacity);
      if (pending != null) {
        pending.flip();
        bigger.put(pending);
      }
      pending = bigger;
    }
    pending.put(head).put(data.duplicate());
    return true;
  }

  /**
   * Reserves room in {@code current} up to {@code end} at least: a step ahead ({@link #GRANT_STEP}), else just
   * what is needed. False when the store cannot make that room.
   */
  private boolean grant(BlockStore.TempBlock current, long end) {
    // A batch written through reserved room as it went, unknown to granted: the block holds at least its length.
    long have = Math.max(granted, current.length());
    for (long ask : new long[] {Math.max(GRANT_STEP, end - have), end - have}) {
      try {
        granted = current.grant(ask);
        if (end <= granted) {
          return true;
        }
      } catch (UnsupportedOperationException | io.strata.common.exception.StrataException e) {
        // not this much room: try for less, then give up
      }
    }
    return false;
  }

  /** Writes what the write-behind buffer holds to the current block (where its room was reserved). */
  void flush() throws IOException {
    if (pending == null || pending.position() == 0) {
      return;
    }
    pending.flip();
    try {
      write(pending);
    } finally {
      pending.clear();
    }
  }

  /** Gives the write-behind buffer's heap back to the budget (sealed or dropped). */
  void release() {
    if (pending != null) {
      buffers.giveBack(pending.capacity());
      pending = null;
    }
  }

  /** The block appends go to now: the last temp block, or a new one when there is none or it is full. */
  private BlockStore.TempBlock currentBlock() throws IOException {
    BlockStore.TempBlock current = temps.isEmpty() ? null : temps.get(temps.size() - 1);
    if (current == null || current.length() >= spec.blockSize()) {
      if (temps.size() > BlockId.MAX_INDEX) {
        throw new FailedPreconditionException(describe + " would need more than " + (BlockId.MAX_INDEX + 1)
            + " blocks of " + spec.blockSize() + " bytes");
      }
      current = store.createTemp(BlockId.of(spec.fileId(), temps.size()), spec.blockSize());
      // Appends come in bursts with gaps as long as the map stage's slowest task: the partition, not
      // the idle reaper, decides the block's end (seal, drop, or the driver's lost lease).
      current.hold();
      temps.add(current);
      granted = 0;
    }
    return current;
  }

  private void write(ByteBuffer b) throws IOException {
    long blockSize = spec.blockSize();
    while (b.hasRemaining()) {
      BlockStore.TempBlock current = currentBlock();
      int n = (int) Math.min(b.remaining(), blockSize - current.length());
      ByteBuffer piece = b.slice(b.position(), n);
      current.append(piece);
      b.position(b.position() + n);
    }
  }
}
