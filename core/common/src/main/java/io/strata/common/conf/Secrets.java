package io.strata.common.conf;

/**
 * Which settings hold credentials, and how their values appear where operators read them ({@code strata
 * fsadmin getConf}, the web UI's configuration and mount pages, RPC answers): masked as {@value #MASK}.
 * The servers' {@code Redact} builds its log and message forms on this. Stateless.
 */
public final class Secrets {
  /** What a masked value reads as. */
  public static final String MASK = "******";

  /**
   * Names whose values are credentials: those naming a secret, password, token or credential, and keys: S3A's access,
   * session and encryption keys, Azure's {@code fs.azure.account.key.<account>...}, GCS's service account private
   * key, and any name ending in {@code .key}.
   */
  private static final java.util.regex.Pattern SECRET = java.util.regex.Pattern.compile(
      "(?i).*(secret|password|token|credential|access\\.key|session\\.key|account\\.key|private\\.key"
          + "|encryption\\.key|\\.key$).*");

  private Secrets() {}

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

}
