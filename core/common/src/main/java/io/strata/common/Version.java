package io.strata.common;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * Strata's version, as the build wrote it into {@code io/strata/common/version.properties}: what {@code
 * strata version}, the servers' start-up line and the web UI print. Immutable; thread-safe.
 */
public final class Version {
  /** The project version, e.g. {@code 0.1.0-SNAPSHOT}. */
  public static final String VERSION = load();

  private Version() {}

  private static String load() {
    Properties p = new Properties();
    try (InputStream in = Version.class.getResourceAsStream("version.properties")) {
      if (in == null) {
        return "unknown";
      }
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Strata's version.properties", e);
    }
    String v = p.getProperty("version", "unknown");
    // Unfiltered (run from sources without Maven): say so rather than print the placeholder.
    return v.startsWith("${") ? "unknown" : v;
  }
}
