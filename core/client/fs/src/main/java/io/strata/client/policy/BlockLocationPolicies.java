package io.strata.client.policy;

import io.strata.common.conf.StrataConf;
import io.strata.common.exception.InvalidArgumentException;
import java.lang.reflect.InvocationTargetException;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Builds a {@link BlockLocationPolicy} from a configured name: a short name, written either way
 * ({@code LOCAL_FIRST} or {@code LocalFirst}, case and underscores ignored), or a fully qualified class
 * name. Stateless, thread-safe.
 */
public final class BlockLocationPolicies {
  private BlockLocationPolicies() {}

  private static final Map<String, Function<StrataConf, BlockLocationPolicy>> SHORT = Map.of(
      "localfirst", c -> new LocalFirstPolicy(),
      "localfirstavoideviction", LocalFirstAvoidEvictionPolicy::new,
      "mostavailablefirst", c -> new MostAvailableFirstPolicy(),
      "roundrobin", c -> new RoundRobinPolicy(),
      "specifichost", SpecificHostPolicy::new,
      "deterministichash", c -> new DeterministicHashPolicy(),
      "capacitybasedrandom", CapacityBasedRandomPolicy::new);

  /** The short names, for messages and docs. */
  public static final String SHORT_NAMES = "LOCAL_FIRST, LOCAL_FIRST_AVOID_EVICTION, MOST_AVAILABLE_FIRST, "
      + "ROUND_ROBIN, SPECIFIC_HOST, DETERMINISTIC_HASH, CAPACITY_BASED_RANDOM";

  private static String normalise(String name) {
    String n = name.trim().replace("_", "").toLowerCase(Locale.ROOT);
    return n.endsWith("policy") ? n.substring(0, n.length() - "policy".length()) : n;
  }

  /** True for a short name or anything shaped like a class name (checked when the policy is built). */
  public static boolean isValidName(String name) {
    return SHORT.containsKey(normalise(name)) || name.trim().matches("[A-Za-z_$][\\w$]*(\\.[A-Za-z_$][\\w$]*)+");
  }

  /**
   * The policy {@code name} configured under {@code keyName}; fails with an InvalidArgumentException naming
   * the key and the value when the name is unknown, the class is missing, is no policy or cannot be built.
   */
  public static BlockLocationPolicy create(String name, StrataConf conf, String keyName)
      throws InvalidArgumentException {
    Function<StrataConf, BlockLocationPolicy> known = SHORT.get(normalise(name));
    try {
      if (known != null) {
        return known.apply(conf);
      }
      if (!isValidName(name)) {
        throw new InvalidArgumentException("Invalid value '" + name + "' for " + keyName + ": must be one of "
            + SHORT_NAMES + " or a class implementing " + BlockLocationPolicy.class.getName());
      }
      return byClass(name.trim(), conf, keyName);
    } catch (IllegalArgumentException e) {
      throw new InvalidArgumentException("Cannot use location policy '" + name + "' (" + keyName + "): "
          + e.getMessage(), e);
    }
  }

  private static BlockLocationPolicy byClass(String className, StrataConf conf, String keyName)
      throws InvalidArgumentException {
    Class<?> c;
    try {
      c = Class.forName(className, true, BlockLocationPolicies.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new InvalidArgumentException("Location policy class " + className + " (" + keyName
          + ") is not on the classpath; short names are " + SHORT_NAMES, e);
    }
    if (!BlockLocationPolicy.class.isAssignableFrom(c)) {
      throw new InvalidArgumentException("Location policy class " + className + " (" + keyName
          + ") does not implement " + BlockLocationPolicy.class.getName());
    }
    try {
      try {
        return (BlockLocationPolicy) c.getConstructor(StrataConf.class).newInstance(conf);
      } catch (NoSuchMethodException e) {
        return (BlockLocationPolicy) c.getConstructor().newInstance();
      }
    } catch (InvocationTargetException e) {
      throw new InvalidArgumentException("Location policy class " + className + " (" + keyName
          + ") failed to start: " + e.getCause(), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new InvalidArgumentException("Location policy class " + className + " (" + keyName
          + ") needs a public constructor taking a StrataConf or nothing", e);
    }
  }
}
