package io.strata.shuffle;

import java.io.Serializable;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import org.apache.spark.SparkEnv;
import org.apache.spark.rpc.RpcCallContext;
import org.apache.spark.rpc.RpcEndpoint;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.ShuffleBlockId;
import scala.Function1;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * The driver's Spark RPC endpoint ({@value #NAME}) through which executors reach the
 * {@link ShuffleLifecycle}: revive a partition's location, and get a shuffle's sealed files (a reader that finds
 * an epoch of its partitions open and no seal round running starts one; the map stage's end usually started it
 * already, see {@link StrataShuffleManager}). Requests are answered from the endpoint's own pools (one for seals,
 * one for revives: {@link #poolFor}), never on Spark's dispatcher threads, since seals take seconds; only a request for partitions sealed already, none lost, is
 * answered at once on the dispatcher thread (unless the answer is the whole shuffle's: a big message).
 *
 * <p>A lost partition epoch is answered with the map attempts (Spark's map ids) registered for that
 * partition when it was lost: a reader that finds one of them still registered raises a fetch failure,
 * so Spark runs the map stage again; once every map ran again, no registered attempt is suspect.
 *
 * <p>Thread-safe.
 */
final class DriverEndpoint implements RpcEndpoint {
  static final String NAME = "StrataShuffleDriver";

  /** Revive request: the location that failed, and the workers that failed. */
  record Revive(int shuffleId, int partitionId, int epoch, Set<String> badWorkers) implements Serializable {}

  /** Sealed-files request of a reader of partitions [start, end). */
  record GetSealed(int shuffleId, int start, int end) implements Serializable {}

  /**
   * Every sealed file of each asked partition, the statuses (with blocks) the driver has of those files, and per
   * lost partition the map ids whose data may be lost. {@code whole}: the answer holds every partition of the
   * shuffle, none open and none lost (an executor keeps it for its later readers of the same map output epoch).
   */
  record Sealed(Map<Integer, java.util.List<String>> files, Map<String, io.strata.client.URIStatus> statuses,
      Map<Integer, Set<Long>> suspects, boolean whole) implements Serializable {
    /** The part of a shuffle's seal a reader of [start, end) needs (a whole one is a thousand partitions). */
    static Sealed of(SealedShuffle s, Map<Integer, Set<Long>> suspects, int start, int end) {
      Map<Integer, java.util.List<String>> files = new HashMap<>();
      Map<String, io.strata.client.URIStatus> statuses = new HashMap<>();
      for (int p = Math.max(0, start); p < end; p++) {
        java.util.List<String> f = s.files().get(p);
        if (f != null) {
          files.put(p, f);
          for (String path : f) {
            io.strata.client.URIStatus st = s.statuses().get(path);
            if (st != null) {
              statuses.put(path, st);
            }
          }
        }
      }
      return new Sealed(files, statuses, suspects, false);
    }

    /** Every partition of a shuffle sealed whole with nothing lost (the maps are the seal's own, immutable). */
    static Sealed whole(SealedShuffle s) {
      return new Sealed(s.files(), s.statuses(), Map.of(), true);
    }
  }

  /**
   * The answer when every thread of the endpoint's pool is busy and its queue full: the asker pauses and asks again
   * ({@link StrataShuffleManager#ask}) rather than failing its task.
   */
  static final class Busy extends java.io.IOException {
    private static final long serialVersionUID = 1L;

    Busy(String message) {
      super(message);
    }
  }

  private final RpcEnv rpcEnv;
  private final ShuffleLifecycle lifecycle;
  /** Most requests of each kind (revives; seals) worked on at once, and queued behind them; past both, refused. */
  static final int THREADS = 8;
  static final int QUEUED_MAX = 4096;

  /**
   * Readers' asks for the seal, which wait while it runs (a large shuffle over a slow UFS: minutes), and revives,
   * which pushers wait for: on pools of their own, so that readers waiting on a seal cannot hold every thread while
   * another job's pushers, revived off a lost worker, wait out Spark's ask timeout and fail their tasks.
   */
  private final ExecutorService seals = newPool("strata-shuffle-driver-seal");
  private final ExecutorService revives = newPool("strata-shuffle-driver-revive");

  /** The pool that answers {@code m}. */
  ExecutorService poolFor(Object m) {
    return m instanceof Revive ? revives : seals;
  }

  /** Bounded: every executor of a large job may ask at once, and each answer may wait on workers. */
  private static ExecutorService newPool(String name) {
    java.util.concurrent.ThreadPoolExecutor p = new java.util.concurrent.ThreadPoolExecutor(THREADS, THREADS,
        60, java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.ArrayBlockingQueue<>(QUEUED_MAX), r -> {
          Thread t = new Thread(r, name);
          t.setDaemon(true);
          return t;
        });
    p.allowCoreThreadTimeOut(true);
    return p;
  }
  private final Map<Integer, Map<Integer, Set<Long>>> suspects = new HashMap<>();

  DriverEndpoint(RpcEnv rpcEnv, ShuffleLifecycle lifecycle) {
    this.rpcEnv = rpcEnv;
    this.lifecycle = lifecycle;
  }

  @Override
  public RpcEnv rpcEnv() {
    return rpcEnv;
  }

  @Override
  public scala.PartialFunction<Object, BoxedUnit> receiveAndReply(RpcCallContext context) {
    return new AbstractPartialFunction<>() {
      @Override
      public boolean isDefinedAt(Object m) {
        return m instanceof Revive || m instanceof GetSealed;
      }

      @Override
      public <A1, B1> B1 applyOrElse(A1 m, Function1<A1, B1> otherwise) {
        if (!isDefinedAt(m)) {
          return otherwise.apply(m);
        }
        @SuppressWarnings("unchecked")
        B1 unit = (B1) BoxedUnit.UNIT;
        Sealed ready = m instanceof GetSealed g ? settled(g) : null;
        if (ready != null && !ready.whole()) {
          context.reply(ready); // small: answered on the dispatcher thread
          return unit;
        }
        try {
          poolFor(m).execute(() -> {
            try {
              context.reply(m instanceof Revive r ? lifecycle.revive(r.shuffleId(), r.partitionId(), r.epoch(),
                  r.badWorkers()) : ready != null ? ready : sealed((GetSealed) m));
            } catch (Throwable t) {
              context.sendFailure(t);
            }
          });
        } catch (java.util.concurrent.RejectedExecutionException e) {
          context.sendFailure(new Busy("The Strata shuffle driver is busy: " + THREADS + " requests in progress and "
              + QUEUED_MAX + " queued; ask again"));
        }
        return unit;
      }
    };
  }

  /**
   * The answer to a reader whose partitions are sealed already, none lost (no map output tracker lookup to do), found
   * without blocking; else null (the pool works it out, or answers with the failure). Once a seal round recorded
   * their part, every reader of a stage is answered so; once the whole shuffle is sealed with nothing lost, the
   * answer holds every partition ({@link Sealed#whole}, which each executor asks for once per map output epoch: a
   * big message, which the caller has the pool send, off the dispatcher thread).
   */
  private Sealed settled(GetSealed g) {
    SealedShuffle all;
    SealedShuffle mine;
    try {
      all = lifecycle.sealedIfSettled(g.shuffleId(), 0, Integer.MAX_VALUE);
      mine = all != null ? all : lifecycle.sealedIfSettled(g.shuffleId(), g.start(), g.end());
    } catch (java.io.IOException e) {
      return null;
    }
    if (all != null && all.lost().isEmpty()) {
      return Sealed.whole(all);
    }
    if (mine == null || mine.lost().stream().anyMatch(p -> p >= g.start() && p < g.end())) {
      return null;
    }
    return Sealed.of(mine, Map.of(), g.start(), g.end());
  }

  Sealed sealed(GetSealed g) throws java.io.IOException {
    int shuffleId = g.shuffleId();
    SealedShuffle s = lifecycle.seal(shuffleId, g.start(), g.end());
    SealedShuffle all = lifecycle.sealedIfSettled(shuffleId, 0, Integer.MAX_VALUE);
    if (all != null && all.lost().isEmpty()) {
      return Sealed.whole(all);
    }
    Map<Integer, Set<Long>> lost;
    synchronized (this) {
      lost = suspects.computeIfAbsent(shuffleId, k -> new HashMap<>());
      for (int p : s.lost()) {
        if (!lost.containsKey(p)) {
          lost.put(p, registeredMapIds(shuffleId, p));
        }
      }
      lost = Map.copyOf(lost);
    }
    return Sealed.of(s, lost, g.start(), g.end());
  }

  /** The map ids the driver's map output tracker holds with data for {@code partition} now. */
  private static Set<Long> registeredMapIds(int shuffleId, int partition) {
    Set<Long> out = new HashSet<>();
    try {
      var it = SparkEnv.get().mapOutputTracker().getMapSizesByExecutorId(shuffleId, 0, Integer.MAX_VALUE,
          partition, partition + 1);
      while (it.hasNext()) {
        var blocks = it.next()._2().iterator();
        while (blocks.hasNext()) {
          BlockId b = blocks.next()._1();
          if (b instanceof ShuffleBlockId sb) {
            out.add(sb.mapId());
          }
        }
      }
    } catch (RuntimeException e) {
      // Outputs already missing: Spark reruns those maps anyway.
    }
    return out;
  }

  synchronized void forget(int shuffleId) {
    suspects.remove(shuffleId);
  }

  @Override
  public void onStop() {
    seals.shutdownNow();
    revives.shutdownNow();
  }
}
