package io.strata.client.options;

/**
 * How a read treats the cache. A block cached on a worker is read from there whatever the type. A block of
 * a persisted file that no worker holds is read from the under file system through a worker: CACHE (the
 * default) caches it on that worker as it goes; CACHE_PROMOTE also moves cached blocks to the worker's top
 * tier before reading them; NO_CACHE streams it without caching (and skips passive caching).
 */
public enum ReadType {
  NO_CACHE, CACHE, CACHE_PROMOTE
}
