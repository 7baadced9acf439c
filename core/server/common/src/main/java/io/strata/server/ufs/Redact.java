package io.strata.server.ufs;

import java.util.Map;
import java.util.TreeSet;

/**
 * How mount options and settings appear in logs, exception messages, {@code toString}s, RPC answers and
 * the web UI: in logs and messages their keys only, never their values (which may be credentials); where
 * operators read them (mount tables, configuration pages) the values of names that look like credentials
 * ({@link #isSecret}) masked as {@value #MASK}. Every record that carries mount options uses it in its
 * {@code toString}. Stateless.
 */
public final class Redact {
  /** What a masked value reads as. */
  public static final String MASK = io.strata.common.conf.Secrets.MASK;

  private Redact() {}

  /** Whether a setting or option of this name holds a credential ({@link io.strata.common.conf.Secrets}). */
  public static boolean isSecret(String name) {
    return io.strata.common.conf.Secrets.isSecret(name);
  }

  /** {@code value}, or {@value #MASK} when {@code name} names a credential. */
  public static String masked(String name, String value) {
    return io.strata.common.conf.Secrets.masked(name, value);
  }

  /** A setting as an operator may see it ({@link io.strata.common.conf.Secrets#setting}). */
  public static String setting(String name, String value) {
    return io.strata.common.conf.Secrets.setting(name, value);
  }

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
