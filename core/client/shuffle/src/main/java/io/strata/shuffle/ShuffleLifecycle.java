package io.strata.shuffle;

import io.strata.client.FileSystem;
import io.strata.client.WorkerWrittenFile;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.common.exception.NotFoundException;
import io.strata.proto.DropPartitionsRequest;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side of a Strata shuffle, independent of Spark: registers a shuffle (one Strata file per
 * partition under {@code /.shuffle/<app>/<shuffle>/}, placed by an {@link EpochPlacer}), hands out new
 * epochs on revive (one new location however many ask for the same failed one), seals every open epoch at
 * stage end (a {@link ShuffleSealer}), and removes a shuffle's files. Epoch files are named
 * {@code <partition>-<epoch>}.
 *
 * <p>Thread-safe: the registry is guarded by this object, each shuffle's {@link ShuffleState} by itself,
 * neither held across an RPC: register, revive and seal take what to do under the lock, call out without
 * it, then record the outcome; a revive of a partition already being revived, and a seal while one runs,
 * wait for that one's future.
 */
public final class ShuffleLifecycle implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleLifecycle.class);
  public static final String ROOT = io.strata.common.shuffle.AppIds.ROOT;
  /** Each application's driver marker ({@link #holdDriverMarker}); null for one that could not be made. Guarded. */
  private final java.util.Map<String, WorkerWrittenFile> markers = new java.util.HashMap<>();

  /** How partition files are made: block size, whether each gets a replica, RPC timeout, parallelism. */
  public record Settings(long blockSize, boolean replicate, long rpcTimeoutMs, int threads) {}

  private final FileSystem fs;
  private final WorkerCalls calls;
  private final EpochPlacer placer;
  private final ShuffleSealer sealer;
  /**
   * Runs seal rounds: one at a time per shuffle, at most {@link #SEAL_THREADS} at once (past that the reader that
   * starts a round runs it on its own thread).
   */
  private final java.util.concurrent.ExecutorService sealPool;
  private final Map<Integer, ShuffleState> shuffles = new HashMap<>();

  public ShuffleLifecycle(FileSystem fs, ShuffleChannels channels, Settings settings) {
    this.fs = fs;
    this.calls = new WorkerCalls(channels, settings.rpcTimeoutMs(), settings.threads());
    this.placer = new EpochPlacer(fs, calls, settings.blockSize(), settings.replicate());
    this.sealPool = newSealPool();
    this.sealer = new ShuffleSealer(fs, calls, sealPool);
  }

  static final int SEAL_THREADS = 16;

  private static java.util.concurrent.ExecutorService newSealPool() {
    java.util.concurrent.ThreadPoolExecutor p = new java.util.concurrent.ThreadPoolExecutor(0, SEAL_THREADS, 30,
        java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.SynchronousQueue<>(), r -> {
          Thread t = new Thread(r, "strata-shuffle-seal");
          t.setDaemon(true);
          return t;
        });
    return p;
  }

  public static String dir(String appId, int shuffleId) {
    return ROOT + "/" + appId + "/" + shuffleId;
  }

  /** Registers a shuffle of {@code partitions} partitions; returns epoch 0 of each. Blocks for RPCs. */
  public List<PartitionLocation> register(String appId, int shuffleId, int partitions) throws IOException {
    io.strata.common.shuffle.AppIds.check(appId);
    ShuffleState s = new ShuffleState(appId, shuffleId, partitions, dir(appId, shuffleId));
    synchronized (this) {
      if (shuffles.containsKey(shuffleId)) {
        throw new io.strata.common.exception.AlreadyExistsException("Shuffle " + shuffleId + " is registered already");
      }
      shuffles.put(shuffleId, s);
    }
    try {
      holdDriverMarker(appId);
      fs.createDirectory(dir(appId, shuffleId), CreateDirectoryOptions.defaults().withRecursive(true)
          .withAllowExists(true));
      List<Integer> all = new ArrayList<>(partitions);
      for (int p = 0; p < partitions; p++) {
        all.add(p);
      }
      List<PartitionLocation> made = placer.newEpochs(s, all, Set.of());
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
   * A new epoch for a partition whose pushes to {@code failed} failed (or found it sealed), avoiding
   * {@code badWorkers} (the worker whose hop failed) where another is left. When another caller already
   * replaced that epoch, its newer location is returned, so many revives of one location give one new
   * location. Blocks for RPCs.
   */
  public PartitionLocation revive(int shuffleId, int partitionId, int failedEpoch, Set<String> badWorkers)
      throws IOException {
    ShuffleState s = state(shuffleId);
    CompletableFuture<PartitionLocation> mine = null;
    CompletableFuture<PartitionLocation> theirs;
    synchronized (s) {
      if (partitionId < 0 || partitionId >= s.current.length) {
        throw new io.strata.common.exception.InvalidArgumentException("Shuffle " + shuffleId + " has no partition "
            + partitionId);
      }
      s.blamed.addAll(badWorkers);
      PartitionLocation cur = s.current[partitionId];
      if (cur.epoch() > failedEpoch) {
        return cur;
      }
      theirs = s.reviving.get(partitionId);
      if (theirs == null) {
        mine = new CompletableFuture<>();
        s.reviving.put(partitionId, mine);
        theirs = mine;
      }
    }
    if (mine != null) {
      try {
        PartitionLocation next = placer.newEpochs(s, List.of(partitionId), badWorkers).get(0);
        synchronized (s) {
          s.current[partitionId] = next;
          s.reviving.remove(partitionId);
        }
        mine.complete(next);
      } catch (IOException | RuntimeException | Error e) {
        // An Error too: left pending, the entry would hold every later revive of this partition for ever.
        synchronized (s) {
          s.reviving.remove(partitionId);
        }
        mine.completeExceptionally(e);
        if (e instanceof Error err) {
          throw err;
        }
      }
    }
    return WorkerCalls.get(theirs, "Reviving partition " + partitionId + " of shuffle " + shuffleId);
  }

  /** The newest epoch of each partition now (writers of a later stage attempt start from these). */
  public List<PartitionLocation> current(int shuffleId) throws IOException {
    ShuffleState s = state(shuffleId);
    synchronized (s) {
      return List.of(s.current.clone());
    }
  }

  /** Every worker (host:port) a revive of this shuffle was asked to avoid so far. */
  Set<String> blamedWorkers(int shuffleId) throws IOException {
    ShuffleState s = state(shuffleId);
    synchronized (s) {
      return Set.copyOf(s.blamed);
    }
  }

  /**
   * Seals every open epoch of the shuffle (see {@link ShuffleSealer}) and returns every sealed file per
   * partition and the partitions with a lost epoch. Idempotent: with nothing open, it returns what earlier
   * rounds sealed. Blocks for RPCs and UFS writes (on the workers).
   */
  public SealedShuffle seal(int shuffleId) throws IOException {
    return sealer.seal(state(shuffleId));
  }

  /**
   * Returns once partitions [start, end) of the shuffle are sealed (a reader's): starts a seal round of every open
   * epoch when none runs, and returns when the part of it holding those partitions is recorded, while the round
   * goes on with the rest (see {@link ShuffleSealer#seal(ShuffleState, int, int)}). Blocks for RPCs and UFS writes.
   */
  public SealedShuffle seal(int shuffleId, int start, int end) throws IOException {
    return sealer.seal(state(shuffleId), start, end);
  }

  /**
   * Starts sealing the shuffle's open epochs in the background (its map stage ended) and returns at once; readers
   * then wait only for what is left of that round. Nothing happens for a shuffle that is not registered (any more),
   * or while a round runs.
   */
  public void sealAhead(int shuffleId) {
    ShuffleState s;
    synchronized (this) {
      s = shuffles.get(shuffleId);
    }
    if (s != null) {
      sealer.sealAhead(s);
    }
  }

  /**
   * What {@link #seal(int, int, int)} would return at once, without blocking: null while an epoch of a partition
   * in [start, end) is open.
   */
  SealedShuffle sealedIfSettled(int shuffleId, int start, int end) throws IOException {
    ShuffleState s = state(shuffleId);
    synchronized (s) {
      return s.sealedIfSettled(start, end);
    }
  }

  private ShuffleState state(int shuffleId) throws NotFoundException {
    synchronized (this) {
      ShuffleState s = shuffles.get(shuffleId);
      if (s == null) {
        throw new NotFoundException("Shuffle " + shuffleId + " is not registered with Strata");
      }
      return s;
    }
  }

  /**
   * Removes a shuffle: its workers drop what they hold of it, and its files are deleted (the master
   * removes their blocks from the workers and the UFS copies). Best effort; blocks for RPCs.
   */
  public void unregister(int shuffleId) {
    ShuffleState s;
    synchronized (this) {
      s = shuffles.remove(shuffleId);
    }
    if (s == null) {
      return;
    }
    Set<String> workers;
    List<WorkerWrittenFile> files;
    synchronized (s) {
      workers = s.workersUsed(); // sealed partitions too: a worker keeps them until the shuffle is dropped there
      files = s.clearOpen();
    }
    Map<String, DropPartitionsRequest.Builder> byWorker = new LinkedHashMap<>();
    for (String w : workers) {
      byWorker.put(w, DropPartitionsRequest.newBuilder().setAppId(s.appId).setShuffleId(shuffleId));
    }
    try {
      calls.forEachWorker(byWorker, (worker, req) -> worker.dropPartitions(req.build()),
          "Dropping shuffle partitions on worker ");
    } catch (IOException e) {
      LOG.info("Not every worker dropped shuffle {} ({}); their temp blocks expire", shuffleId, e.getMessage());
    }
    for (WorkerWrittenFile f : files) {
      f.abandon();
    }
    try {
      fs.delete(s.dir, DeleteOptions.defaults().withRecursive(true));
    } catch (IOException e) {
      LOG.warn("Cannot delete {}: {}", s.dir, e.getMessage());
    }
  }

  /**
   * Creates the application's driver marker ({@link io.strata.common.shuffle.AppIds#driverMarker}) once: an incomplete
   * file this client renews the lease of while it runs, so that the master deletes the application's shuffle files if
   * this driver dies without {@link #removeApp}. A marker that cannot be made is logged: the shuffles work without it.
   */
  private void holdDriverMarker(String appId) {
    String path = io.strata.common.shuffle.AppIds.driverMarker(appId);
    WorkerWrittenFile had;
    synchronized (markers) { // the map only: no RPC under it
      if (markers.containsKey(appId) && markers.get(appId) == null) {
        return; // could not be made once: not tried at every registration
      }
      had = markers.get(appId);
    }
    try {
      if (had != null) {
        if (fs.exists(path)) {
          return;
        }
        // Recovered: this driver did not renew for a lease timeout (a long pause). Made again, the master keeps the
        // application's files (it deletes them a lease timeout after the recovery, unless a marker is back).
        LOG.warn("The driver marker {} was recovered by the master: making it again", path);
      }
      fs.createDirectory(io.strata.common.shuffle.AppIds.DRIVERS, CreateDirectoryOptions.defaults()
          .withRecursive(true).withAllowExists(true));
      WorkerWrittenFile.Creation c = fs.createWorkerWrittenFiles(List.of(path),
          io.strata.client.options.CreateFileOptions.defaults()
              .withWriteType(io.strata.client.options.WriteType.MUST_CACHE)).get(0);
      if (c.file() == null) {
        throw c.error();
      }
      synchronized (markers) {
        markers.put(appId, c.file());
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("Cannot create the driver marker {}: the shuffle files of {} stay if this driver dies ({})", path,
          appId, e.toString());
      synchronized (markers) {
        markers.putIfAbsent(appId, null); // tried once (a marker a concurrent registration made stays)
      }
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
    WorkerWrittenFile marker;
    synchronized (markers) {
      marker = markers.remove(appId);
    }
    if (marker != null) {
      marker.abandon(); // last: were this driver to die before, the master would delete the rest
    }
  }

  @Override
  public void close() {
    sealPool.shutdownNow();
    calls.close();
  }
}
