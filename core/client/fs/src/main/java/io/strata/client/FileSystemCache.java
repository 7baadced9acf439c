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
 * <p>Thread-safe; one monitor guards the map and every count, and no RPC or wait happens under it.
 */
final class FileSystemCache {
  private final Map<Map<String, String>, Entry> live = new HashMap<>();

  private static final class Entry {
    final Map<String, String> key;
    final BaseFileSystem fs;
    int refs;

    Entry(Map<String, String> key, BaseFileSystem fs) {
      this.key = key;
      this.fs = fs;
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

  /** The shared instance for this configuration, with one more reference counted. */
  FileSystem get(StrataConf conf) {
    Map<String, String> key = keyOf(conf);
    synchronized (this) {
      Entry e = live.get(key);
      if (e != null) {
        e.refs++;
        return e.fs;
      }
    }
    // Made outside the lock (with ZooKeeper the master inquiry may connect); a racing maker's copy is dropped.
    FileSystemContext context = new FileSystemContext(conf);
    BaseFileSystem made = new BaseFileSystem(context, this, true);
    BaseFileSystem won;
    synchronized (this) {
      Entry e = live.computeIfAbsent(key, k -> new Entry(k, made));
      e.refs++;
      won = e.fs;
    }
    if (won != made) {
      context.close(); // never handed out
    }
    return won;
  }

  /**
   * Drops one reference to {@code fs}; true when that was the last one (the caller then frees its context).
   * False for an instance no longer cached (an extra close), which must not free anything again.
   */
  synchronized boolean release(BaseFileSystem fs) {
    for (Entry e : live.values()) {
      if (e.fs == fs) {
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
      if (e.fs == fs) {
        return e.refs;
      }
    }
    return 0;
  }
}
