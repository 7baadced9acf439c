package io.strata.common.conf;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * An immutable set of configuration values. Precedence, lowest first: key defaults,
 * {@code $STRATA_CONF_DIR/strata-site.properties}, {@code STRATA_*} environment variables, {@code -D}
 * system properties, then {@link #with} overrides made by the caller (per-call options, tests).
 *
 * <p>Values are parsed when read and checked by the key's validator, so a bad value fails with a
 * message naming the key. There is no global instance: each process part receives one by constructor,
 * so two workers can run in one JVM with different settings. Thread-safe.
 */
public final class StrataConf {
  public static final String SITE_FILE = "strata-site.properties";

  private final Map<String, String> values;

  private StrataConf(Map<String, String> values) {
    this.values = Map.copyOf(values);
  }

  /** Only the keys' defaults. */
  public static StrataConf defaults() {
    return new StrataConf(Map.of());
  }

  /** Values from explicit pairs, on top of defaults (tests, embedded use). */
  public static StrataConf of(Map<String, String> values) {
    return new StrataConf(values);
  }

  /** The standard load: site file from STRATA_CONF_DIR (if set), then environment, then system properties. */
  public static StrataConf load() {
    return load(System.getenv(), System.getProperties());
  }

  public static StrataConf load(Map<String, String> env, Properties sysProps) {
    Map<String, String> merged = new HashMap<>();
    String confDir = sysProps.getProperty("strata.conf.dir", env.get("STRATA_CONF_DIR"));
    if (confDir != null && !confDir.isEmpty()) {
      Path site = Path.of(confDir, SITE_FILE);
      if (Files.isRegularFile(site)) {
        merged.putAll(readProperties(site));
      }
    }
    for (Map.Entry<String, String> e : env.entrySet()) {
      String k = e.getKey();
      if (k.startsWith("STRATA_") && !k.equals("STRATA_CONF_DIR") && !k.equals("STRATA_JAVA_OPTS")) {
        merged.put(k.toLowerCase(java.util.Locale.ROOT).replace('_', '.'), e.getValue());
      }
    }
    for (String name : sysProps.stringPropertyNames()) {
      if (name.startsWith("strata.")) {
        merged.put(name, sysProps.getProperty(name));
      }
    }
    return new StrataConf(merged);
  }

  static Map<String, String> readProperties(Path file) {
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read configuration file " + file, e);
    }
    Map<String, String> out = new HashMap<>();
    for (String name : p.stringPropertyNames()) {
      out.put(name, p.getProperty(name).trim());
    }
    return out;
  }

  /** A copy with one value replaced. */
  public StrataConf with(PropertyKey<?> key, Object value) {
    Map<String, String> copy = new HashMap<>(values);
    copy.put(key.name(), String.valueOf(value));
    return new StrataConf(copy);
  }

  /** A copy with several values replaced. */
  public StrataConf withAll(Map<String, String> overrides) {
    Map<String, String> copy = new HashMap<>(values);
    copy.putAll(overrides);
    return new StrataConf(copy);
  }

  public boolean isSet(PropertyKey<?> key) {
    return values.containsKey(key.name());
  }

  /** The key's value, parsed; throws IllegalArgumentException naming the key when it is bad or unset. */
  public <T> T get(PropertyKey<T> key) {
    String raw = values.get(key.name());
    if (raw == null) {
      raw = key.defaultValue();
    }
    if (raw == null) {
      throw new IllegalArgumentException("Configuration key " + key.name() + " is not set and has no default");
    }
    return key.parse(raw);
  }

  /** The raw string set for a key name, or null. */
  public String getRaw(String name) {
    return values.get(name);
  }

  /** The raw explicitly-set values (not defaults). */
  public Map<String, String> explicitValues() {
    return values;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StrataConf && ((StrataConf) o).values.equals(values);
  }

  @Override
  public int hashCode() {
    return Objects.hash(values);
  }
}
