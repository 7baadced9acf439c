package io.strata.worker;

import io.strata.proto.BlockReportProto;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The store's changes the next heartbeats carry to the master, for {@link MasterSync}: removal events, in order, and
 * the blocks to announce (moved, or announced again: a commit that overlapped a beat, a failed dir's block the store
 * holds again). Removal events carry a sequence number, so a heartbeat's success clears exactly the events it carried,
 * never a later removal of the same block, and a failed dir's loss can be taken back while still unsent. An addition
 * waits for a removal of its block queued before it that a beat cannot carry: the master applies a beat's removals
 * before its additions, so the removal, in a later beat, would undo it there.
 *
 * <p>Not thread-safe: guarded by {@link MasterSync}'s monitor (a leaf; see there), held around every call.
 */
final class QueuedChanges {
  /** Removal events not yet carried by a successful heartbeat, in order: {sequence, block id}. */
  private final ArrayDeque<long[]> removed = new ArrayDeque<>();
  private long removalSeq;
  /** Blocks to announce in the next heartbeat's added blocks, by block (looked up in the store when sent). */
  private final Map<Long, BlockReportProto> moved = new LinkedHashMap<>();

  /** What one heartbeat carries: removals up to and including event {@code goneUpTo}, and blocks to announce. */
  record Beat(List<Long> gone, long goneUpTo, List<BlockReportProto> changed) {}

  /** The block left the store: its removal is queued, an announcement of it dropped. The event's sequence number. */
  long removed(long blockId) {
    moved.remove(blockId);
    return giveBack(blockId);
  }

  /** Queues the block's removal again (a commit refused because its block left the store before it started). */
  long giveBack(long blockId) {
    removed.add(new long[] {++removalSeq, blockId});
    return removalSeq;
  }

  /** A new copy of the block is committed: queued, unsent removals of an older one go (they would drop this one). */
  void supersede(long blockId) {
    removed.removeIf(r -> r[1] == blockId);
  }

  /** Announces the block in the next heartbeat (as the store holds it then). */
  void announce(long blockId, long length, String tier) {
    moved.put(blockId, BlockReportProto.newBuilder().setBlockId(blockId).setLength(length).setTier(tier).build());
  }

  /**
   * A failed dir's loss (event {@code seq}) of a block the store holds again: the loss is taken back unless a heartbeat
   * carried it already, and the block is announced again (unless it is already to be).
   */
  void takeBack(long seq, BlockReportProto held) {
    removed.removeIf(e -> e[0] == seq);
    moved.putIfAbsent(held.getBlockId(), held);
  }

  /** A registration carries the whole store: what was queued so far is part of it. */
  void clear() {
    removed.clear();
    moved.clear();
  }

  /** What the next heartbeat carries: at most {@code perMessage} removals (the rest go in the beats after it). */
  Beat next(int perMessage) {
    List<Long> gone = new ArrayList<>();
    long goneUpTo = Long.MIN_VALUE;
    for (long[] r : removed) {
      if (gone.size() >= perMessage) {
        break;
      }
      gone.add(r[1]);
      goneUpTo = r[0];
    }
    List<BlockReportProto> changed = new ArrayList<>(moved.values());
    if (gone.size() < removed.size()) {
      // An addition waits for a removal of its block queued before it that this beat cannot carry.
      Set<Long> later = new HashSet<>();
      for (long[] r : removed) {
        if (r[0] > goneUpTo) {
          later.add(r[1]);
        }
      }
      changed.removeIf(r -> later.contains(r.getBlockId()));
    }
    return new Beat(gone, goneUpTo, changed);
  }

  /** A heartbeat carrying {@link #next}'s removals up to {@code goneUpTo} and {@code changed} succeeded: those go. */
  void carried(long goneUpTo, List<BlockReportProto> changed) {
    removed.removeIf(r -> r[0] <= goneUpTo);
    for (BlockReportProto r : changed) {
      moved.remove(r.getBlockId(), r);
    }
  }
}
