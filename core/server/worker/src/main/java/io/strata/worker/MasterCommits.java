package io.strata.worker;

import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.proto.CommitBlockRequest;
import io.strata.worker.rpc.Committer;
import io.strata.worker.store.BlockStore;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongPredicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The block commits at the master, for {@link MasterSync}, and their bookkeeping against the beats (registrations and
 * heartbeats) they may overlap. A commit drops the queued, unsent removals of its block (they are of an older copy) and
 * makes a master-ordered removal of it that has not run yet moot; one refused because its block left the store before
 * it started gives that removal back. A commit that overlapped a beat is announced again in the next heartbeat, and a
 * removal the beat's reply asks for of a block whose commit overlapped it is skipped ({@link #overlapped}): the master
 * may have asked before it saw the commit, and asks again if it still wants the block gone.
 *
 * <p>Threading: commits run on RPC and worker executor threads, the beats on the heartbeat thread. No lock of its own:
 * its bookkeeping is guarded by the monitor of the {@link MasterSync} that owns it ({@code lock}), as are the
 * {@link QueuedChanges} and {@link MasterOrderedRemovals} it updates, so that a commit's start or end and what a beat
 * takes or queues change in one step. Methods marked "Monitor held" are called with that monitor held; the commits and
 * {@link #endBeat} take it themselves, only around the bookkeeping: never across the master RPC or a store call (the
 * store and the master are asked, and the block pinned, with the monitor let go). The lock order is MasterSync's (its
 * monitor is a leaf): nothing else is taken under it here.
 */
final class MasterCommits {
  private static final Logger LOG = LoggerFactory.getLogger(MasterCommits.class);

  /** MasterSync's monitor, which guards the fields below and {@link #changes} and {@link #removals}. */
  private final Object lock;
  private final MasterBatches batches;
  private final Supplier<BlockStore> store;
  /** Whether the store holds the block now; never asked under the monitor. */
  private final LongPredicate storeHas;
  private final Pins pins;
  private final QueuedChanges changes;
  private final MasterOrderedRemovals removals;
  /** Beats started plus beats finished: odd while a registration or heartbeat is in flight. */
  private long beats;
  /** Commits in flight at the master, by block (a block may be committed by two threads). */
  private final Map<Long, Integer> committing = new HashMap<>();
  /** Blocks whose commit overlapped the beat in flight: its reply's removals of them are skipped. */
  private final Set<Long> overlapped = new HashSet<>();

  /** {@code lock} is the owning MasterSync, which also guards {@code changes} and {@code removals}. */
  MasterCommits(Object lock, MasterBatches batches, Supplier<BlockStore> store, LongPredicate storeHas, Pins pins,
      QueuedChanges changes, MasterOrderedRemovals removals) {
    this.lock = lock;
    this.batches = batches;
    this.store = store;
    this.storeHas = storeHas;
    this.pins = pins;
    this.changes = changes;
    this.removals = removals;
  }

  /** A beat starts: commits in flight now, or started before it ends, overlap it. Monitor held. */
  void beginBeat() {
    beats++;
    overlapped.clear();
    overlapped.addAll(committing.keySet());
  }

  /** The beat in flight ended (answered or not). Takes the monitor. */
  void endBeat() {
    synchronized (lock) {
      beats++;
      overlapped.clear();
    }
  }

  /** Whether a commit of the block overlapped the beat in flight. Monitor held. */
  boolean overlapped(long blockId) {
    return overlapped.contains(blockId);
  }

  private static UnavailableException notRegistered() {
    return new UnavailableException("This worker is not registered with the master yet; retry shortly");
  }

