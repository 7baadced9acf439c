package io.strata.cli;

import io.strata.common.path.StrataPath;
import java.util.Comparator;
import java.util.Locale;

/**
 * Path arguments as users type them ({@code a}, {@code /a/}, {@code /a//b/../c}, {@code strata:///a},
 * {@code strata://host:port/a}) turned into the normalised absolute paths the client accepts; relative
 * paths are under {@code /} (there are no home directories). Stateless.
 */
final class CliPaths {
  /** Orders paths depth first, a directory before its children, siblings by name ({@code ls -R}). */
  static final Comparator<String> TREE_ORDER = CliPaths::compareTree;

  /** The scheme of Strata URIs. */
  static final String SCHEME = "strata";

  private CliPaths() {}

  /**
   * A path argument: the master its URI names ({@code host:port}, {@code host1:port1,host2:port2} or
   * {@code zk@host:port}; null for a plain path or {@code strata:///path}) and its normalised path.
   */
  record Argument(String authority, String path) {}

  /**
   * Splits a path argument. A plain path ({@code /a}, {@code a}) and {@code strata:/a} or
   * {@code strata:///a} name the configured master; {@code strata://authority/a} names that master
   * ({@code strata://authority} alone is its root). Any other scheme ({@code hdfs://nn/a}, {@code file:/a})
   * throws IllegalArgumentException saying that strata fs works on Strata paths only. As in Hadoop's
   * {@code Path}, a colon before the first slash starts a scheme.
   */
  static Argument parse(String arg) {
    int colon = arg.indexOf(':');
    int slash = arg.indexOf('/');
    if (colon <= 0 || (slash >= 0 && slash < colon)) {
      return new Argument(null, normalise(arg));
    }
    String scheme = arg.substring(0, colon);
    if (!scheme.toLowerCase(Locale.ROOT).equals(SCHEME)) {
      throw new IllegalArgumentException("Wrong FS: the scheme is " + scheme + ", not strata"
          + " (strata fs takes plain paths and strata:// URIs)");
    }
    String rest = arg.substring(colon + 1);
    if (!rest.startsWith("//")) {
      if (!rest.startsWith("/")) {
        throw new IllegalArgumentException("Wrong FS: a strata: URI needs an absolute path (strata:///dir)");
      }
      return new Argument(null, normalise(rest));
    }
    int pathStart = rest.indexOf('/', 2);
    String authority = pathStart < 0 ? rest.substring(2) : rest.substring(2, pathStart);
    String path = pathStart < 0 ? "/" : rest.substring(pathStart);
    return new Argument(authority.isEmpty() ? null : authority, normalise(path));
  }

  /**
   * A local path argument: a plain path, or a {@code file:} URI ({@code file:///tmp/a}, {@code file:/tmp/a})
   * as hdfs dfs users give local sources and destinations. A malformed URI throws IllegalArgumentException.
   */
  static java.nio.file.Path local(String arg) {
    if (!arg.regionMatches(true, 0, "file:", 0, 5)) {
      return java.nio.file.Path.of(arg);
    }
    try {
      return java.nio.file.Path.of(java.net.URI.create(arg));
    } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException e) {
      throw new IllegalArgumentException("'" + arg + "' is not a local file URI (file:///dir/file): "
          + e.getMessage(), e);
    }
  }

  /** The normalised absolute form of a path argument; an empty argument stays empty (and is refused later). */
  static String normalise(String arg) {
    return StrataPath.normalise(arg);
  }

  /** {@code parent/name}, for a normalised parent. */
  static String child(String parent, String name) {
    return parent.equals("/") ? "/" + name : parent + "/" + name;
  }

  /** The parent of a normalised path other than {@code /}. */
  static String parent(String path) {
    int slash = path.lastIndexOf('/');
    return slash == 0 ? "/" : path.substring(0, slash);
  }

  /** The last component of a normalised path; empty for {@code /}. */
  static String name(String path) {
    return path.substring(path.lastIndexOf('/') + 1);
  }

  /** The first component of {@code path} below {@code ancestor}, or null when path is not strictly below it. */
  static String firstComponentBelow(String ancestor, String path) {
    String prefix = ancestor.equals("/") ? "/" : ancestor + "/";
    if (!path.startsWith(prefix) || path.length() == prefix.length()) {
      return null;
    }
    int end = path.indexOf('/', prefix.length());
    return end < 0 ? path.substring(prefix.length()) : path.substring(prefix.length(), end);
  }

  private static int compareTree(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char ca = a.charAt(i);
      char cb = b.charAt(i);
      if (ca != cb) {
        // '/' ends a component, so it sorts before every other character: /a/x before /a-b.
        if (ca == '/') {
          return -1;
        }
        if (cb == '/') {
          return 1;
        }
        return Character.compare(ca, cb);
      }
    }
    return Integer.compare(a.length(), b.length());
  }
}
