package io.strata.master.file;

import io.strata.common.exception.StrataException;
import io.strata.common.shuffle.AppIds;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the master deletes after the fact, on its lease thread ({@link #tick}), outside every lock:
 * <ul>
 *   <li>the temporary UFS copies of through-written files deleted before they completed (a write that failed and
 *       deleted its file, a delete of a file being written, a lease recovery): a copy whose worker finished it after
 *       its writer gave up would otherwise stay in the UFS for good. Durable: every temp name handed out is journaled
 *       before a worker may create it ({@link io.strata.master.journal.JournalEntry.UfsWriteTarget}), so a master that
 *       replays the journal (a restart, a standby taking over) knows the targets of the files still being written
 *       ({@link #targetReplayed}) and which temps the replayed deletes orphaned; a checkpoint keeps both
 *       ({@link #checkpointEntries}). A temp is forgotten only once its delete succeeded or found nothing (a failed
 *       delete, the UFS unreachable, is tried again next round), and that is journaled too
 *       ({@link io.strata.master.journal.JournalEntry.UfsTempDeleted}, not flushed on its own), so a standby forgets it
 *       as well; one whose entry a crash lost is deleted again by the next master, which finds nothing;</li>
 *   <li>the shuffle files of applications whose drivers died ({@code /.shuffle/<app>}, their UFS copies too): their
 *       driver markers' leases were recovered one more lease timeout ago, and no marker was made again since (a
 *       driver that only paused, longer than its lease, makes it again at its next shuffle registration). A delete
 *       that fails (the UFS unreachable) is tried again next round. Each such application is noted in the namespace,
 *       as the empty directory {@code /.shuffle/.ended/<app>} (journaled), until its files are deleted or its marker is
 *       back; the first tick of a master that starts leading (a failover, a restart) takes up the notes it finds, due
 *       one lease timeout from then.</li>
 * </ul>
 *
 * <p>Thread-safe: {@link #tempOrphaned}, {@link #fileEnded} and {@link #targetReplayed} are called from any thread
 * (under the commit lock, or replaying: they only record), {@link #checkpointEntries} under the commit lock with the
 * tree frozen, {@link #shuffleAppEnded} and {@link #tick} from the lease thread with no lock held. The orphan set holds
 * one entry per through-written file deleted and not cleaned up yet, the earlier targets those of files written
 * through when this master replayed and the targets its own later ones replaced, the map one per application whose driver died.
 */
final class MasterLeftovers {
  private static final Logger LOG = LoggerFactory.getLogger(MasterLeftovers.class);

  /** The namespace calls the deletes need (the file system master's). */
  interface Namespace {
    boolean exists(String path) throws StrataException;

    void deleteRecursively(String path) throws StrataException;

    /** Creates directory {@code path} and its parents; an existing one is fine. */
    void mkdirs(String path) throws StrataException;

    /** The names in directory {@code path}; empty when it does not exist. */
    java.util.List<String> children(String path) throws StrataException;
  }

  private final MountTable mounts;
  private final MetadataSync ufsClients;
  private final Clock elapsed;
  private final Supplier<Duration> leaseTimeout;
  private final Namespace namespace;
  /** Where a deleted orphan is journaled. */
  private final io.strata.master.journal.JournalSink journal;
  /** Temps to delete; an entry leaves only once its delete succeeded (or its mount is gone). */
  private final java.util.Set<String> orphanedTemps = ConcurrentHashMap.newKeySet();
  /**
   * Write targets of files not ended yet, by file id, other than this master's latest hand-out of each (the file system
   * master's {@code ufsWriteTargets}): those journaled by an earlier leader (replayed), and those a later target
   * replaced (a stream given up, as a write fails over to another worker). None of them is placed by a complete that
   * has a later one; all go once their file ended.
   */
  private final Map<Long, java.util.Set<String>> earlierTargets = new ConcurrentHashMap<>();
  /** Applications whose shuffle driver's marker was recovered, with when ({@link #elapsed}). */
  private final Map<String, Long> shuffleAppsEnded = new ConcurrentHashMap<>();
  /** Whether the notes of ended applications were taken up since this master started leading (lease thread only). */
  private boolean notesTakenUp;

  MasterLeftovers(MountTable mounts, MetadataSync ufsClients, Clock elapsed, Supplier<Duration> leaseTimeout,
      Namespace namespace, io.strata.master.journal.JournalSink journal) {
    this.journal = journal;
    this.mounts = mounts;
    this.ufsClients = ufsClients;
    this.elapsed = elapsed;
    this.leaseTimeout = leaseTimeout;
    this.namespace = namespace;
  }

  /** A through-written file whose temporary UFS copy {@code temp} no one will place was deleted. */
  void tempOrphaned(String temp) {
    orphanedTemps.add(temp);
  }

  /**
   * Replay of a journaled write target: kept for file {@code fileId} while it is {@code incomplete}; else (the file
   * deleted since, or a checkpoint's orphan, id 0) the temp is an orphan.
   */
  void targetReplayed(long fileId, String temp, boolean incomplete) {
    if (incomplete) {
      earlierTargets.computeIfAbsent(fileId, k -> ConcurrentHashMap.newKeySet()).add(temp);
    } else {
      orphanedTemps.add(temp);
    }
  }

  /** Replay: the leader deleted orphan {@code temp}. */
  void tempDeleted(String temp) {
    orphanedTemps.remove(temp);
  }

  /** This master handed out a new write target for file {@code fileId} in place of {@code replaced}. */
  void targetReplaced(long fileId, String replaced) {
    earlierTargets.computeIfAbsent(fileId, k -> ConcurrentHashMap.newKeySet()).add(replaced);
  }

  /**
   * File {@code fileId} was deleted, or completed: its earlier targets are orphans (one a complete placed is no longer
   * there: its delete finds nothing, as the same name is never handed out again).
   */
  void fileEnded(long fileId) {
    java.util.Set<String> temps = earlierTargets.remove(fileId);
    if (temps != null) {
      orphanedTemps.addAll(temps);
    }
  }

  /**
   * What a checkpoint keeps of the temps (under the commit lock, the tree frozen): each write target, this master's
   * ({@code ownTargets}) and the replayed ones, of a file still {@code incomplete} (the others are forgotten), and each
   * orphan not deleted yet, as a target of file 0.
   */
  java.util.List<io.strata.master.journal.JournalEntry> checkpointEntries(Map<Long, String> ownTargets,
      java.util.function.LongPredicate incomplete) {
    java.util.List<io.strata.master.journal.JournalEntry> out = new java.util.ArrayList<>();
    earlierTargets.keySet().removeIf(id -> !incomplete.test(id));
    // (Replayed, all of them are earlier targets of the next master: it places a file's copy by its name.)
    earlierTargets.forEach((id, temps) -> temps.forEach(
        temp -> out.add(new io.strata.master.journal.JournalEntry.UfsWriteTarget(id, temp))));
    ownTargets.forEach((id, temp) -> {
      if (incomplete.test(id)) {
        out.add(new io.strata.master.journal.JournalEntry.UfsWriteTarget(id, temp));
      }
    });
    orphanedTemps.forEach(temp -> out.add(new io.strata.master.journal.JournalEntry.UfsWriteTarget(0, temp)));
    return out;
  }

  /** Orphaned temps not deleted yet (for tests). */
  int orphanedTempCount() {
    return orphanedTemps.size();
  }

  /** The driver marker of shuffle application {@code app} was recovered now (the lease thread, no lock held). */
  void shuffleAppEnded(String app) {
    shuffleAppsEnded.put(app, elapsed.millis());
    try {
      namespace.mkdirs(AppIds.ENDED + "/" + app);
    } catch (StrataException e) {
      LOG.warn("Cannot note that the driver of shuffle application {} is gone ({}): its files go at the due time if "
          + "this master still leads then", app, e.getMessage());
    }
  }

  /** Deletes what is due (the lease thread, no lock held). */
  void tick() {
    if (!notesTakenUp) {
      notesTakenUp = takeUpNotes();
    }
    deleteEndedShuffleApps();
    deleteOrphanedTemps();
  }

  /** Schedules the ended applications noted by an earlier leader, due one lease timeout from now; false if it failed. */
  private boolean takeUpNotes() {
    try {
      for (String app : namespace.children(AppIds.ENDED)) {
        if (shuffleAppsEnded.putIfAbsent(app, elapsed.millis()) == null) {
          LOG.info("The driver of shuffle application {} was gone under the previous leader: its files go one lease "
              + "timeout from now unless it makes its marker again", app);
        }
      }
      return true;
    } catch (StrataException e) {
      LOG.warn("Cannot read the notes of shuffle applications whose drivers are gone: {}; trying again", e.getMessage());
      return false;
    }
  }

  private void deleteEndedShuffleApps() {
    long now = elapsed.millis();
    long grace = leaseTimeout.get().toMillis();
    for (Iterator<Map.Entry<String, Long>> it = shuffleAppsEnded.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Long> e = it.next();
      if (now - e.getValue() <= grace) {
        continue;
      }
      String app = e.getKey();
      String dir = AppIds.ROOT + "/" + app;
      try {
        if (namespace.exists(AppIds.driverMarker(app))) {
          LOG.info("The driver of shuffle application {} made its marker again: its files stay", app);
        } else if (namespace.exists(dir)) {
          namespace.deleteRecursively(dir);
          LOG.info("Deleted {}: the shuffle files of application {}, whose driver stopped renewing its lease", dir,
              app);
        }
        if (namespace.exists(AppIds.ENDED + "/" + app)) {
          namespace.deleteRecursively(AppIds.ENDED + "/" + app); // last: a failover before it deletes again
        }
        it.remove();
      } catch (StrataException ex) {
        LOG.warn("Cannot delete {}, the shuffle files of application {} whose driver is gone: {}; trying again", dir,
            app, ex.getMessage());
      }
    }
  }

  private void deleteOrphanedTemps() {
    // Each stays in the set until it is gone, so a checkpoint taken meanwhile still names it.
    for (String temp : java.util.List.copyOf(orphanedTemps)) {
      MountTable.MountInfo mount = mounts.writableHolding(temp);
      if (mount == null) {
        orphanedTemps.remove(temp); // unmounted since (or mounted read-only): Strata no longer writes there
        journal.append(java.util.List.of(new io.strata.master.journal.JournalEntry.UfsTempDeleted(temp)));
        continue;
      }
      try {
        if (ufsClients.client(new MountTable.Resolution(mount, temp)).delete(temp, false)) {
          LOG.info("Deleted {}, the under file system copy of a file deleted while it was written", temp);
        }
        orphanedTemps.remove(temp);
        journal.append(java.util.List.of(new io.strata.master.journal.JournalEntry.UfsTempDeleted(temp)));
      } catch (IOException e) {
        LOG.warn("Cannot delete {}, the under file system copy of a file deleted while it was written: {}; trying "
            + "again", temp, e.toString());
      }
    }
  }
}
