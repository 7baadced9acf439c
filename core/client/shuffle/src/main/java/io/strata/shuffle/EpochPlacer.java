package io.strata.shuffle;

import io.strata.client.FileSystem;
import io.strata.client.WorkerInfo;
import io.strata.client.WorkerWrittenFile;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.UnavailableException;
import io.strata.proto.DropPartitionsRequest;
import io.strata.proto.OpenPartitionsRequest;
import io.strata.proto.ShufflePartitionProto;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Places new epochs of a shuffle's partitions (at registration, all of them; at a revive, one): creates
 * each epoch's CACHE_THROUGH file at the master, incomplete, its primary and replica workers taken in turn
 * from the master's live workers, and opens it on those workers; a worker the master lists but that cannot
 * be reached is left out and the round placed again.
 *
 * <p>Thread-safe: the shuffle's {@link ShuffleState} is locked only to read and record, never across the
 * master or worker calls, which run side by side on the {@link WorkerCalls} pool (the creates
 * {@link #CREATE_BATCH} files per master call, {@link FileSystem#createWorkerWrittenFiles}).
 */
final class EpochPlacer {
  private static final Logger LOG = LoggerFactory.getLogger(EpochPlacer.class);
  /** Files per CreateFiles call: a few calls side by side rather than one, to use the master's cores. */
  static final int CREATE_BATCH = 250;

  private final FileSystem fs;
  private final WorkerCalls calls;
  private final long blockSize;
  private final boolean replicate;

  EpochPlacer(FileSystem fs, WorkerCalls calls, long blockSize, boolean replicate) {
    this.fs = fs;
    this.calls = calls;
    this.blockSize = blockSize;
    this.replicate = replicate;
  }

  /**
   * Creates the next epoch's files for {@code partitionIds} and opens them on their workers. A worker the
   * master still lists but that cannot be reached (it died within the master's heartbeat timeout), or that holds as
   * many partitions as it may, is left out and the round is placed again on the others: the files of the failed round are deleted and the
   * workers that opened them forget them. Any other refusal fails the call.
   */
  List<PartitionLocation> newEpochs(ShuffleState s, List<Integer> partitionIds, Set<String> badWorkers)
      throws IOException {
    Set<String> unreachable = new HashSet<>();
    while (true) { // each round leaves out at least one more worker; none left ends it with UNAVAILABLE
      List<PartitionLocation> out = placeEpochs(s, partitionIds, badWorkers, unreachable);
      Map<String, OpenPartitionsRequest.Builder> byWorker = new LinkedHashMap<>();
      for (PartitionLocation l : out) {
        ShufflePartitionProto.Builder spec = ShufflePartitionProto.newBuilder().setAppId(s.appId)
            .setShuffleId(s.shuffleId).setPartitionId(l.partitionId()).setFileId(l.fileId())
            .setBlockSize(l.blockSize());
        byWorker.computeIfAbsent(l.primary(), k -> OpenPartitionsRequest.newBuilder())
            .addPartitions(spec.clone().setReplicaHost(l.replicaHost()).setReplicaPort(l.replicaPort()));
        if (l.hasReplica()) {
          byWorker.computeIfAbsent(l.replica(), k -> OpenPartitionsRequest.newBuilder()).addPartitions(spec);
        }
      }
      Map<String, IOException> failed = calls.callEachWorker(byWorker, (worker, req) -> worker.openPartitions(req.build()),
          "Opening shuffle partitions on worker ");
      if (failed.isEmpty()) {
        synchronized (s) {
          for (PartitionLocation l : out) {
            s.opened(l);
          }
        }
        return out;
      }
      undoRound(s, out, byWorker.keySet(), failed.keySet());
      IOException first = failed.values().iterator().next();
      // Unreachable, or full (its limit of open partitions): placed on the others.
      if (!failed.values().stream().allMatch(e -> e instanceof UnavailableException
          || e instanceof io.strata.common.exception.ResourceExhaustedException)) {
        throw first;
      }
      LOG.warn("Shuffle {} of {}: worker(s) {} cannot open partitions ({}); placing them on the others",
          s.shuffleId, s.appId, failed.keySet(), first.getMessage());
      unreachable.addAll(failed.keySet());
    }
  }

  /** Forgets a round of epochs that did not open everywhere: its partitions and its files. Best effort. */
  private void undoRound(ShuffleState s, List<PartitionLocation> round, Set<String> asked, Set<String> failed) {
    List<Long> ids = new ArrayList<>();
    List<WorkerWrittenFile> files = new ArrayList<>();
    synchronized (s) {
      for (PartitionLocation l : round) {
        ids.add(l.fileId());
        WorkerWrittenFile f = s.openFiles.remove(l.fileId());
        if (f != null) {
          files.add(f);
        }
      }
    }
    Map<String, DropPartitionsRequest.Builder> byWorker = new LinkedHashMap<>();
    for (String w : asked) {
      if (!failed.contains(w)) {
        byWorker.put(w, DropPartitionsRequest.newBuilder().setAppId(s.appId).setShuffleId(s.shuffleId)
            .addAllFileIds(ids));
      }
    }
    calls.callEachWorker(byWorker, (worker, req) -> worker.dropPartitions(req.build()), "Dropping partitions on worker ");
    for (WorkerWrittenFile f : files) {
      f.abandon(); // deleted at the master; a worker that missed the drop hears of it in its heartbeat
    }
  }

  /**
   * Creates the files of the next epoch of {@code partitionIds}, placed on the workers in neither set; when
   * that leaves none, on the {@code badWorkers} too (a pusher names the primary it pushed to, or
   * names the replica instead when the primary says its replica failed), never on the {@code unreachable}
   * ones.
   */
  private List<PartitionLocation> placeEpochs(ShuffleState s, List<Integer> partitionIds, Set<String> badWorkers,
      Set<String> unreachable) throws IOException {
    List<WorkerInfo> reachable = new ArrayList<>();
    List<WorkerInfo> live = new ArrayList<>();
    for (WorkerInfo w : fs.getWorkers()) {
      String hostPort = w.address().host() + ":" + w.address().rpcPort();
      if (!unreachable.contains(hostPort)) {
        reachable.add(w);
        if (!badWorkers.contains(hostPort)) {
          live.add(w);
        }
      }
    }
    if (live.isEmpty()) {
      live = reachable;
    }
    if (live.isEmpty()) {
      Set<String> failed = new java.util.TreeSet<>(badWorkers);
      failed.addAll(unreachable);
      throw new UnavailableException("No live Strata worker to put shuffle partitions on"
          + (failed.isEmpty() ? "" : " (besides " + failed + ", which failed)"));
    }
    int n = live.size();
    int rotation;
    int[] epochs = new int[partitionIds.size()];
    synchronized (s) {
      rotation = s.rotation;
      s.rotation += partitionIds.size();
      for (int i = 0; i < epochs.length; i++) {
        PartitionLocation cur = s.current[partitionIds.get(i)];
        epochs[i] = cur == null ? 0 : cur.epoch() + 1;
      }
    }
    List<String> paths = new ArrayList<>(partitionIds.size());
    for (int i = 0; i < partitionIds.size(); i++) {
      paths.add(s.dir + "/" + partitionIds.get(i) + "-" + epochs[i]);
    }
    // CREATE_BATCH files per master call (one journal flush each), the calls side by side.
    CreateFileOptions options = CreateFileOptions.defaults().withWriteType(WriteType.CACHE_THROUGH)
        .withBlockSize(blockSize);
    List<Future<List<WorkerWrittenFile.Creation>>> made = new ArrayList<>();
    for (int from = 0; from < paths.size(); from += CREATE_BATCH) {
      List<String> batch = paths.subList(from, Math.min(paths.size(), from + CREATE_BATCH));
      made.add(calls.submit(() -> {
        List<WorkerWrittenFile.Creation> got = fs.createWorkerWrittenFiles(batch, options);
        synchronized (s) {
          for (WorkerWrittenFile.Creation c : got) {
            if (c.file() != null) {
              s.openFiles.put(c.file().status().id(), c.file());
            }
          }
        }
        return got;
      }));
    }
    List<PartitionLocation> out = new ArrayList<>();
    IOException failed = null;
    for (int b = 0; b < made.size(); b++) {
      List<WorkerWrittenFile.Creation> got;
      try {
        got = WorkerCalls.get(made.get(b), "Creating shuffle partition files");
      } catch (IOException e) {
        failed = failed == null ? e : failed;
        continue;
      }
      for (int k = 0; k < got.size(); k++) {
        int i = b * CREATE_BATCH + k;
        WorkerWrittenFile.Creation c = got.get(k);
        if (c.error() != null) {
          failed = failed == null ? c.error() : failed;
          continue;
        }
        WorkerInfo primary = live.get((rotation + i) % n);
        WorkerInfo replica = replicate && n > 1 ? live.get((rotation + i + 1) % n) : null;
        out.add(new PartitionLocation(partitionIds.get(i), epochs[i], c.file().status().id(), paths.get(i), blockSize,
            primary.address().host(), primary.address().rpcPort(),
            replica == null ? "" : replica.address().host(), replica == null ? 0 : replica.address().rpcPort()));
      }
    }
    if (failed != null) {
      throw failed;
    }
    return out;
  }
}
