package io.strata.master;

import io.strata.common.conf.StrataConf;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Map;
import java.util.TreeMap;

/**
 * The cluster defaults the master serves its clients: every client key ({@code strata.user.*}) set in the
 * master's configuration, and a hash of them (SHA-256, hex, over the sorted {@code key=value} lines), by
 * which a client's periodic check notices a change. Computed once from the master's configuration, which
 * does not change while it runs. Immutable, thread-safe.
 */
public final class ClusterDefaults {
  /** The prefix of the keys clients read, the only ones served. */
  public static final String CLIENT_PREFIX = "strata.user.";

  private final Map<String, String> values;
  private final String hash;

  public ClusterDefaults(StrataConf conf) {
    TreeMap<String, String> v = new TreeMap<>();
    for (Map.Entry<String, String> e : conf.explicitValues().entrySet()) {
      if (e.getKey().startsWith(CLIENT_PREFIX)) {
        v.put(e.getKey(), e.getValue());
      }
    }
    this.values = java.util.Collections.unmodifiableMap(v);
    this.hash = hash(v);
  }

  /** SHA-256 (hex) over the sorted {@code key=value} lines. */
  static String hash(TreeMap<String, String> sorted) {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("Every Java runtime has SHA-256", e);
    }
    for (Map.Entry<String, String> e : sorted.entrySet()) {
      sha.update((e.getKey() + "=" + e.getValue() + "\n").getBytes(StandardCharsets.UTF_8));
    }
    return java.util.HexFormat.of().formatHex(sha.digest());
  }

  /** The client keys set in the master's configuration, by name (sorted). */
  public Map<String, String> values() {
    return values;
  }

  public String hash() {
    return hash;
  }
}
