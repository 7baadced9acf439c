package io.strata.server.ufs;

import java.util.Map;
import java.util.TreeSet;

/**
 * How mount options appear in logs, exception messages and {@code toString}s: their keys only, never
 * their values (which may be credentials). Every record that carries mount options uses it in its
 * {@code toString}. Stateless.
 */
public final class Redact {
  private Redact() {}

  /** {@code {key1=***, key2=***}}. */
  public static String options(Map<String, String> options) {
    StringBuilder b = new StringBuilder("{");
    for (String k : new TreeSet<>(options.keySet())) {
      if (b.length() > 1) {
        b.append(", ");
      }
      b.append(k).append("=***");
    }
    return b.append('}').toString();
  }
}
