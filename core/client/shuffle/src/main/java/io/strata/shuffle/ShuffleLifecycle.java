package io.strata.shuffle;

import io.strata.client.FileSystem;
import io.strata.client.MountInfo;
import io.strata.client.WorkerInfo;
import io.strata.client.WorkerWrittenFile;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.grpc.GrpcErrors;
import io.strata.proto.DropPartitionsRequest;
import io.strata.proto.OpenPartitionsRequest;
import io.strata.proto.SealRequest;
import io.strata.proto.SealResponse;
import io.strata.proto.SealedPartitionProto;
import io.strata.proto.ShufflePartitionProto;
import io.strata.proto.ShuffleWorkerServiceGrpc.ShuffleWorkerServiceBlockingStub;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side of a Strata shuffle, independent of Spark: registers a shuffle (one Strata file per
 * partition under {@code /.shuffle/<app>/<shuffle>/}, created CACHE_THROUGH and incomplete, each with a
 * primary and a replica worker from the master's live workers, opened on those workers), hands out new
 * epochs on revive (one new location however many ask for the same failed one), seals every open epoch
 * at stage end, and removes a shuffle's files.
 *
 * <p>Seal, per open epoch: the primary commits its blocks and writes the under file system copy; then,
 * with a shared UFS (the mount's {@code shared} flag), the replica drops its copy once the file is
 * complete, and with a node-local UFS the replica commits its copy too when its length and CRC are the
 * primary's (else it drops it). When the primary fails, the replica's copy is sealed and written through
 * instead. An epoch with neither is lost: its file is deleted and the partition reported lost, so Spark
 * recomputes the stage. Epoch files are named {@code <partition>-<epoch>}.
 *
 * <p>Thread-safe: one lock per shuffle state, never held across an RPC: register, revive and seal take
 * what to do under it, call out without it, then record the outcome; a revive of a partition already
 * being revived, and a seal while one runs, wait for that one's future.
 */
public final class ShuffleLifecycle implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleLifecycle.class);
  public static final String ROOT = "/.shuffle";

  /** How partition files are made: block size, whether each gets a replica, RPC timeout, parallelism. */
  public record Settings(long blockSize, boolean replicate, long rpcTimeoutMs, int threads) {}

  /** What a seal round leaves: every sealed file per partition (all epochs), and the partitions lost. */
  public record SealedShuffle(Map<Integer, List<String>> files, Set<Integer> lost) implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
  }

  private final FileSystem fs;
  private final ShuffleChannels channels;
  private final Settings settings;
  private final ExecutorService pool;
  private final Map<Integer, State> shuffles = new HashMap<>();

  /** One registered shuffle. Guarded by itself. */
  private static final class State {
    final String appId;
    final int shuffleId;
    /** The newest epoch of each partition. */
    final PartitionLocation[] current;
    final Map<Long, WorkerWrittenFile> openFiles = new LinkedHashMap<>();
    final Map<Long, PartitionLocation> open = new LinkedHashMap<>();
    final Map<Integer, List<String>> sealed = new HashMap<>();
    final Set<Integer> lost = new HashSet<>();
    final Map<Integer, java.util.concurrent.CompletableFuture<PartitionLocation>> reviving = new HashMap<>();
    java.util.concurrent.CompletableFuture<Void> sealing;
    int rotation;

    State(String appId, int shuffleId, int partitions) {
      this.appId = appId;
      this.shuffleId = shuffleId;
      this.current = new PartitionLocation[partitions];
    }
  }

  public ShuffleLifecycle(FileSystem fs, ShuffleChannels channels, Settings settings) {
    this.fs = fs;
    this.channels = channels;
    this.settings = settings;
    this.pool = Executors.newFixedThreadPool(settings.threads(), r -> {
      Thread t = new Thread(r, "strata-shuffle-lifecycle");
      t.setDaemon(true);
      return t;
    });
  }

  public static String dir(String appId, int shuffleId) {
    return ROOT + "/" + appId + "/" + shuffleId;
  }

  /** Registers a shuffle of {@code partitions} partitions; returns epoch 0 of each. Blocks for RPCs. */
  public List<PartitionLocation> register(String appId, int shuffleId, int partitions) throws IOException {
    io.strata.common.shuffle.AppIds.check(appId);
    State s = new State(appId, shuffleId, partitions);
    synchronized (this) {
      if (shuffles.containsKey(shuffleId)) {
        throw new io.strata.common.exception.AlreadyExistsException("Shuffle " + shuffleId + " is registered already");
      }
      shuffles.put(shuffleId, s);
    }
    try {
      fs.createDirectory(dir(appId, shuffleId), CreateDirectoryOptions.defaults().withRecursive(true)
          .withAllowExists(true));
      List<Integer> all = new ArrayList<>(partitions);
      for (int p = 0; p < partitions; p++) {
        all.add(p);
      }
      List<PartitionLocation> made = newEpochs(s, all, Set.of());
      synchronized (s) {
        for (PartitionLocation l : made) {
          s.current[l.partitionId()] = l;
        }
      }
      return made;
    } catch (IOException | RuntimeException e) {
      synchronized (this) {
        shuffles.remove(shuffleId);
      }
      throw e;
    }
  }

  /**
   * A new epoch for a partition whose pushes to {@code failed} failed (or found it sealed). When another
   * caller already replaced that epoch, its newer location is returned, so many revives of one location
   * give one new location. Blocks for RPCs.
   */
  public PartitionLocation revive(int shuffleId, int partitionId, int failedEpoch, Set<String> badWorkers)
      throws IOException {
    State s = state(shuffleId);
    java.util.concurrent.CompletableFuture<PartitionLocation> mine = null;
    java.util.concurrent.CompletableFuture<PartitionLocation> theirs;
    synchronized (s) {
      if (partitionId < 0 || partitionId >= s.current.length) {
        throw new io.strata.common.exception.InvalidArgumentException("Shuffle " + shuffleId + " has no partition "
            + partitionId);
      }
      PartitionLocation cur = s.current[partitionId];
      if (cur.epoch() > failedEpoch) {
        return cur;
      }
      theirs = s.reviving.get(partitionId);
      if (theirs == null) {
        mine = new java.util.concurrent.CompletableFuture<>();
        s.reviving.put(partitionId, mine);
        theirs = mine;
      }
    }
    if (mine != null) {
      try {
        PartitionLocation next = newEpochs(s, List.of(partitionId), badWorkers).get(0);
        synchronized (s) {
          s.current[partitionId] = next;
          s.reviving.remove(partitionId);
        }
        mine.complete(next);
      } catch (IOException | RuntimeException e) {
        synchronized (s) {
          s.reviving.remove(partitionId);
        }
        mine.completeExceptionally(e);
      }
    }
    return get(theirs, "Reviving partition " + partitionId + " of shuffle " + shuffleId);
  }

  /** The newest epoch of each partition now (writers of a later stage attempt start from these). */
  public List<PartitionLocation> current(int shuffleId) throws IOException {
    State s = state(shuffleId);
    synchronized (s) {
      return List.of(s.current.clone());
    }
  }

  private State state(int shuffleId) throws NotFoundException {
    synchronized (this) {
      State s = shuffles.get(shuffleId);
      if (s == null) {
        throw new NotFoundException("Shuffle " + shuffleId + " is not registered with Strata");
      }
      return s;
    }
  }

  /**
   * Creates the next epoch's files for {@code partitionIds} and opens them on their workers. A worker the
   * master still lists but that cannot be reached (it died within the master's heartbeat timeout) is left
   * out and the round is placed again on the others: the files of the failed round are deleted and the
   * workers that opened them forget them. Any other refusal fails the call.
   */
  private List<PartitionLocation> newEpochs(State s, List<Integer> partitionIds, Set<String> badWorkers)
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
      Map<String, IOException> failed = callEachWorker(byWorker, (worker, req) -> worker.openPartitions(req.build()),
          "Opening shuffle partitions on worker ");
      if (failed.isEmpty()) {
        synchronized (s) {
          for (PartitionLocation l : out) {
            s.open.put(l.fileId(), l);
          }
        }
        return out;
      }
      undoRound(s, out, byWorker.keySet(), failed.keySet());
      IOException first = failed.values().iterator().next();
      if (!failed.values().stream().allMatch(e -> e instanceof UnavailableException)) {
        throw first;
      }
      LOG.warn("Shuffle {} of {}: cannot reach worker(s) {} to open partitions ({}); placing them on the others",
          s.shuffleId, s.appId, failed.keySet(), first.getMessage());
      unreachable.addAll(failed.keySet());
    }
  }

  /** Forgets a round of epochs that did not open everywhere: its partitions and its files. Best effort. */
  private void undoRound(State s, List<PartitionLocation> round, Set<String> asked, Set<String> failed) {
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
    callEachWorker(byWorker, (worker, req) -> worker.dropPartitions(req.build()), "Dropping partitions on worker ");
    for (WorkerWrittenFile f : files) {
      f.abandon(); // deleted at the master; a worker that missed the drop hears of it in its heartbeat
    }
  }

  /**
   * Creates the files of the next epoch of {@code partitionIds}, placed on the workers in neither set; when
   * that leaves none, on the {@code badWorkers} too (a pusher names the primary it pushed to, which also
   * fails a push when only its replica is gone), never on the {@code unreachable} ones.
   */
  private List<PartitionLocation> placeEpochs(State s, List<Integer> partitionIds, Set<String> badWorkers,
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
    List<Future<PartitionLocation>> made = new ArrayList<>();
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
    for (int i = 0; i < partitionIds.size(); i++) {
      int p = partitionIds.get(i);
      int epoch = epochs[i];
      WorkerInfo primary = live.get((rotation + i) % n);
      WorkerInfo replica = settings.replicate() && n > 1 ? live.get((rotation + i + 1) % n) : null;
      String path = dir(s.appId, s.shuffleId) + "/" + p + "-" + epoch;
      made.add(pool.submit(() -> {
        WorkerWrittenFile f = fs.createWorkerWrittenFile(path, CreateFileOptions.defaults()
            .withWriteType(WriteType.CACHE_THROUGH).withBlockSize(settings.blockSize()));
        synchronized (s) {
          s.openFiles.put(f.status().id(), f);
        }
        return new PartitionLocation(p, epoch, f.status().id(), path, settings.blockSize(),
            primary.address().host(), primary.address().rpcPort(),
            replica == null ? "" : replica.address().host(), replica == null ? 0 : replica.address().rpcPort());
      }));
    }
    List<PartitionLocation> out = new ArrayList<>();
    for (Future<PartitionLocation> f : made) {
      out.add(get(f, "Creating a shuffle partition file"));
    }
    return out;
  }

  /**
   * Seals every open epoch of the shuffle (see the class comment) and returns every sealed file per
   * partition and the partitions with a lost epoch. Idempotent: with nothing open, it returns what earlier
   * rounds sealed. Blocks for RPCs and UFS writes (on the workers).
   */
  public SealedShuffle seal(int shuffleId) throws IOException {
    State s = state(shuffleId);
    while (true) {
      java.util.concurrent.CompletableFuture<Void> mine = null;
      java.util.concurrent.CompletableFuture<Void> theirs;
      List<PartitionLocation> open;
      synchronized (s) {
        theirs = s.sealing;
        open = new ArrayList<>(s.open.values());
        if (theirs == null && open.isEmpty()) {
          Map<Integer, List<String>> files = new HashMap<>();
          for (Map.Entry<Integer, List<String>> e : s.sealed.entrySet()) {
            files.put(e.getKey(), List.copyOf(e.getValue()));
          }
          return new SealedShuffle(files, Set.copyOf(s.lost));
        }
        if (theirs == null) {
          mine = new java.util.concurrent.CompletableFuture<>();
          s.sealing = mine;
          theirs = mine;
        }
      }
      if (mine != null) {
        // One seal round at a time per shuffle: readers asking at once wait for it (no lock held meanwhile).
        try {
          sealRound(s, open);
        } finally {
          synchronized (s) {
            s.sealing = null;
          }
          mine.complete(null);
        }
      } else {
        get(theirs, "Waiting for the seal of shuffle " + shuffleId);
      }
    }
  }

  private void sealRound(State s, List<PartitionLocation> open) throws IOException {
    boolean shared = sharedUfs(s);
    Map<Long, SealedPartitionProto> primary = sealOn(s, open, PartitionLocation::primary, true, Map.of());
    List<PartitionLocation> fromReplica = new ArrayList<>();
    List<PartitionLocation> replicaAlso = new ArrayList<>();
    for (PartitionLocation l : open) {
      SealedPartitionProto r = primary.get(l.fileId());
      if (r == null || !r.getError().isEmpty()) {
        LOG.warn("Sealing {} on its primary failed ({}); {}", l, r == null ? "no answer" : r.getError(),
            l.hasReplica() ? "sealing its replica" : "it has no replica: the partition is lost");
        if (l.hasReplica()) {
          fromReplica.add(l);
        }
      } else if (l.hasReplica() && !shared) {
        replicaAlso.add(l);
      }
    }
    Map<Long, SealedPartitionProto> replica = new HashMap<>(
        sealOn(s, fromReplica, PartitionLocation::replica, true, Map.of()));
    Map<Long, SealedPartitionProto> copies = sealOn(s, replicaAlso, PartitionLocation::replica, false, primary);
    // Completing makes each file a normal, complete, persisted Strata file.
    Map<PartitionLocation, Future<Boolean>> completing = new LinkedHashMap<>();
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
        completing.put(l, pool.submit(() -> {
          f.abandon();
          return false;
        }));
        continue;
      }
      long length = r.getLength();
      completing.put(l, pool.submit(() -> {
        f.complete(length);
        return true;
      }));
    }
    List<Long> dropOnReplica = new ArrayList<>();
    Map<PartitionLocation, Boolean> outcome = new LinkedHashMap<>();
    for (Map.Entry<PartitionLocation, Future<Boolean>> e : completing.entrySet()) {
      boolean ok;
      try {
        ok = get(e.getValue(), "Completing " + e.getKey().path());
      } catch (IOException ex) {
        LOG.warn("Completing {} failed: {}; the partition is lost", e.getKey(), ex.getMessage());
        ok = false;
      }
      outcome.put(e.getKey(), ok);
    }
    synchronized (s) {
      for (Map.Entry<PartitionLocation, Boolean> e : outcome.entrySet()) {
        PartitionLocation l = e.getKey();
        boolean ok = e.getValue();
        s.open.remove(l.fileId());
        s.openFiles.remove(l.fileId());
        if (ok) {
          s.sealed.computeIfAbsent(l.partitionId(), k -> new ArrayList<>()).add(l.path());
          SealedPartitionProto c = copies.get(l.fileId());
          if (l.hasReplica() && !replica.containsKey(l.fileId()) && (shared || c == null || !c.getError().isEmpty())) {
            dropOnReplica.add(l.fileId());
          }
        } else {
          s.lost.add(l.partitionId());
        }
      }
    }
    drop(s, open, dropOnReplica);
  }

  /** Drops the replica copies of {@code fileIds} (committed ones too): the UFS copy is closed. */
  private void drop(State s, List<PartitionLocation> open, List<Long> fileIds) {
    Map<String, DropPartitionsRequest.Builder> byWorker = new LinkedHashMap<>();
    Set<Long> want = new HashSet<>(fileIds);
    for (PartitionLocation l : open) {
      if (want.contains(l.fileId())) {
        byWorker.computeIfAbsent(l.replica(), k -> DropPartitionsRequest.newBuilder().setAppId(s.appId)
            .setShuffleId(s.shuffleId).setDropCommitted(true)).addFileIds(l.fileId());
      }
    }
    try {
      forEachWorker(byWorker, (worker, req) -> worker.dropPartitions(req.build()),
          "Dropping replica copies on worker ");
    } catch (IOException e) {
      LOG.info("A replica kept its copy of a sealed shuffle partition ({}); it goes with the shuffle's files",
          e.getMessage());
    }
  }

  /**
   * Seals {@code locs} on the worker {@code where} names for each, one request per worker, in parallel;
   * a worker that fails answers an error for each of its partitions. With {@code expect}, each copy must
   * have the length of the expected answer (a replica beside its primary).
   */
  private Map<Long, SealedPartitionProto> sealOn(State s, List<PartitionLocation> locs,
      Function<PartitionLocation, String> where, boolean writeThrough, Map<Long, SealedPartitionProto> expect)
      throws IOException {
    Map<String, SealRequest.Builder> byWorker = new LinkedHashMap<>();
    for (PartitionLocation l : locs) {
      SealRequest.Builder b = byWorker.computeIfAbsent(where.apply(l), k -> SealRequest.newBuilder()
          .setAppId(s.appId).setShuffleId(s.shuffleId).setWriteThrough(writeThrough));
      b.addFileIds(l.fileId());
      SealedPartitionProto e = expect.get(l.fileId());
      if (e != null) {
        b.addExpectLength(e.getLength());
        b.addExpectCrc32C(e.getCrc32C());
      }
    }
    Map<Long, SealedPartitionProto> out = new HashMap<>();
    Map<String, Future<SealResponse>> calls = new LinkedHashMap<>();
    for (Map.Entry<String, SealRequest.Builder> e : byWorker.entrySet()) {
      String worker = e.getKey();
      SealRequest req = e.getValue().build();
      // Seals write whole files to the UFS: give them longer than a plain RPC.
      calls.put(worker, pool.submit(() -> stub(worker, settings.rpcTimeoutMs() * 10).seal(req)));
    }
    for (Map.Entry<String, Future<SealResponse>> e : calls.entrySet()) {
      try {
        for (SealedPartitionProto p : get(e.getValue(), "Sealing shuffle partitions on worker " + e.getKey())
            .getPartitionsList()) {
          out.put(p.getFileId(), p);
        }
      } catch (IOException ex) {
        for (long id : byWorker.get(e.getKey()).getFileIdsList()) {
          out.put(id, SealedPartitionProto.newBuilder().setFileId(id).setError(ex.getMessage()).build());
        }
      }
    }
    return out;
  }

  private boolean sharedUfs(State s) throws IOException {
    String path = dir(s.appId, s.shuffleId);
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

  /**
   * Removes a shuffle: its workers drop what they hold of it, and its files are deleted (the master
   * removes their blocks from the workers and the UFS copies). Best effort; blocks for RPCs.
   */
  public void unregister(int shuffleId) {
    State s;
    synchronized (this) {
      s = shuffles.remove(shuffleId);
    }
    if (s == null) {
      return;
    }
    Set<String> workers = new HashSet<>();
    List<WorkerWrittenFile> files;
    synchronized (s) {
      for (PartitionLocation l : s.open.values()) {
        workers.add(l.primary());
        if (l.hasReplica()) {
          workers.add(l.replica());
        }
      }
      files = new ArrayList<>(s.openFiles.values());
      s.open.clear();
      s.openFiles.clear();
    }
    Map<String, DropPartitionsRequest.Builder> byWorker = new LinkedHashMap<>();
    for (String w : workers) {
      byWorker.put(w, DropPartitionsRequest.newBuilder().setAppId(s.appId).setShuffleId(shuffleId));
    }
    try {
      forEachWorker(byWorker, (worker, req) -> worker.dropPartitions(req.build()),
          "Dropping shuffle partitions on worker ");
    } catch (IOException e) {
      LOG.info("Not every worker dropped shuffle {} ({}); their temp blocks expire", shuffleId, e.getMessage());
    }
    for (WorkerWrittenFile f : files) {
      f.abandon();
    }
    try {
      fs.delete(dir(s.appId, shuffleId), DeleteOptions.defaults().withRecursive(true));
    } catch (IOException e) {
      LOG.warn("Cannot delete {}: {}", dir(s.appId, shuffleId), e.getMessage());
    }
  }

  /** Removes everything of an application (its shuffles not yet unregistered, and its directory). */
  public void removeApp(String appId) {
    List<Integer> ids;
    synchronized (this) {
      ids = new ArrayList<>(shuffles.keySet());
    }
    for (int id : ids) {
      unregister(id);
    }
    try {
      fs.delete(ROOT + "/" + appId, DeleteOptions.defaults().withRecursive(true));
    } catch (NotFoundException e) {
      // nothing was written
    } catch (IOException e) {
      LOG.warn("Cannot delete {}/{}: {}", ROOT, appId, e.getMessage());
    }
  }

  @FunctionalInterface
  private interface WorkerCall<R> {
    Object call(ShuffleWorkerServiceBlockingStub worker, R request) throws Exception;
  }

  /**
   * Calls every worker of {@code byWorker} (host:port) with its request, in parallel on the pool, each with
   * the plain RPC deadline; waits for all and throws the first failure ({@code doing} + the worker).
   */
  private <R> void forEachWorker(Map<String, R> byWorker, WorkerCall<R> call, String doing) throws IOException {
    Map<String, IOException> failed = callEachWorker(byWorker, call, doing);
    if (!failed.isEmpty()) {
      throw failed.values().iterator().next();
    }
  }

  /** Calls every worker at once; returns the failures by worker (in the map's order), empty when none. */
  private <R> Map<String, IOException> callEachWorker(Map<String, R> byWorker, WorkerCall<R> call, String doing) {
    Map<String, Future<Object>> calls = new LinkedHashMap<>();
    for (Map.Entry<String, R> e : byWorker.entrySet()) {
      calls.put(e.getKey(), pool.submit(() -> call.call(stub(e.getKey(), settings.rpcTimeoutMs()), e.getValue())));
    }
    Map<String, IOException> failed = new LinkedHashMap<>();
    for (Map.Entry<String, Future<Object>> e : calls.entrySet()) {
      try {
        get(e.getValue(), doing + e.getKey());
      } catch (IOException ex) {
        failed.put(e.getKey(), ex);
      }
    }
    return failed;
  }

  /** A blocking stub to the worker at {@code hostPort} whose deadline is {@code timeoutMs} from now. */
  private ShuffleWorkerServiceBlockingStub stub(String hostPort, long timeoutMs) {
    String[] hp = split(hostPort);
    return channels.blocking(hp[0], Integer.parseInt(hp[1])).withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
  }

  private static String[] split(String hostPort) {
    int i = hostPort.lastIndexOf(':');
    return new String[] {hostPort.substring(0, i), hostPort.substring(i + 1)};
  }

  private static <T> T get(Future<T> f, String doing) throws IOException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException(doing + ": interrupted");
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof IOException io) {
        throw io;
      }
      io.strata.common.exception.StrataException se = GrpcErrors.fromThrowable(c);
      throw se.code().toException(doing + ": " + se.getMessage(), se);
    }
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
