package io.strata.client.options;

import java.util.Map;
import java.util.TreeMap;

/** Options of {@code mount}. Immutable. */
public final class MountOptions {
  private static final MountOptions DEFAULTS = new MountOptions(false, false, Map.of());

  private final boolean readOnly;
  private final boolean shared;
  private final Map<String, String> properties;

  private MountOptions(boolean readOnly, boolean shared, Map<String, String> properties) {
    this.readOnly = readOnly;
    this.shared = shared;
    this.properties = properties;
  }

  /** Writable, not shared, no under file system properties. */
  public static MountOptions defaults() {
    return DEFAULTS;
  }

  /** True: Strata never writes to, renames in or deletes from the under file system. */
  public boolean readOnly() {
    return readOnly;
  }

  /** True: other systems also change the under file system (a hint for metadata sync). */
  public boolean shared() {
    return shared;
  }

  /** Hadoop configuration for this mount ({@code fs.s3a.access.key}, {@code dfs.client.*}, ...), sorted. */
  public Map<String, String> properties() {
    return properties;
  }

  public MountOptions withReadOnly(boolean readOnly) {
    return new MountOptions(readOnly, shared, properties);
  }

  public MountOptions withShared(boolean shared) {
    return new MountOptions(readOnly, shared, properties);
  }

  public MountOptions withProperties(Map<String, String> properties) {
    return new MountOptions(readOnly, shared, java.util.Collections.unmodifiableMap(new TreeMap<>(properties)));
  }
}
