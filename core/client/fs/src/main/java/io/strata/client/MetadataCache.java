package io.strata.client;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.strata.common.conf.StrataConf;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;

/**
 * The client's optional cache of metadata answers ({@code strata.user.metadata.cache.enabled}, off by
 * default): getStatus, exists and non-recursive listings made with default options (of at most
 * {@link #listingMax} children), each kept for
 * {@code strata.user.metadata.cache.expiry} after it was fetched, within
 * {@code strata.user.metadata.cache.max.size} weight (an entry weighs one, a listing one more per child).
 *
 * <p>Never stale for this client's own writes: every create, mkdir, complete, delete, rename and attribute
 * change this client makes invalidates, once the master answered, the path's own entries, every entry under
 * it (a directory's cached children) and every ancestor's (whose listing or existence it changes: a
 * recursive mkdir creates them). Another client's change is seen after the expiry at the latest. Calls
 * with an explicit metadata sync interval, reads (openFile fetches blocks afresh) and the client's own
 * waits (persist, load) bypass the cache.
 *
 * <p>Thread-safe. A fetch takes the cache's {@link #generation} before it asks the master and puts its answer
 * only if no invalidation happened since (checked and put under this object's monitor, under which
 * {@link #invalidate} counts, before it removes): an answer fetched before one of this client's writes returned
 * is never put back after that write's invalidation, where another thread of the client would read it.
 */
final class MetadataCache {
  private enum Kind { STATUS, EXISTS, LISTING }

  private record Key(Kind kind, String path) {}

  /** A disabled cache: misses always, remembers nothing. */
  static final MetadataCache OFF = new MetadataCache(null, 0);

  /** The most children a kept listing has, whatever the cache's size ({@link #listingMax}). */
  static final int LISTING_MAX = 10_000;

  private final Cache<Key, Object> cache;
  /** See {@link #listingMax}. */
  private final int listingMax;
  /** Invalidations so far: a fetch begun before one does not put its (maybe stale) answer. Written under this. */
  private volatile long generation;

  private MetadataCache(Cache<Key, Object> cache, long maxWeight) {
    this.cache = cache;
    this.listingMax = (int) Math.min(LISTING_MAX, maxWeight / 2);
  }

  /**
   * The most children a listing may have to be kept: {@link #LISTING_MAX}, or half the cache's weight when less. A
   * bigger listing is handed to its caller as it streams in and not kept, so a listing of a huge directory never sits
   * in the client's memory whole, and no listing alone fills the cache.
   */
  int listingMax() {
    return listingMax;
  }

  static MetadataCache from(StrataConf conf, Ticker ticker) {
    if (!conf.get(ClientKeys.METADATA_CACHE_ENABLED)) {
      return OFF;
    }
    Duration expiry = conf.get(ClientKeys.METADATA_CACHE_EXPIRY);
    long maxWeight = conf.get(ClientKeys.METADATA_CACHE_MAX_SIZE);
    return new MetadataCache(Caffeine.newBuilder().ticker(ticker)
        .maximumWeight(maxWeight)
        .weigher((Key k, Object v) -> v instanceof List<?> l ? 1 + l.size() : 1)
        .expireAfterWrite(expiry).build(), maxWeight);
  }

  boolean enabled() {
    return cache != null;
  }

  URIStatus status(String path) {
    return cache == null ? null : (URIStatus) cache.getIfPresent(new Key(Kind.STATUS, path));
  }

  /** The number of invalidations so far: take it before fetching, and give it to the put. */
  long generation() {
    return cache == null ? 0 : generation; // no lock: the cache is off by default and read on every call
  }

  /** Keeps a fetched answer, unless an invalidation came after {@code fetchedAt} (a {@link #generation}). */
  private synchronized void put(Key key, Object value, long fetchedAt) {
    if (generation == fetchedAt) {
      cache.put(key, value);
    }
  }

  void putStatus(String path, URIStatus status, long fetchedAt) {
    if (cache != null) {
      put(new Key(Kind.STATUS, path), status, fetchedAt);
    }
  }

  Boolean exists(String path) {
    return cache == null ? null : (Boolean) cache.getIfPresent(new Key(Kind.EXISTS, path));
  }

  void putExists(String path, boolean exists, long fetchedAt) {
    if (cache != null) {
      put(new Key(Kind.EXISTS, path), exists, fetchedAt);
    }
  }

  @SuppressWarnings("unchecked")
  List<URIStatus> listing(String path) {
    return cache == null ? null : (List<URIStatus>) cache.getIfPresent(new Key(Kind.LISTING, path));
  }

  void putListing(String path, List<URIStatus> entries, long fetchedAt) {
    if (cache != null) {
      put(new Key(Kind.LISTING, path), List.copyOf(entries), fetchedAt);
    }
  }

  /** Forgets {@code path}, everything under it and every ancestor's entries (after a change to it). */
  void invalidate(String path) {
    invalidate(List.of(path));
  }

  /**
   * Forgets, for each of {@code paths}, the path, everything under it and every ancestor's entries: one pass over
   * the cache for all of them (a batch of a thousand changes costs one pass, not a thousand), each entry checked
   * against its own ancestors and the changed paths' ancestors, by set lookups.
   */
  void invalidate(java.util.Collection<String> paths) {
    if (cache == null || paths.isEmpty()) {
      return;
    }
    java.util.Set<String> changed = new java.util.HashSet<>(paths);
    java.util.Set<String> ancestors = new java.util.HashSet<>();
    for (String p : paths) {
      for (String a = parent(p); a != null && ancestors.add(a); a = parent(a)) {
        // every ancestor once
      }
    }
    Predicate<Key> affected = k -> {
      if (changed.contains(k.path) || ancestors.contains(k.path)) {
        return true;
      }
      for (String a = parent(k.path); a != null; a = parent(a)) {
        if (changed.contains(a)) {
          return true; // under a changed path
        }
      }
      return false;
    };
    synchronized (this) {
      generation++; // a put that checked before this was made before it, and goes with the removal below
    }
    cache.asMap().keySet().removeIf(affected);
  }

  /**
   * The parent of a normalised absolute path, null for the root. Null too for anything else (null, empty,
   * relative: no cached entry is under it), so an invalidation never throws, whatever its callers pass.
   */
  private static String parent(String path) {
    if (path == null || path.equals("/") || !path.startsWith("/")) {
      return null;
    }
    int slash = path.lastIndexOf('/');
    return slash == 0 ? "/" : path.substring(0, slash);
  }

  /** Forgets every entry (its context closed): a closed client keeps no answer to give. */
  void clear() {
    if (cache == null) {
      return;
    }
    synchronized (this) {
      generation++; // a fetch under way when the client closed does not put its answer back
    }
    cache.invalidateAll();
  }

  /** Entries held now (for tests). */
  long size() {
    return cache == null ? 0 : cache.estimatedSize();
  }
}
