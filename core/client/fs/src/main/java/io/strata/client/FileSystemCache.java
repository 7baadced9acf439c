package io.strata.client;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.DeadlineExceededException;
import java.io.InterruptedIOException;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The shared, reference-counted file systems behind {@link FileSystem.Factory#get}: one per distinct
 * client configuration, the key being the explicitly set values a client reads (every {@code strata.*}
 * value but the worker's own {@code strata.worker.*} keys, which no client reads). {@link #get} hands out
 * the live instance for the key and counts one reference; {@link #release} (called by the instance's
 * {@code close()}) drops one, and the last one removes the instance from the cache and lets it free its
 * {@link FileSystemContext} (channels, lease renewer, event loops).
 *
 * <p>An instance is removed from the map in the same critical section that drops its count to zero, so
 * {@link #get} never hands out one that is closed or closing; the context itself is closed after the
 * lock is let go (closing waits for channels to terminate). Once an instance's count reached zero,
 * further closes of it are no-ops: a holder that closes once too often cannot free the instance another
 * holder got later (that one is a new instance). Within one instance each holder must close exactly once:
 * the instance is the same object for all its holders, so it cannot tell whose close it is.
 *
 * <p>Making an instance connects to the master (with ZooKeeper or a master list, finds the leader first) and asks it
 * for the cluster defaults. Callers for a key whose instance is being made wait for that one making, for at most
 * strata.network.rpc.timeout (the bound of that call), interruptibly; one that gives up takes no reference, and
 * detaches the entry, so the next caller makes the instance again instead of waiting for a making that may never end.
 * A detached making that ends later still serves its maker and the callers that were waiting for it, and is
 * counted and freed as any instance; it becomes the key's live instance again only if no newer one took its place.
 *
 * <p>Thread-safe; one monitor guards both maps and every count, and no RPC or wait happens under it.
 */
final class FileSystemCache {
  /** The entry new callers of a key join; an entry detached by a caller that gave up is no longer here. */
  private final Map<Map<String, String>, Entry> live = new HashMap<>();
  /** Every made instance that has references, attached or detached, by identity: what {@link #release} counts. */
  private final Map<BaseFileSystem, Entry> held = new IdentityHashMap<>();

  private static final class Entry {
    final Map<String, String> key;
    /** The instance, once its one maker made it (or the maker's failure): callers wait on it with no lock held. */
    final CompletableFuture<BaseFileSystem> made = new CompletableFuture<>();
    /** {@link #made}'s instance once made; null before. Guarded by the cache. */
    BaseFileSystem fs;
    /** The maker's and every caller's that got or still waits for this instance. Guarded by the cache. */
    int refs;

    Entry(Map<String, String> key) {
      this.key = key;
    }
  }

  /** The client-relevant values of a configuration: what decides whether two callers may share a client. */
  static Map<String, String> keyOf(StrataConf conf) {
    Map<String, String> key = new TreeMap<>();
    for (Map.Entry<String, String> e : conf.explicitValues().entrySet()) {
      if (!e.getKey().startsWith("strata.worker.")) {
        key.put(e.getKey(), e.getValue());
      }
    }
    return key;
  }

  /**
   * The shared instance for this configuration, with one more reference counted. At most one context is made per
   * key at a time: the first caller makes it (outside the lock: with ZooKeeper the master inquiry may connect), later
   * callers wait for that one, with no lock held, for at most strata.network.rpc.timeout. Two contexts made at once
   * would also race for the page cache directory, and the one kept could be the one that lost it, running without a
   * page cache for its whole life. When the making fails, every caller waiting for it gets its failure and the key
   * is free again.
   *
   * @throws DeadlineExceededException when another caller's making of this instance did not end within
   *     strata.network.rpc.timeout (the next call makes it again)
   * @throws InterruptedIOException when interrupted while waiting for another caller's making (the interrupt
   *     flag stays set)
   */
  FileSystem get(StrataConf conf) throws java.io.IOException {
    Map<String, String> key = keyOf(conf);
    java.time.Duration bound = conf.get(CommonKeys.RPC_TIMEOUT); // read first: a bad value fails before counting
    Entry e;
    boolean maker = false;
    synchronized (this) {
      e = live.get(key);
      if (e == null) {
        e = new Entry(key);
        live.put(key, e);
        maker = true;
      }
      e.refs++;
    }
    return maker ? make(conf, e) : await(conf, e, bound);
  }

  private BaseFileSystem make(StrataConf conf, Entry e) {
    BaseFileSystem fs;
    try {
      fs = new BaseFileSystem(new FileSystemContext(conf), this, true);
    } catch (RuntimeException | Error t) {
      synchronized (this) {
        live.remove(e.key, e);
      }
      e.made.completeExceptionally(t);
      throw t;
    }
    synchronized (this) {
      e.fs = fs;
      held.put(fs, e);
      live.putIfAbsent(e.key, e); // detached by a caller that gave up: live again unless a newer one took its place
    }
    e.made.complete(fs);
    return fs;
  }

  /** Waits (no lock held) for another caller's making of {@code e}'s instance. */
  private BaseFileSystem await(StrataConf conf, Entry e, java.time.Duration bound) throws java.io.IOException {
    try {
      return e.made.get(bound.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException failed) {
      Throwable cause = failed.getCause();
      if (cause instanceof IllegalArgumentException bad) {
        throw new IllegalArgumentException(bad.getMessage(), bad); // this caller's own stack, the maker's cause
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException("Making the shared client failed: " + cause, cause);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      BaseFileSystem fs = giveUp(e, false);
      if (fs != null) {
        return fs;
      }
      throw new InterruptedIOException("Interrupted waiting for another thread's making of the shared client of "
          + masterOf(conf));
    } catch (TimeoutException slow) {
      BaseFileSystem fs = giveUp(e, true);
      if (fs != null) {
        return fs;
      }
      throw new DeadlineExceededException("Waited " + bound.toMillis() + " ms (" + CommonKeys.RPC_TIMEOUT.name()
          + ") for another thread's making of the shared client of " + masterOf(conf) + ", which is still "
          + "connecting: is the master reachable? The next call makes the client again");
    }
  }

  /**
   * A waiter of {@code e} stops waiting: the instance if it was made meanwhile (its reference stays counted), else
   * null with the waiter's reference given back and, when {@code detach}, the entry detached from the key.
   */
  private synchronized BaseFileSystem giveUp(Entry e, boolean detach) {
    if (e.fs != null) {
      return e.fs;
    }
    e.refs--; // the maker's own reference keeps it above 0 until the making ends
    if (detach) {
      live.remove(e.key, e);
    }
    return null;
  }

  /** The master a configuration names, for messages. */
  private static String masterOf(StrataConf conf) {
    if (conf.isSet(CommonKeys.ZOOKEEPER_ADDRESS)) {
      return "the master elected in ZooKeeper at " + conf.get(CommonKeys.ZOOKEEPER_ADDRESS);
    }
    if (conf.isSet(CommonKeys.MASTER_RPC_ADDRESSES)) {
      return "the masters at " + String.join(",", conf.get(CommonKeys.MASTER_RPC_ADDRESSES));
    }
    return "the master at " + conf.get(CommonKeys.MASTER_HOSTNAME) + ":" + conf.get(CommonKeys.MASTER_RPC_PORT);
  }

  /**
   * Drops one reference to {@code fs}; true when that was the last one (the caller then frees its context).
   * False for an instance no longer cached (an extra close), which must not free anything again.
   */
  synchronized boolean release(BaseFileSystem fs) {
    Entry e = fs == null ? null : held.get(fs);
    if (e == null) {
      return false;
    }
    if (--e.refs == 0) {
      held.remove(fs);
      live.remove(e.key, e);
      return true;
    }
    return false;
  }

  /** References counted to this instance (0 once it is freed); for tests. */
  synchronized int references(FileSystem fs) {
    Entry e = fs instanceof BaseFileSystem b ? held.get(b) : null;
    return e == null ? 0 : e.refs;
  }
}
