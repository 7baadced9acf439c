package io.strata.client;

import java.util.Map;
import java.util.TreeMap;

/**
 * A mount: the Strata directory {@code path} backed by the under file system directory {@code ufsUri}.
 * Immutable.
 *
 * @param properties the mount's Hadoop configuration (fs.s3a.access.key, ...), sorted by key
 */
public record MountInfo(String path, String ufsUri, boolean readOnly, boolean shared, Map<String, String> properties) {
  public MountInfo {
    properties = java.util.Collections.unmodifiableMap(new TreeMap<>(properties));
  }
}
