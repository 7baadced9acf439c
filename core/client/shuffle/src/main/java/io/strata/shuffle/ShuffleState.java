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
  final Map<Long, PartitionLocation> open = new LinkedHashMap<>();
  final Map<Integer, List<String>> sealed = new HashMap<>();
  final Set<Integer> lost = new HashSet<>();
  /** The status with blocks of sealed files, by path, so readers need not ask the master for them. */
  final Map<String, io.strata.client.URIStatus> statuses = new HashMap<>();
  final Map<Integer, CompletableFuture<PartitionLocation>> reviving = new HashMap<>();
  /** Workers pushers blamed in revives (host:port), so tests can tell which hop was blamed. */
  final Set<String> blamed = new HashSet<>();
  CompletableFuture<Void> sealing;
  int rotation;
  /** {@link #sealedSoFar}'s answer until a seal round records something: a thousand readers ask for it. */
  private SealedShuffle snapshot;

  ShuffleState(String appId, int shuffleId, int partitions, String dir) {
    this.appId = appId;
    this.shuffleId = shuffleId;
    this.dir = dir;
    this.current = new PartitionLocation[partitions];
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

  /** {@link #sealedSoFar} when nothing is open and no seal runs (a seal would return it at once), else null. */
  SealedShuffle sealedIfSettled() {
    return sealing == null && open.isEmpty() ? sealedSoFar() : null;
  }

  /** Call (with the monitor held) after changing {@link #sealed}, {@link #statuses} or {@link #lost}. */
  void sealedChanged() {
    snapshot = null;
  }

  /** The workers holding an open epoch (primaries and replicas). Call with the monitor held. */
  Set<String> openWorkers() {
    Set<String> workers = new HashSet<>();
    for (PartitionLocation l : open.values()) {
      workers.add(l.primary());
      if (l.hasReplica()) {
        workers.add(l.replica());
      }
    }
    return workers;
  }

  /** Forgets every open epoch and returns their files' handles. Call with the monitor held. */
  List<WorkerWrittenFile> clearOpen() {
    List<WorkerWrittenFile> files = new ArrayList<>(openFiles.values());
    open.clear();
    openFiles.clear();
    return files;
  }
}
