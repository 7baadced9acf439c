package io.strata.client;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Which pages the client's page cache holds and how many bytes their files take, within a byte quota: adding
 * a page past the quota evicts others by the policy, and the eviction callback (which deletes the page's file)
 * runs on the adding thread, after the index's own lock is released, before {@link #add} returns. So once
 * {@code add} returns the indexed bytes are within the quota. {@link #remove} never calls back.
 *
 * <p>Two policies: {@link #lru} is an access-ordered {@link LinkedHashMap} under this object's lock (the least
 * recently read or added page goes first; Caffeine has no pure LRU); {@link #lfu} is a Caffeine cache weighted
 * by bytes (W-TinyLFU: a page read often outlives a scan of pages read once; a new page may be the one turned
 * away). Thread-safe.
 */
abstract class PageIndex {
  final long quotaBytes;
  final Consumer<PageKey> onEvict;

  private PageIndex(long quotaBytes, Consumer<PageKey> onEvict) {
    this.quotaBytes = quotaBytes;
    this.onEvict = onEvict;
  }

  static PageIndex lru(long quotaBytes, Consumer<PageKey> onEvict) {
    return new Lru(quotaBytes, onEvict);
  }

  static PageIndex lfu(long quotaBytes, Consumer<PageKey> onEvict) {
    return new Lfu(quotaBytes, onEvict);
  }

  /** True when the page is indexed; counts as a read of it for the policy. */
  abstract boolean touch(PageKey key);

  /** Indexes a page whose file takes {@code bytes}, evicting (and calling back for) others past the quota. */
  abstract void add(PageKey key, long bytes);

  /** Forgets a page (its file is the caller's business). */
  abstract void remove(PageKey key);

  /** Bytes of the indexed pages' files. */
  abstract long bytes();

  abstract int pages();

  private static final class Lru extends PageIndex {
    /** Guarded by this; access-ordered: the first entry is the least recently used. */
    private final LinkedHashMap<PageKey, Long> pages = new LinkedHashMap<>(16, 0.75f, true);
    private long bytes;

    Lru(long quotaBytes, Consumer<PageKey> onEvict) {
      super(quotaBytes, onEvict);
    }

    @Override
    synchronized boolean touch(PageKey key) {
      return pages.get(key) != null;
    }

    @Override
    void add(PageKey key, long size) {
      List<PageKey> evicted = new ArrayList<>();
      synchronized (this) {
        Long old = pages.put(key, size);
        bytes += size - (old == null ? 0 : old);
        Iterator<Map.Entry<PageKey, Long>> eldest = pages.entrySet().iterator();
        while (bytes > quotaBytes && eldest.hasNext()) {
          Map.Entry<PageKey, Long> e = eldest.next();
          if (e.getKey().equals(key) && pages.size() > 1) {
            continue;
          }
          bytes -= e.getValue();
          evicted.add(e.getKey());
          eldest.remove();
        }
      }
      evicted.forEach(onEvict);
    }

    @Override
    synchronized void remove(PageKey key) {
      Long old = pages.remove(key);
      if (old != null) {
        bytes -= old;
      }
    }

    @Override
    synchronized long bytes() {
      return bytes;
    }

    @Override
    synchronized int pages() {
      return pages.size();
    }
  }

  private static final class Lfu extends PageIndex {
    private final Cache<PageKey, Long> pages;

    Lfu(long quotaBytes, Consumer<PageKey> onEvict) {
      super(quotaBytes, onEvict);
      // Runnable::run: evictions and their callbacks happen on the writing thread (cleanUp below), so the
      // quota holds when add returns. Replaced and explicitly removed pages are not evicted: no callback.
      this.pages = Caffeine.newBuilder().maximumWeight(quotaBytes)
          .weigher((PageKey k, Long v) -> (int) Math.min(Integer.MAX_VALUE, v))
          .executor(Runnable::run)
          .removalListener((PageKey k, Long v, com.github.benmanes.caffeine.cache.RemovalCause cause) -> {
            if (k != null && cause.wasEvicted()) {
              onEvict.accept(k);
            }
          }).build();
    }

    @Override
    boolean touch(PageKey key) {
      return pages.getIfPresent(key) != null;
    }

    @Override
    void add(PageKey key, long size) {
      pages.put(key, size);
      pages.cleanUp();
    }

    @Override
    void remove(PageKey key) {
      pages.invalidate(key);
    }

    @Override
    long bytes() {
      pages.cleanUp();
      return pages.policy().eviction().orElseThrow().weightedSize().orElse(0);
    }

    @Override
    int pages() {
      pages.cleanUp();
      return (int) pages.estimatedSize();
    }
  }
}
