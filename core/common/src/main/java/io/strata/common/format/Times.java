package io.strata.common.format;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/** Times for people, as the CLI and the web UI print them. Stateless and thread-safe. */
public final class Times {
  private static final DateTimeFormatter ISO_UTC =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);

  private Times() {}

  /** Milliseconds since the epoch as {@code 2026-12-01T19:50:00.000Z}. */
  public static String iso(long epochMs) {
    return ISO_UTC.format(Instant.ofEpochMilli(epochMs));
  }

  /** A duration as {@code 3d 4h 5m 6s}, leading zero units left out ({@code 42s}, {@code 0s}). */
  public static String duration(long ms) {
    long s = Math.max(0, ms) / 1000;
    long d = s / 86400;
    long h = s / 3600 % 24;
    long m = s / 60 % 60;
    StringBuilder b = new StringBuilder();
    if (d > 0) {
      b.append(d).append("d ");
    }
    if (d > 0 || h > 0) {
      b.append(h).append("h ");
    }
    if (d > 0 || h > 0 || m > 0) {
      b.append(m).append("m ");
    }
    return b.append(s % 60).append('s').toString();
  }
}
