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
  public static final String MASK = "******";

  /** Names whose values are credentials. */
  private static final java.util.regex.Pattern SECRET =
      java.util.regex.Pattern.compile("(?i).*(secret|password|token|credential|access\\.key|session\\.key).*");

  private Redact() {}

  /** Whether a setting or option of this name holds a credential. */
  public static boolean isSecret(String name) {
    return SECRET.matcher(name).matches();
  }

  /** {@code value}, or {@value #MASK} when {@code name} names a credential. */
  public static String masked(String name, String value) {
    return isSecret(name) ? MASK : value;
  }

  /**
   * A setting as an operator may see it: masked whole when its name names a credential; a list of
   * {@code key=value} options ({@code *.options}) with each credential's value masked; else as it is.
   */
  public static String setting(String name, String value) {
    if (isSecret(name)) {
      return MASK;
    }
    if (!name.endsWith(".options") || value == null) {
      return value;
    }
    StringBuilder b = new StringBuilder();
    for (String kv : value.split(",", -1)) {
      int eq = kv.indexOf('=');
      if (b.length() > 0) {
        b.append(',');
      }
      b.append(eq < 0 ? kv : kv.substring(0, eq + 1) + masked(kv.substring(0, eq).trim(), kv.substring(eq + 1)));
    }
    return b.toString();
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
