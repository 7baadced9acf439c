package io.strata.common.conf;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The checks a process runs on its configuration before it starts: every value set for a declared key
 * parses (the first bad one fails the start with one line naming the key, the value and what is
 * expected), and every {@code strata.} name that is no declared key is reported with the nearest declared
 * key (Levenshtein distance), since a misspelt key is otherwise silently ignored.
 *
 * <p>The declared keys are the public static {@link PropertyKey} fields of the {@code *Keys} classes,
 * found by name so that this module needs no dependency on the others. A keys class missing from the
 * classpath (an embedded client has no worker jar) makes its prefix unknown territory: names under it are
 * not reported. Stateless; thread-safe.
 */
public final class ConfigCheck {
  /** The keys classes by the prefix of the names they own. */
  private static final Map<String, String> KEY_CLASSES = new LinkedHashMap<>();

  static {
    KEY_CLASSES.put("io.strata.common.conf.CommonKeys", "");
    KEY_CLASSES.put("io.strata.server.ServerKeys", "");
    KEY_CLASSES.put("io.strata.master.MasterKeys", "strata.master.");
    KEY_CLASSES.put("io.strata.worker.WorkerKeys", "strata.worker.");
    KEY_CLASSES.put("io.strata.client.ClientKeys", "strata.user.");
  }

  /**
   * Names that are read outside the keys (by the scripts or the log configuration) and so are no
   * misspelling: {@code STRATA_HEAP} in the environment becomes {@code strata.heap}, and so on.
   */
  private static final Set<String> NOT_KEYS = Set.of("strata.conf.dir", "strata.log.name", "strata.heap",
      "strata.start.timeout", "strata.debug", "strata.java.opts", "strata.pid.dir", "strata.lib.dir");

  private ConfigCheck() {}

  /** The declared keys found on the classpath, those of each prefix, and the prefixes whose class is missing. */
  record Declared(List<PropertyKey<?>> keys, Map<String, List<PropertyKey<?>>> byPrefix,
      List<String> missingPrefixes) {}

  static Declared declared() {
    List<PropertyKey<?>> keys = new ArrayList<>();
    Map<String, List<PropertyKey<?>>> byPrefix = new LinkedHashMap<>();
    List<String> missing = new ArrayList<>();
    for (Map.Entry<String, String> c : KEY_CLASSES.entrySet()) {
      Class<?> cls;
      try {
        cls = Class.forName(c.getKey());
      } catch (ClassNotFoundException e) {
        missing.add(c.getValue());
        continue;
      }
      List<PropertyKey<?>> own = keysOf(cls);
      keys.addAll(own);
      byPrefix.computeIfAbsent(c.getValue(), p -> new ArrayList<>()).addAll(own);
    }
    return new Declared(keys, byPrefix, missing);
  }

  /** The public static {@link PropertyKey} constants of {@code keysClass}. */
  public static List<PropertyKey<?>> keysOf(Class<?> keysClass) {
    List<PropertyKey<?>> out = new ArrayList<>();
    for (Field f : keysClass.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == PropertyKey.class) {
        try {
          out.add((PropertyKey<?>) f.get(null));
        } catch (IllegalAccessException e) {
          throw new IllegalStateException(e);
        }
      }
    }
    return out;
  }

  /**
   * Checks {@code conf} against the keys on the classpath: throws IllegalArgumentException (one line: key,
   * value, what is expected) for the first set value that does not parse among the keys every process
   * reads and those under {@code ownPrefixes} (a master does not fail for a bad worker key in a shared
   * site file); returns one warning line per unknown {@code strata.} name.
   */
  public static List<String> check(StrataConf conf, Collection<String> ownPrefixes) {
    Declared d = declared();
    for (Map.Entry<String, List<PropertyKey<?>>> e : d.byPrefix().entrySet()) {
      if (e.getKey().isEmpty() || ownPrefixes.contains(e.getKey())) {
        validate(conf, e.getValue());
      }
    }
    List<String> warnings = new ArrayList<>();
    for (String name : new TreeSet<>(conf.explicitValues().keySet())) {
      if (d.missingPrefixes().stream().anyMatch(p -> !p.isEmpty() && name.startsWith(p))) {
        continue;
      }
      String w = unknownKeyWarning(name, d.keys());
      if (w != null) {
        warnings.add(w);
      }
    }
    return warnings;
  }

  /** Parses every value set for one of {@code keys}; the first bad one throws, naming key and value. */
  public static void validate(StrataConf conf, Collection<PropertyKey<?>> keys) {
    for (PropertyKey<?> k : keys) {
      if (conf.isSet(k)) {
        conf.get(k);
      }
    }
  }

  /**
   * A warning for {@code name} when it starts with {@code strata.} and is none of {@code keys}, naming the
   * nearest key; null when it is a key or no {@code strata.} name.
   */
  public static String unknownKeyWarning(String name, Collection<PropertyKey<?>> keys) {
    if (!name.startsWith("strata.") || NOT_KEYS.contains(name)) {
      return null;
    }
    String nearest = null;
    int best = Integer.MAX_VALUE;
    for (PropertyKey<?> k : keys) {
      if (k.name().equals(name)) {
        return null;
      }
      int dist = levenshtein(name, k.name());
      if (dist < best) {
        best = dist;
        nearest = k.name();
      }
    }
    return "Unknown configuration key " + name + " (ignored)"
        + (nearest == null ? "" : "; did you mean " + nearest + "?");
  }

  /** Edit distance: insertions, deletions and substitutions of one character each cost 1. */
  static int levenshtein(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
