package io.strata.server.web;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The Strata version this process was built as, from {@code build.properties} (filled in by Maven's
 * resource filtering at build time). Read once; thread-safe.
 */
public final class BuildInfo {
  private static final String VERSION = load();

  private BuildInfo() {}

  /** The project version ({@code 0.1.0-SNAPSHOT}), or {@code unknown} when the build left none. */
  public static String version() {
    return VERSION;
  }

  private static String load() {
    try (InputStream in = BuildInfo.class.getResourceAsStream("build.properties")) {
      if (in == null) {
        return "unknown";
      }
      Properties p = new Properties();
      p.load(in);
      String v = p.getProperty("version", "unknown");
      return v.startsWith("${") ? "unknown" : v;
    } catch (IOException e) {
      return "unknown";
    }
  }
}
