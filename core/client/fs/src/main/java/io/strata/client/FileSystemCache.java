package io.strata.client;

import io.strata.common.conf.StrataConf;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

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
 * <p>Thread-safe; one monitor guards the map and every count, and no RPC or wait happens under it. An entry is in
 * the map from the moment its first caller starts making its instance; callers for the same key meanwhile wait
 * for that making (its future), outside the monitor.
 */
final class FileSystemCache {
  private final Map<Map<String, String>, Entry> live = new HashMap<>();

  private static final class Entry {
    final Map<String, String> key;
    /** The instance, once its one maker made it (or the maker's failure): callers wait on it with no lock held. */
    final java.util.concurrent.CompletableFuture<BaseFileSystem> made = new java.util.concurrent.CompletableFuture<>();
    /** {@link #made}'s instance once made; null before. Guarded by the cache. */
    BaseFileSystem fs;
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
   * key: the first caller makes it (outside the lock: with ZooKeeper the master inquiry may connect), later callers
   * wait for that one, with no lock held. Two contexts made at once would also race for the page cache directory,
   * and the one kept could be the one that lost it, running without a page cache for its whole life. When the
   * making fails, every caller waiting for it gets its failure and the key is free again.
   */
  FileSystem get(StrataConf conf) {
    Map<String, String> key = keyOf(conf);
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
    if (maker) {
      BaseFileSystem fs;
      try {
        fs = new BaseFileSystem(new FileSystemContext(conf), this, true);
      } catch (RuntimeException | Error t) {
        synchronized (this) {
          live.remove(key, e);
        }
        e.made.completeExceptionally(t);
        throw t;
      }
      synchronized (this) {
        e.fs = fs;
      }
      e.made.complete(fs);
      return fs;
    }
    try {
      return e.made.join();
    } catch (java.util.concurrent.CompletionException failed) {
      Throwable cause = failed.getCause();
      if (cause instanceof IllegalArgumentException bad) {
        throw new IllegalArgumentException(bad.getMessage(), bad); // this caller's own stack, the maker's cause
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException("Making the shared client failed: " + cause, cause);
    }
  }

  /**
   * Drops one reference to {@code fs}; true when that was the last one (the caller then frees its context).
   * False for an instance no longer cached (an extra close), which must not free anything again.
   */
  synchronized boolean release(BaseFileSystem fs) {
    for (Entry e : live.values()) {
      if (e.fs == fs && fs != null) {
        if (--e.refs == 0) {
          live.remove(e.key);
          return true;
        }
        return false;
      }
    }
    return false;
  }

  /** References counted to this instance (0 once it is freed); for tests. */
  synchronized int references(FileSystem fs) {
    for (Entry e : live.values()) {
      if (e.fs == fs && fs != null) {
        return e.refs;
      }
    }
    return 0;
  }
}
