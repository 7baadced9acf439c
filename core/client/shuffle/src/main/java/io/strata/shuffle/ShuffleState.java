package io.strata.shuffle;

import io.strata.client.WorkerWrittenFile;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * One registered shuffle as the driver knows it: the newest epoch of each partition, the epochs open on
 * workers (with their files' write handles), the files sealed so far, the partitions lost, and the revives
 * and the seal in progress. Shared by {@code ShuffleLifecycle}, {@code EpochPlacer} and
 * {@code ShuffleSealer}.
 *
 * <p>Guarded by itself: every field is read and written with this object's monitor held, never across an
 * RPC (callers take what to do under it, call out without it, then record the outcome).
 */
final class ShuffleState {
  final String appId;
  final int shuffleId;
  /** The shuffle's directory, {@code /.shuffle/<app>/<shuffle>}. */
  final String dir;
  /** The newest epoch of each partition. */
  final PartitionLocation[] current;
  final Map<Long, WorkerWrittenFile> openFiles = new LinkedHashMap<>();
  /** The epochs open on workers, by file id: changed only through {@link #opened} and {@link #closed}. */
  final Map<Long, PartitionLocation> open = new LinkedHashMap<>();
  /** How many epochs of each partition are open (so a reader's partitions are looked up, not searched for). */
  private final int[] openPerPartition;
  final Map<Integer, List<String>> sealed = new HashMap<>();
  final Set<Integer> lost = new HashSet<>();
  /** The status with blocks of sealed files, by path, so readers need not ask the master for them. */
  final Map<String, io.strata.client.URIStatus> statuses = new HashMap<>();
  final Map<Integer, CompletableFuture<PartitionLocation>> reviving = new HashMap<>();
  /** Workers pushers blamed in revives (host:port), so tests can tell which hop was blamed. */
  final Set<String> blamed = new HashSet<>();
  /**
   * The seal round running, or null: completed (and replaced while the round goes on) each time a part of it
   * is recorded, so readers waiting for their partitions look again; failed when the round fails.
   */
  CompletableFuture<Void> sealing;
  int rotation;
  /** {@link #sealedSoFar}'s answer until a seal round records something: a thousand readers ask for it. */
  private SealedShuffle snapshot;

  ShuffleState(String appId, int shuffleId, int partitions, String dir) {
    this.appId = appId;
    this.shuffleId = shuffleId;
    this.dir = dir;
    this.current = new PartitionLocation[partitions];
    this.openPerPartition = new int[partitions];
  }

  /**
   * Every worker an epoch was opened on (primaries and replicas, host:port): a worker keeps a sealed copy's
   * partition until the shuffle is dropped there, so {@code unregister} asks them all, not only those with an
   * epoch still open. At most the cluster's workers.
   */
  private final Set<String> workersUsed = new HashSet<>();

  /** Records an epoch opened on its workers. Call with the monitor held. */
  void opened(PartitionLocation l) {
    if (open.put(l.fileId(), l) == null) {
      openPerPartition[l.partitionId()]++;
    }
    workersUsed.add(l.primary());
    if (l.hasReplica()) {
      workersUsed.add(l.replica());
    }
  }

  /** The workers any epoch of this shuffle was opened on. Call with the monitor held. */
  Set<String> workersUsed() {
    return new HashSet<>(workersUsed);
  }

  /** Forgets an open epoch (sealed or lost) and its file's handle. Call with the monitor held. */
  void closed(long fileId) {
    PartitionLocation l = open.remove(fileId);
    openFiles.remove(fileId);
    if (l != null) {
      openPerPartition[l.partitionId()]--;
    }
  }

  /** Whether an epoch of a partition in [start, end) is open. Call with the monitor held. */
  boolean openIn(int start, int end) {
    if (open.isEmpty()) {
      return false;
    }
    for (int p = Math.max(0, start); p < Math.min(end, openPerPartition.length); p++) {
      if (openPerPartition[p] > 0) {
        return true;
      }
    }
    return false;
  }

  /** What earlier seal rounds left, copied once per change. Call with the monitor held. */
  SealedShuffle sealedSoFar() {
    if (snapshot == null) {
      Map<Integer, List<String>> files = new HashMap<>();
      for (Map.Entry<Integer, List<String>> e : sealed.entrySet()) {
        files.put(e.getKey(), List.copyOf(e.getValue()));
      }
      snapshot = new SealedShuffle(Map.copyOf(files), Map.copyOf(statuses), Set.copyOf(lost));
    }
    return snapshot;
  }

  /**
   * {@link #sealedSoFar} when no epoch of a partition in [start, end) is open (a seal of them would return it at
   * once, though a round may be sealing other partitions), else null. Call with the monitor held.
   */
  SealedShuffle sealedIfSettled(int start, int end) {
    return openIn(start, end) ? null : sealedSoFar();
  }

  /** Call (with the monitor held) after changing {@link #sealed}, {@link #statuses} or {@link #lost}. */
  void sealedChanged() {
    snapshot = null;
  }

  /** Forgets every open epoch and returns their files' handles. Call with the monitor held. */
  List<WorkerWrittenFile> clearOpen() {
    List<WorkerWrittenFile> files = new ArrayList<>(openFiles.values());
    open.clear();
    openFiles.clear();
    java.util.Arrays.fill(openPerPartition, 0);
    return files;
  }
}
