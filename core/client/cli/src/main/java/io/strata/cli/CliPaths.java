package io.strata.cli;

import io.strata.common.path.StrataPath;
import java.util.Comparator;

/**
 * Path arguments as users type them ({@code a}, {@code /a/}, {@code /a//b/../c}) turned into the normalised
 * absolute paths the client accepts; relative paths are under {@code /} (there are no home directories).
 * Stateless.
 */
final class CliPaths {
  /** Orders paths depth first, a directory before its children, siblings by name ({@code ls -R}). */
  static final Comparator<String> TREE_ORDER = CliPaths::compareTree;

  private CliPaths() {}

  /** The normalised absolute form of a path argument; an empty argument stays empty (and is refused later). */
  static String normalise(String arg) {
    return StrataPath.normalise(arg);
  }

  /** {@code parent/name}, for a normalised parent. */
  static String child(String parent, String name) {
    return parent.equals("/") ? "/" + name : parent + "/" + name;
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
