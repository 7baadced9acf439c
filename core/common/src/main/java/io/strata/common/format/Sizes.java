package io.strata.common.format;

import java.util.Locale;

/**
 * Byte counts for people, the way {@code hdfs dfs -du -h} prints them; the CLI and the web UI both use
 * these, so the numbers they show read the same. Stateless and thread-safe.
 */
public final class Sizes {
  private static final String[] PREFIXES = {"K", "M", "G", "T", "P", "E"};

  private Sizes() {}

  /**
   * Plain below 1024 ({@code 512}), else one decimal in binary units with the decimal dropped when the
   * value is whole ({@code 1 K}, {@code 1.5 G}).
   */
  public static String human(long bytes) {
    if (bytes < 0) {
      return "-" + human(bytes == Long.MIN_VALUE ? Long.MAX_VALUE : -bytes);
    }
    if (bytes < 1024) {
      return Long.toString(bytes);
    }
    int exp = (63 - Long.numberOfLeadingZeros(bytes)) / 10; // 1 for K, 2 for M, ...
    int shift = exp * 10;
    if ((bytes & ((1L << shift) - 1)) == 0) {
      return (bytes >> shift) + " " + PREFIXES[exp - 1];
    }
    String s = String.format(Locale.ROOT, "%.1f", bytes / (double) (1L << shift));
    if (s.startsWith("1024") && exp < PREFIXES.length) {
      // 1048575 bytes round to 1024.0 K; say 1.0 M instead.
      exp++;
      s = String.format(Locale.ROOT, "%.1f", bytes / (double) (1L << (exp * 10)));
    }
    return s + " " + PREFIXES[exp - 1];
  }

  /** {@code 1610612736 (1.5 G)}. */
  public static String bytesAndHuman(long bytes) {
    return bytes + " (" + human(bytes) + ")";
  }
}
