package io.strata.client.options;

/**
 * How a read treats the cache. CACHE (default) reads a block where it is; CACHE_PROMOTE also moves it to
 * the worker's top tier first. NO_CACHE will read from the under file system without caching once the
 * UFS exists; until then every block is in Strata and NO_CACHE reads like CACHE.
 */
public enum ReadType {
  NO_CACHE, CACHE, CACHE_PROMOTE
}
