package io.strata.shuffle;

import io.strata.client.FileSystem;
import io.strata.client.MountInfo;
import io.strata.client.WorkerWrittenFile;
import io.strata.proto.DropPartitionsRequest;
import io.strata.proto.SealRequest;
import io.strata.proto.SealResponse;
import io.strata.proto.SealedPartitionProto;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seals a shuffle at stage end: every open epoch, per epoch as follows. The primary commits its blocks
 * and writes the under file system copy; then, with a shared UFS (the mount's {@code shared} flag), the
 * replica drops its copy once the file is complete, and with a node-local UFS the replica commits its copy
 * too when its length and CRC are the primary's (else it drops it). When the primary fails, the replica's
 * copy is sealed and written through instead, after the primary has dropped whatever it committed (the two
 * copies' blocks share ids and the replica's may be shorter; a primary that committed and cannot drop its copy
 * loses the partition instead), and its commits replace the primary's copy at the master (so a primary that
 * committed, died unanswered and comes back with its store is never listed again). An epoch with neither is lost: its file is deleted and the
 * partition reported lost, so Spark recomputes the stage. Sealed files are completed at the master, so each
 * is a normal, complete, persisted Strata file.
 *
 * <p>A round seals in parts, smallest first, beginning at the partitions of the reader that started it: the
 * readers of a part's partitions go on as soon as it is recorded, while the round seals the next (the seal
 * overlaps the reduce stage instead of holding every reduce task until the last partition is sealed).
 *
 * <p>Thread-safe: one seal round at a time per shuffle, on the seal pool (a caller finds one running and waits
 * for its next part, then looks again); the {@link ShuffleState} is locked only to read and record, never across a
 * call. One seal request per worker per part; the completes go {@link #COMPLETE_BATCH} files per master call
 * ({@link WorkerWrittenFile#completeAll}, one journal flush each, answered with each file's status and
 * blocks, so readers open their files without asking the master), the calls side by side on the
 * {@link WorkerCalls} pool.
 */
final class ShuffleSealer {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleSealer.class);
  /** Files per CompleteFiles call: a few calls side by side rather than one, to use the master's cores. */
  static final int COMPLETE_BATCH = 250;
  /** Epochs in a round's first part: small, so the first readers start soon; each later part is twice as big. */
  static final int FIRST_PART = 32;

  private final FileSystem fs;
  private final WorkerCalls calls;
  /** Runs seal rounds (one at a time per shuffle), so no reader's task waits for more than its own part. */
  private final java.util.concurrent.Executor pool;

  ShuffleSealer(FileSystem fs, WorkerCalls calls, java.util.concurrent.Executor pool) {
    this.fs = fs;
    this.calls = calls;
    this.pool = pool;
  }

  /**
   * Seals every open epoch of the shuffle (see the class comment) and returns every sealed file per
   * partition and the partitions with a lost epoch. Idempotent: with nothing open, it returns what earlier
   * rounds sealed. Blocks for RPCs and UFS writes (on the workers).
   */
  SealedShuffle seal(ShuffleState s) throws IOException {
    return seal(s, 0, s.current.length);
  }

  /**
   * Returns once no epoch of a partition in [start, end) is open: what the seal rounds left so far (every sealed
   * file per partition, the partitions with a lost epoch). When one is open and no round runs, starts one on the
   * seal pool for every open epoch, in parts ({@link #parts}) beginning at {@code start}; a reader waits only for
   * the part holding its partitions, and the rest of the round goes on while it reads. Fails when the round fails
   * (a later call starts another for what is still open).
   */
  SealedShuffle seal(ShuffleState s, int start, int end) throws IOException {
    while (true) {
      java.util.concurrent.CompletableFuture<Void> progress;
      List<PartitionLocation> open = null;
      synchronized (s) {
        SealedShuffle settled = s.sealedIfSettled(start, end);
        if (settled != null) {
          return settled;
        }
        progress = s.sealing;
        if (progress == null) {
          // One seal round at a time per shuffle: readers asking meanwhile wait for its parts (no lock held).
          progress = new java.util.concurrent.CompletableFuture<>();
          s.sealing = progress;
          open = new ArrayList<>(s.open.values());
        }
      }
      if (open != null) {
        List<List<PartitionLocation>> parts = parts(open, start);
        try {
          pool.execute(() -> sealInParts(s, parts));
        } catch (java.util.concurrent.RejectedExecutionException e) {
          sealInParts(s, parts); // every seal thread is busy, or the pool is closing: seal on this thread
        } catch (RuntimeException | Error e) {
          // No round started (no thread for it): clear it, or every later reader would wait for it forever.
          notStarted(s, progress);
          progress.completeExceptionally(e);
          throw e;
        }
      }
      WorkerCalls.get(progress, "Waiting for the seal of shuffle " + s.shuffleId);
    }
  }

  /**
   * Starts a seal round of every open epoch on the seal pool when none runs, and returns at once (the map stage
   * ended: the readers to come find the round under way, or done). Never blocks and never runs the round on the
   * caller's thread: with no seal thread free it leaves the round to the first reader, as without it.
   */
  void sealAhead(ShuffleState s) {
    java.util.concurrent.CompletableFuture<Void> progress = new java.util.concurrent.CompletableFuture<>();
    List<PartitionLocation> open;
    synchronized (s) {
      if (s.sealing != null || s.open.isEmpty()) {
        return;
      }
      s.sealing = progress;
      open = new ArrayList<>(s.open.values());
    }
    List<List<PartitionLocation>> parts = parts(open, 0);
    try {
      pool.execute(() -> sealInParts(s, parts));
    } catch (RuntimeException | Error e) {
      // A reader that found this round waits on it: it looks again, finds none, and starts its own.
      notStarted(s, progress);
      progress.complete(null);
      LOG.debug("No seal thread free to seal shuffle {} at its stage end ({}); its first reader will", s.shuffleId,
          e.toString());
    }
  }

  /** Forgets a round that never started, so later callers start their own. */
  private static void notStarted(ShuffleState s, java.util.concurrent.CompletableFuture<Void> round) {
    synchronized (s) {
      if (s.sealing == round) {
        s.sealing = null;
      }
    }
  }

  /**
   * The open epochs in the order a round seals them, cut into parts of {@link #FIRST_PART} epochs, each part twice
   * the one before (the last takes what is left when less than another part would): by partition, beginning at
   * {@code from} and wrapping around (the first reader's partitions first, then those readers come to next), each
   * partition's epochs in epoch order.
   */
  static List<List<PartitionLocation>> parts(List<PartitionLocation> open, int from) {
    List<PartitionLocation> ordered = new ArrayList<>(open);
    ordered.sort(java.util.Comparator.<PartitionLocation>comparingInt(l -> l.partitionId() < from ? 1 : 0)
        .thenComparingInt(PartitionLocation::partitionId).thenComparingInt(PartitionLocation::epoch));
    List<List<PartitionLocation>> out = new ArrayList<>();
    int size = FIRST_PART;
    for (int i = 0; i < ordered.size(); ) {
      int to = ordered.size() - i < 2 * size ? ordered.size() : i + size;
      out.add(List.copyOf(ordered.subList(i, to)));
      i = to;
      size *= 2;
    }
    return out;
  }

  /**
   * One seal round, on the seal pool: seals the parts in order, recording each before the next starts and waking
   * the readers waiting for it; on a failure the rest stay open and the waiting readers get the failure.
   */
  private void sealInParts(ShuffleState s, List<List<PartitionLocation>> parts) {
    Throwable failure = null;
    long startNs = System.nanoTime();
    try {
      boolean shared = sharedUfs(s);
      for (int i = 0; i < parts.size(); i++) {
        sealRound(s, parts.get(i), shared);
        if (i < parts.size() - 1) {
          java.util.concurrent.CompletableFuture<Void> done;
          synchronized (s) {
            done = s.sealing;
            s.sealing = new java.util.concurrent.CompletableFuture<>();
          }
          done.complete(null);
        }
      }
    } catch (IOException | RuntimeException | Error e) {
      failure = e;
    }
    java.util.concurrent.CompletableFuture<Void> last;
    synchronized (s) {
      last = s.sealing;
      s.sealing = null;
    }
    if (failure == null) {
      LOG.info("Sealed shuffle {} in {} parts ({} epochs) in {} ms", s.shuffleId, parts.size(),
          parts.stream().mapToInt(List::size).sum(), ms(System.nanoTime() - startNs));
      last.complete(null);
    } else {
      LOG.warn("Sealing shuffle {} failed: {}; what it did not seal stays open for the next round", s.shuffleId,
          failure.toString());
      last.completeExceptionally(failure);
    }
  }

  private void sealRound(ShuffleState s, List<PartitionLocation> open, boolean shared) throws IOException {
    long startNs = System.nanoTime();
    Set<Long> unanswered = new HashSet<>();
    Map<Long, SealedPartitionProto> primary = sealOn(s, open, PartitionLocation::primary, true, Map.of(), unanswered,
        false);
    long primariesNs = System.nanoTime();
    // The replica's copy is sealed in the primary's place. Its blocks have the primary's block ids, and the
    // replica's copy is the primary's bytes up to where it ends but may end sooner (a forward that failed), so
    // the two must never be listed together: the primary's copy, committed blocks too, is dropped first. A
    // primary that failed before (or part-way through) its commit has removed what it committed already; one
    // that committed whole and then failed (its UFS write did) says so, and unless it drops its copy now the
    // partition is lost (Spark recomputes it); one that did not answer is asked to drop, best effort.
    List<PartitionLocation> fromReplica = new ArrayList<>();
    List<Long> dropOnPrimary = new ArrayList<>();
    Set<Long> mustDrop = new HashSet<>();
    List<PartitionLocation> replicaAlso = new ArrayList<>();
    for (PartitionLocation l : open) {
      SealedPartitionProto r = primary.get(l.fileId());
      if (r == null || !r.getError().isEmpty()) {
        boolean committed = r != null && r.getCommitted();
        LOG.warn("Sealing {} on its primary failed ({}); {}", l, r == null ? "no answer" : r.getError(),
            !l.hasReplica() ? "it has no replica: the partition is lost"
                : committed ? "its blocks were committed first: dropping them, then sealing its replica"
                : "sealing its replica");
        if (!l.hasReplica()) {
          continue;
        }
        if (committed) {
          mustDrop.add(l.fileId());
          dropOnPrimary.add(l.fileId());
        } else if (r == null || unanswered.contains(l.fileId())) {
          dropOnPrimary.add(l.fileId());
        }
        fromReplica.add(l);
      } else if (l.hasReplica() && !shared) {
        replicaAlso.add(l);
      }
    }
    Set<String> dropFailed = drop(s, open, dropOnPrimary, PartitionLocation::primary);
    fromReplica.removeIf(l -> {
      boolean keep = !mustDrop.contains(l.fileId()) || !dropFailed.contains(l.primary());
      if (!keep) {
        LOG.warn("{}: its primary committed its copy and cannot drop it now; not sealing the replica's beside it, "
            + "the partition is lost", l);
      }
      return !keep;
    });
    Map<Long, SealedPartitionProto> replica = new HashMap<>(
        sealOn(s, fromReplica, PartitionLocation::replica, true, Map.of(), new HashSet<>(), true));
    Map<Long, SealedPartitionProto> copies = sealOn(s, replicaAlso, PartitionLocation::replica, false, primary,
        new HashSet<>(), false);
    // Completing makes each file a normal, complete, persisted Strata file: batches of COMPLETE_BATCH files per
    // master call (one journal flush each), side by side, each answer the file's status with its blocks.
    long copiesNs = System.nanoTime();
    Map<PartitionLocation, Boolean> outcome = new LinkedHashMap<>();
    Map<String, io.strata.client.URIStatus> completed = new HashMap<>();
    List<PartitionLocation> toComplete = new ArrayList<>();
    List<WorkerWrittenFile> files = new ArrayList<>();
    List<Long> lengths = new ArrayList<>();
    List<Future<Boolean>> abandoning = new ArrayList<>();
    for (PartitionLocation l : open) {
      SealedPartitionProto r = primary.get(l.fileId());
      if (r == null || !r.getError().isEmpty()) {
        r = replica.get(l.fileId());
      }
      WorkerWrittenFile f;
      synchronized (s) {
        f = s.openFiles.get(l.fileId());
      }
      if (r == null || !r.getError().isEmpty()) {
        if (r != null) {
          LOG.warn("Sealing {} on its replica failed ({}); the partition is lost", l, r.getError());
        }
        outcome.put(l, false);
        abandoning.add(calls.submit(() -> {
          f.abandon();
          return false;
        }));
        continue;
      }
      toComplete.add(l);
      files.add(f);
      lengths.add(r.getLength());
    }
    List<Future<List<WorkerWrittenFile.Completion>>> batches = new ArrayList<>();
    for (int from = 0; from < files.size(); from += COMPLETE_BATCH) {
      int to = Math.min(files.size(), from + COMPLETE_BATCH);
      List<WorkerWrittenFile> batch = files.subList(from, to);
      long[] len = lengths.subList(from, to).stream().mapToLong(Long::longValue).toArray();
      batches.add(calls.submit(() -> WorkerWrittenFile.completeAll(batch, len)));
    }
    for (int b = 0; b < batches.size(); b++) {
      int from = b * COMPLETE_BATCH;
      List<WorkerWrittenFile.Completion> got;
      try {
        got = WorkerCalls.get(batches.get(b), "Completing " + (Math.min(files.size(), from + COMPLETE_BATCH) - from)
            + " partition files of shuffle " + s.shuffleId);
      } catch (IOException ex) {
        LOG.warn("Completing partition files {} to {} of shuffle {} failed: {}; those partitions are lost",
            toComplete.get(from), toComplete.get(Math.min(files.size(), from + COMPLETE_BATCH) - 1), s.shuffleId,
            ex.getMessage());
        got = null;
      }
      for (int i = from; i < Math.min(files.size(), from + COMPLETE_BATCH); i++) {
        PartitionLocation l = toComplete.get(i);
        WorkerWrittenFile.Completion c = got == null ? null : got.get(i - from);
        if (c != null && c.error() != null) {
          LOG.warn("Completing {} failed: {}; the partition is lost", l, c.error().getMessage());
        }
        boolean ok = c != null && c.error() == null;
        outcome.put(l, ok);
        if (ok) {
          completed.put(l.path(), c.status());
        }
      }
    }
    for (Future<Boolean> a : abandoning) {
      try {
        WorkerCalls.get(a, "Abandoning a partition file of shuffle " + s.shuffleId);
      } catch (IOException ex) {
        LOG.debug("Abandoning a partition file of shuffle {}: {}", s.shuffleId, ex.getMessage());
      }
    }
    long completesNs = System.nanoTime();
    List<Long> dropOnReplica = new ArrayList<>();
    List<PartitionLocation> refetch = new ArrayList<>();
    synchronized (s) {
      for (Map.Entry<PartitionLocation, Boolean> e : outcome.entrySet()) {
        PartitionLocation l = e.getKey();
        boolean ok = e.getValue();
        if (ok) {
          s.sealed.computeIfAbsent(l.partitionId(), k -> new ArrayList<>()).add(l.path());
          SealedPartitionProto c = copies.get(l.fileId());
          // A replica that was asked to commit beside its primary and dropped its copy without any block reaching
          // the master (it differed, as it mostly does: the primary forwards pushes side by side) needs no drop,
          // and the complete's status lists no block of it.
          boolean replicaGone = c != null && !c.getError().isEmpty() && c.getDropped();
          if (l.hasReplica() && !replica.containsKey(l.fileId()) && !replicaGone
              && (shared || c == null || !c.getError().isEmpty())) {
            dropOnReplica.add(l.fileId());
            if (!shared && c != null) {
              // The replica was asked to commit and failed: a block it did commit may be in the status the
              // complete answered with, and goes with the drop, so this one's status is asked for after it.
              completed.remove(l.path());
              refetch.add(l);
            }
          }
        } else {
          s.lost.add(l.partitionId());
        }
      }
      s.statuses.putAll(completed);
      s.sealedChanged();
    }
    try {
      drop(s, open, dropOnReplica, PartitionLocation::replica);
      statuses(s, refetch);
    } finally {
      // Only now are these epochs settled: a reader never sees a file whose replica's drop or status is still to
      // come (the part's files are recorded above, but readers look only once no epoch of theirs is open).
      synchronized (s) {
        for (PartitionLocation l : outcome.keySet()) {
          s.closed(l.fileId());
        }
        s.sealedChanged();
      }
    }
    LOG.info("Sealed {} of {} partition files of shuffle {} in {} ms: primaries {} ms, replicas {} ms, completes {} ms, "
        + "drops {} ms", outcome.values().stream().filter(ok -> ok).count(), open.size(), s.shuffleId,
        ms(System.nanoTime() - startNs), ms(primariesNs - startNs), ms(copiesNs - primariesNs),
        ms(completesNs - copiesNs), ms(System.nanoTime() - completesNs));
  }

  private static long ms(long nanos) {
    return java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  /**
   * Gets the status with blocks of each of {@code files} (sealed, their replica copies dropped), side by side:
   * each reduce task then opens its files without a master call of its own. A status that cannot be had is
   * left out: that file's readers open it by its path.
   */
  private void statuses(ShuffleState s, List<PartitionLocation> files) {
    Map<String, Future<io.strata.client.URIStatus>> asked = new LinkedHashMap<>();
    for (PartitionLocation l : files) {
      asked.put(l.path(), calls.submit(() -> fs.getStatusWithBlocks(l.path())));
    }
    Map<String, io.strata.client.URIStatus> got = new HashMap<>();
    for (Map.Entry<String, Future<io.strata.client.URIStatus>> e : asked.entrySet()) {
      try {
        got.put(e.getKey(), WorkerCalls.get(e.getValue(), "Getting the status of " + e.getKey()));
      } catch (IOException | RuntimeException ex) {
        LOG.debug("No status for {} ({}); its readers open it by its path", e.getKey(), ex.getMessage());
      }
    }
    synchronized (s) {
      s.statuses.putAll(got);
      s.sealedChanged();
    }
  }

  /**
   * Drops the copies of {@code fileIds} (committed ones too) on the worker {@code where} names for each: a
   * replica's once the UFS copy is closed, or a failed primary's before its replica is sealed. Returns the
   * workers that could not be asked (logged).
   */
  private Set<String> drop(ShuffleState s, List<PartitionLocation> open, List<Long> fileIds,
      Function<PartitionLocation, String> where) {
    if (fileIds.isEmpty()) {
      return Set.of();
    }
    Map<String, DropPartitionsRequest.Builder> byWorker = new LinkedHashMap<>();
    Set<Long> want = new HashSet<>(fileIds);
    for (PartitionLocation l : open) {
      if (want.contains(l.fileId())) {
        byWorker.computeIfAbsent(where.apply(l), k -> DropPartitionsRequest.newBuilder().setAppId(s.appId)
            .setShuffleId(s.shuffleId).setDropCommitted(true)).addFileIds(l.fileId());
      }
    }
    Map<String, IOException> failed = calls.callEachWorker(byWorker,
        (worker, req) -> worker.dropPartitions(req.build()), "Dropping shuffle partition copies on worker ");
    for (Map.Entry<String, IOException> e : failed.entrySet()) {
      LOG.info("Worker {} kept its copies of shuffle partitions ({}); they go with the shuffle's files", e.getKey(),
          e.getValue().getMessage());
    }
    return failed.keySet();
  }

  /**
   * Seals {@code locs} on the worker {@code where} names for each, one request per worker, in parallel;
   * a worker that fails answers an error for each of its partitions, and their file ids go to
   * {@code unanswered}. With {@code expect}, each copy must have the length and CRC of the expected answer (a
   * replica committing beside its primary). With {@code inPlace}, each copy is sealed in place of its primary
   * (SealRequest.in_place_of): its commits replace the primary's copy at the master, whether or not the primary
   * committed one and lives.
   */
  private Map<Long, SealedPartitionProto> sealOn(ShuffleState s, List<PartitionLocation> locs,
      Function<PartitionLocation, String> where, boolean writeThrough, Map<Long, SealedPartitionProto> expect,
      Set<Long> unanswered, boolean inPlace) throws IOException {
    Map<String, SealRequest.Builder> byWorker = new LinkedHashMap<>();
    for (PartitionLocation l : locs) {
      SealRequest.Builder b = byWorker.computeIfAbsent(where.apply(l), k -> SealRequest.newBuilder()
          .setAppId(s.appId).setShuffleId(s.shuffleId).setWriteThrough(writeThrough));
      b.addFileIds(l.fileId());
      if (inPlace) {
        b.addInPlaceOf(l.primary());
      }
      SealedPartitionProto e = expect.get(l.fileId());
      if (e != null) {
        b.addExpectLength(e.getLength());
        b.addExpectCrc32C(e.getCrc32C());
      }
    }
    Map<Long, SealedPartitionProto> out = new HashMap<>();
    Map<String, Future<SealResponse>> answers = new LinkedHashMap<>();
    for (Map.Entry<String, SealRequest.Builder> e : byWorker.entrySet()) {
      String worker = e.getKey();
      SealRequest req = e.getValue().build();
      // Seals write whole files to the UFS: give them longer than a plain RPC.
      answers.put(worker, calls.submit(() -> calls.stub(worker, calls.rpcTimeoutMs() * 10).seal(req)));
    }
    for (Map.Entry<String, Future<SealResponse>> e : answers.entrySet()) {
      try {
        for (SealedPartitionProto p : WorkerCalls.get(e.getValue(), "Sealing shuffle partitions on worker "
            + e.getKey()).getPartitionsList()) {
          out.put(p.getFileId(), p);
        }
      } catch (IOException ex) {
        for (long id : byWorker.get(e.getKey()).getFileIdsList()) {
          out.put(id, SealedPartitionProto.newBuilder().setFileId(id).setError(ex.getMessage()).build());
          unanswered.add(id);
        }
      }
    }
    return out;
  }

  private boolean sharedUfs(ShuffleState s) throws IOException {
    String path = s.dir;
    MountInfo best = null;
    for (MountInfo m : fs.getMountTable()) {
      String mp = m.path();
      boolean covers = mp.equals("/") || path.equals(mp) || path.startsWith(mp + "/");
      if (covers && (best == null || mp.length() > best.path().length())) {
        best = m;
      }
    }
    return best == null || best.shared();
  }
}