  /**
   * Commits at the master, as worker {@code workerId} of registration {@code token} (read together; id -1: not
   * registered), blocks committed in the store, in batched calls sent on this thread, with the bookkeeping of
   * {@link #commit} for each block and no lock held across the calls: per commit, in order, null when the master took
   * it, else why not. Without the monitor.
   */
  List<Exception> commitAll(long workerId, String token, List<Committer.Commit> commits) {
    List<Exception> out = new ArrayList<>(Collections.nCopies(commits.size(), (Exception) null));
    if (workerId < 0) {
      for (int i = 0; i < commits.size(); i++) {
        out.set(i, notRegistered());
      }
      return out;
    }
    long beatsAtStart;
    synchronized (lock) {
      for (Committer.Commit c : commits) {
        begin(c.blockId());
      }
      beatsAtStart = beats;
    }
    boolean[] ok = new boolean[commits.size()];
    try {
      BlockStore s = store.get();
      List<CommitBlockRequest> reqs = new ArrayList<>(commits.size());
      List<Integer> sent = new ArrayList<>(commits.size());
      for (int i = 0; i < commits.size(); i++) {
        Committer.Commit c = commits.get(i);
        try {
          if (s != null) {
            s.get(c.blockId()); // removed before this commit started (its removal was just dropped): do not commit
          }
        } catch (StrataException e) {
          out.set(i, e);
          continue;
        }
        reqs.add(CommitBlockRequest.newBuilder().setWorkerId(workerId).setWorkerToken(token).setBlockId(c.blockId())
            .setLength(c.length()).setTier(c.tier()).setReplaces(c.replaces() == null ? "" : c.replaces()).build());
        sent.add(i);
      }
      List<CallBatcher.Outcome<Boolean>> got = batches.commits(reqs);
      for (int k = 0; k < sent.size(); k++) {
        int i = sent.get(k);
        out.set(i, got.get(k).error());
        ok[i] = got.get(k).error() == null;
      }
    } catch (RuntimeException e) {
      for (int i = 0; i < commits.size(); i++) {
        if (out.get(i) == null) {
          out.set(i, e);
        }
      }
    } finally {
      boolean[] gone = new boolean[commits.size()];
      for (int i = 0; i < commits.size(); i++) {
        gone[i] = !ok[i] && store.get() != null && !storeHas.test(commits.get(i).blockId()); // before the monitor
      }
      synchronized (lock) {
        for (int i = 0; i < commits.size(); i++) {
          Committer.Commit c = commits.get(i);
          end(c.blockId(), c.length(), c.tier(), ok[i], gone[i], beatsAtStart);
        }
      }
    }
    for (int i = 0; i < commits.size(); i++) {
      if (ok[i]) {
        try {
          pins.committed(commits.get(i).blockId(), store.get());
        } catch (RuntimeException e) {
          LOG.warn("Pinning committed block {} failed: {}", commits.get(i).blockId(), e.toString()); // it is committed
        }
      }
    }
    return out;
  }

  /**
   * Commits at the master, as worker {@code workerId} of registration {@code token} (read together; id -1: not
   * registered), with no lock held across the RPC. An announcement of a copy whose removal is under way is skipped (it
   * would re-announce what is going). Without the monitor.
   */
  void commit(long workerId, String token, long blockId, long length, String tier, boolean announce, String replaces)
      throws StrataException {
    if (workerId < 0) {
      throw notRegistered();
    }
    long beatsAtStart;
    synchronized (lock) {
      if (announce && removals.removing(blockId)) {
        return;
      }
      begin(blockId);
      beatsAtStart = beats;
    }
    boolean ok = false;
    try {
      BlockStore s = store.get();
      if (s != null) {
        s.get(blockId); // removed before this commit started (its removal was just dropped): do not commit
      }
      CommitBlockRequest req = CommitBlockRequest.newBuilder().setWorkerId(workerId).setWorkerToken(token)
          .setBlockId(blockId).setLength(length).setTier(tier).setAnnounce(announce).setReplaces(replaces).build();
      batches.commit(req);
      ok = true;
    } finally {
      boolean gone = !ok && store.get() != null && !storeHas.test(blockId); // asked before the monitor
      synchronized (lock) {
        end(blockId, length, tier, ok, gone, beatsAtStart);
      }
    }
    pins.committed(blockId, store.get());
  }

  /**
   * A commit of the block starts: this copy supersedes the removals of an older one not yet reported (reporting them
   * would drop this one), and it overlaps the beat in flight, if any. Monitor held.
   */
  private void begin(long blockId) {
    supersedeRemovals(blockId);
    committing.merge(blockId, 1, Integer::sum);
    if ((beats & 1) == 1) {
      overlapped.add(blockId);
    }
  }

  /**
   * A commit of the block that started at {@code beatsAtStart} ended, taken by the master ({@code ok}) or not, its
   * block gone from the store ({@code gone}: a removal {@link #begin} may have dropped is given back). Monitor held.
   */
  private void end(long blockId, long length, String tier, boolean ok, boolean gone, long beatsAtStart) {
    committing.computeIfPresent(blockId, (k, n) -> n == 1 ? null : n - 1);
    if (gone) {
      changes.giveBack(blockId); // a removal the start may have dropped
    }
    if (ok && (beatsAtStart != beats || (beats & 1) == 1)) {
      // Overlapped a beat: say it again in the next heartbeat (the master may have seen the old copy's
      // removal, or a registration, after this commit).
      changes.announce(blockId, length, tier);
    }
  }

  /**
   * A new copy of the block is committed: the queued, unsent removal events of an older one go (reporting them would
   * drop this one), and a removal the master asked for that has not run yet is moot (the master, told of this copy,
   * asks again if it still wants the block gone). Monitor held.
   */
  private void supersedeRemovals(long blockId) {
    changes.supersede(blockId);
    removals.supersede(blockId);
  }
}
