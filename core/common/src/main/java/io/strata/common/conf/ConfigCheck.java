package io.strata.common.conf;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The checks a process runs on its configuration before it starts: every value set for one of its keys
 * parses (the first bad one fails the start with one line naming the key, the value and what is
 * expected), and every {@code strata.} name that is none of its keys is reported with the nearest one
 * (Levenshtein distance), since a misspelt key is otherwise silently ignored.
 *
 * <p>A process knows only its own keys (a master has no worker jar to read them from), so names under the
 * prefixes of the other processes ({@code strata.worker.} for a master) are left to those processes:
 * each reports the misspellings in its own part of a shared site file. Stateless; thread-safe.
 */
public final class ConfigCheck {
  /**
   * Names that are read outside the keys (by the scripts or the log configuration) and so are no
   * misspelling: {@code STRATA_HEAP} in the environment becomes {@code strata.heap}, and so on.
   */
  private static final Set<String> NOT_KEYS = Set.of("strata.conf.dir", "strata.log.name", "strata.heap",
      "strata.start.timeout", "strata.debug", "strata.java.opts", "strata.pid.dir", "strata.lib.dir");

  private ConfigCheck() {}

  /** The public static {@link PropertyKey} constants of each of {@code keysClasses} ({@code *Keys}). */
  public static List<PropertyKey<?>> keysOf(Class<?>... keysClasses) {
    List<PropertyKey<?>> out = new ArrayList<>();
    for (Class<?> keysClass : keysClasses) {
      for (Field f : keysClass.getFields()) {
        if (Modifier.isStatic(f.getModifiers()) && f.getType() == PropertyKey.class) {
          try {
            out.add((PropertyKey<?>) f.get(null));
          } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
          }
        }
      }
    }
    return out;
  }

  /**
   * Checks {@code conf} for a process that reads {@code keys}: throws IllegalArgumentException (one line:
   * key, value, what is expected) for the first set value of those keys that does not parse; returns one
   * warning line per {@code strata.} name that is none of them, except names under
   * {@code otherPrefixes} (other processes' keys).
   */
  public static List<String> check(StrataConf conf, Collection<PropertyKey<?>> keys,
      Collection<String> otherPrefixes) {
    validate(conf, keys);
    List<String> warnings = new ArrayList<>();
    for (String name : new TreeSet<>(conf.explicitValues().keySet())) {
      if (otherPrefixes.stream().anyMatch(name::startsWith)) {
        continue;
      }
      String w = unknownKeyWarning(name, keys);
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
