package io.strata.master.file;

import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lease recovery at the master: renewals from clients, and the periodic check that deletes the incomplete
 * files of writers that stopped renewing (see {@link LeaseManager} for the leases themselves, and
 * docs/ARCHITECTURE.md, "Write leases"). The file system master owns it and delegates to it.
 *
 * <p>Thread-safe. {@link #tick()} runs on the master's background thread; the deletion of a file is
 * checked and applied under the commit lock (which completion takes too), the UFS temp file is deleted
 * after it, outside every lock.
 */
final class LeaseRecovery {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseRecovery.class);
  private static final long RECOVERED_NOTICE_MS = 60_000;
  private static final int RECOVERED_NOTICE_MAX = 10_000;

  private final InodeTree tree;
  private final MountTable mounts;
  private final MetadataSync sync;
  private final Clock clock;
  private final Object commitLock;
  private final Consumer<List<Long>> removeBlocks;
  private final MountOperations.Flush flush;
  /** The master's temp UFS names of through writes, by file id. */
  private final Map<Long, String> ufsWriteTargets;
  /**
   * Tried (never waited for) on the file's path: a CACHE_THROUGH complete placing the file's UFS copy holds it, and
   * a recovery in the middle would delete the file after its copy went into place (the copy then listed by the next
   * UFS sync, the writer told its file failed). Such a file is looked at again next round.
   */
  private final PathGuard guard;
  private final LeaseManager leases = new LeaseManager();
  /**
   * Told the application whose shuffle driver's marker was recovered (the driver died without removing its shuffle
   * files; {@link io.strata.common.shuffle.AppIds#driverMarker}): the master deletes them.
   */
  private volatile Consumer<String> shuffleAppEnded = app -> { };
  /** Set once this master adopted the incomplete files it found (on its first check as leader). */
  private volatile boolean leasesAdopted;
  /** Files recovered lately, with when, for workers to drop what they still receive of them. */
  private final java.util.ArrayDeque<long[]> recentlyRecovered = new java.util.ArrayDeque<>();

  LeaseRecovery(InodeTree tree, MountTable mounts, MetadataSync sync, Clock clock, Object commitLock,
      Consumer<List<Long>> removeBlocks, MountOperations.Flush flush, Map<Long, String> ufsWriteTargets,
      PathGuard guard) {
    this.guard = guard;
    this.tree = tree;
    this.mounts = mounts;
    this.sync = sync;
    this.clock = clock;
    this.commitLock = commitLock;
    this.removeBlocks = removeBlocks;
    this.flush = flush;
    this.ufsWriteTargets = ufsWriteTargets;
  }

  void setTimeout(java.time.Duration timeout) {
    leases.setTimeout(timeout);
  }

  java.time.Duration timeout() {
    return leases.timeout();
  }

  void onShuffleAppEnded(Consumer<String> listener) {
    this.shuffleAppEnded = listener;
  }

  /** A file was created: {@code clientId} holds it ("" for the file alone). */
  void created(String clientId, long fileId) {
    leases.add(clientId, fileId, clock.millis());
  }

  /**
   * Renews {@code clientId}'s lease on every file it writes and attaches {@code fileIds} to it; returns
   * those of {@code fileIds} that are no longer incomplete files here (the writer has lost them).
   */
  List<Long> renewLease(String clientId, List<Long> fileIds) throws StrataException {
    if (clientId == null || clientId.isEmpty()) {
      throw new InvalidArgumentException("A lease renewal must name its client id");
    }
    Names.check("client id", clientId, "Cannot renew a lease");
    List<Long> held = new ArrayList<>();
    List<Long> lost = new ArrayList<>();
    // Under the leases' monitor, which a recovery holds from its last look at the lease to its delete: a file
    // answered held here is not deleted by a recovery that began before this renewal.
    synchronized (leases) {
      for (long id : fileIds) {
        (writing(id) ? held : lost).add(id);
      }
      leases.renew(clientId, held, clock.millis());
    }
    return lost;
  }

  /** Of {@code fileIds}, those no longer being written: deleted, or complete. */
  List<Long> ended(java.util.Collection<Long> fileIds) {
    List<Long> out = new ArrayList<>();
    for (long id : fileIds) {
      if (!writing(id)) {
        out.add(id);
      }
    }
    return out;
  }

  private boolean writing(long fileId) {
    FileInfo f = tree.getFile(fileId);
    return f != null && !f.complete();
  }

  /**
   * Recovers the files whose writers stopped renewing (the master's background thread, while leading).
   * The first call adopts the incomplete files this master found when it started leading, with leases
   * from now. Recovery deletes the file (journaled, as any delete; Strata only: the UFS holds no copy of
   * an incomplete file, only temp files, which are deleted too); its committed blocks go through the
   * usual removal path to the workers. Returns the ids recovered.
   */
  List<Long> tick() {
    long now = clock.millis();
    if (!leasesAdopted) {
      leasesAdopted = true;
      leases.adopt(tree.incompleteFileIds(), now);
    }
    for (long id : leases.files()) {
      if (!writing(id)) {
        leases.release(id); // completed, or deleted by its writer or anyone
        if (tree.getFile(id) == null) {
          ended(id); // deleted while incomplete: workers drop what they still hold of it
        }
      }
    }
    List<Long> recovered = new ArrayList<>();
    List<String> appsEnded = new ArrayList<>();
    for (Map.Entry<String, List<Long>> e : leases.expired(now).entrySet()) {
      for (long fileId : e.getValue()) {
        FileInfo f = tree.getFile(fileId);
        if (recover(e.getKey(), fileId)) {
          recovered.add(fileId);
          String app = f == null ? null : io.strata.common.shuffle.AppIds.appOfDriverMarker(f.path());
          if (app != null) {
            appsEnded.add(app);
          }
        }
      }
    }
    for (String app : appsEnded) {
      shuffleAppEnded.accept(app); // outside every lock, as any delete
    }
    return recovered;
  }

  private boolean recover(String holder, long fileId) {
    FileInfo f = tree.getFile(fileId);
    if (f == null || f.complete()) {
      leases.release(fileId);
      return false;
    }
    String temp = ufsWriteTargets.get(fileId);
    PathGuard.Held held;
    try {
      held = guard.tryHold(StrataPath.of(f.path()));
    } catch (StrataException bad) {
      return false; // a path the tree holds is always valid; nothing to recover by it otherwise
    }
    if (held == null) {
      return false; // a change of a related path (its complete placing its copy, say) is under way: next round
    }
    try (held) {
      MountTable.Resolution r = temp == null ? null : mounts.resolve(StrataPath.of(f.path()));
      // Checked and deleted under the commit lock, which completion takes too: a writer that completes
      // at the last moment keeps its (acknowledged) file, and the recovery is the one that gives up.
      synchronized (commitLock) {
        FileInfo cur = tree.getFile(fileId);
        if (cur == null || cur.complete()) {
          leases.release(fileId);
          return false;
        }
        if (!cur.path().equals(f.path())) {
          return false; // renamed since: its new path is not the one held; next round
        }
        List<Long> removed;
        synchronized (leases) {
          // Looked at again: a renewal answered since the round listed the expired leases keeps the file.
          if (!leases.stillExpired(holder, fileId, clock.millis())) {
            return false;
          }
          removed = tree.delete(StrataPath.of(cur.path()), false, List.of(), fileId);
        }
        removeBlocks.accept(removed);
      }
      flush.run();
      leases.release(fileId);
      if (r != null) {
        try {
          sync.client(r).delete(temp, false); // the through write's temp copy (its worker may be gone)
        } catch (IOException ex) {
          LOG.warn("Lease recovery of {}: cannot delete its temporary under file system file: {}", f.path(),
              ex.toString());
        }
      }
      ended(fileId);
      LOG.info("Lease of {} expired (no renewal for {}): deleted its abandoned incomplete file {} (id {})",
          holder, leases.timeout(), f.path(), fileId);
      return true;
    } catch (StrataException ex) {
      // Renamed or deleted meanwhile (the id guard refused), or the journal failed: try again next round.
      LOG.warn("Lease recovery of {} (id {}) failed: {}", f.path(), fileId, ex.getMessage());
      return false;
    }
  }

  private void ended(long fileId) {
    synchronized (recentlyRecovered) {
      recentlyRecovered.addLast(new long[] {fileId, clock.millis()});
      while (recentlyRecovered.size() > RECOVERED_NOTICE_MAX) {
        recentlyRecovered.removeFirst();
      }
    }
  }

  /**
   * Files recovered, or deleted while incomplete, in the last minute: every heartbeat reply names them, so
   * a worker still receiving a block of one (its writer went silent rather than away) aborts it at once,
   * and one keeping a held temp block of one ({@code TempBlock.hold}: a shuffle partition whose drop it
   * missed) lets it go.
   */
  List<Long> recentlyRecoveredFileIds() {
    long now = clock.millis();
    synchronized (recentlyRecovered) {
      while (!recentlyRecovered.isEmpty() && now - recentlyRecovered.peekFirst()[1] > RECOVERED_NOTICE_MS) {
        recentlyRecovered.removeFirst();
      }
      List<Long> out = new ArrayList<>(recentlyRecovered.size());
      recentlyRecovered.forEach(r -> out.add(r[0]));
      return out;
    }
  }

  /** Files with a write lease (tests and reports). */
  int leaseCount() {
    return leases.size();
  }
}
