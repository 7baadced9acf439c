package io.strata.worker;

import io.strata.proto.BlockReportProto;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * How many block reports and removals one message to the master carries, and the committed blocks a registration
 * could not: one message holds at most {@link #perMessage} (the network's message limit over 64 bytes, far more
 * than a report takes), so a worker with more blocks than that registers with the first and sends the rest in the
 * heartbeats after it, as added blocks. Without this a worker holding a few hundred thousand blocks could never
 * register again (its registration was refused for its size, every beat), and its blocks, only copies among them,
 * stayed unknown to the master.
 *
 * <p>Not thread-safe: guarded by {@link MasterSync}'s monitor.
 */
final class PendingReport {
  private final int perMessage;
  private final ArrayDeque<BlockReportProto> left = new ArrayDeque<>();

  PendingReport(long maxMessageBytes) {
    this.perMessage = (int) Math.max(1000, Math.min(Integer.MAX_VALUE, maxMessageBytes / 64));
  }

  int perMessage() {
    return perMessage;
  }

  /**
   * A registration reports {@code all} committed blocks: returns the first {@link #perMessage}, for it to carry, and
   * keeps the rest, sent from now on (what an earlier registration left is dropped: {@code all} holds it).
   */
  List<BlockReportProto> registering(List<BlockReportProto> all) {
    int carried = Math.min(perMessage, all.size());
    left.clear();
    left.addAll(all.subList(carried, all.size()));
    return all.subList(0, carried);
  }

  /** The next {@code room} reports still to send (left queued until {@link #sent}). */
  List<BlockReportProto> peek(int room) {
    List<BlockReportProto> out = new ArrayList<>(Math.min(room, left.size()));
    for (BlockReportProto r : left) {
      if (out.size() >= room) {
        break;
      }
      out.add(r);
    }
    return out;
  }

  /** The master took the first {@code n} (a heartbeat carrying them succeeded). */
  void sent(int n) {
    for (int i = 0; i < n && !left.isEmpty(); i++) {
      left.poll();
    }
  }

  int size() {
    return left.size();
  }
}
