package io.strata.cli;

import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.common.exception.NotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Expands a path pattern ({@code /data/*.bin}, {@code /logs/2026-1[01]-??}, {@code /{a,b}/part-*}) into the paths
 * that exist, as Hadoop's Globber does: component by component, a literal component is appended without a
 * call, a pattern component lists each directory reached so far (one listing per directory) and keeps the
 * children whose name matches; when the last component is literal each candidate is checked to exist.
 * The result is sorted like {@code ls -R} and holds no path twice. A path with no wildcard is not looked
 * up at all: the command that uses it reports it missing in its own words.
 *
 * <p>Stateless: each call works with the client it is given, on the caller's thread.
 */
final class Globber {
  private Globber() {}

  /**
   * The existing paths {@code pattern} (a normalised path that may hold wildcards) matches; empty when
   * none. A malformed pattern throws IllegalArgumentException.
   */
  static List<String> glob(FileSystem fs, String pattern) throws IOException {
    TreeSet<String> out = new TreeSet<>(CliPaths.TREE_ORDER);
    for (String expanded : GlobPattern.expandSlashBraces(pattern)) {
      out.addAll(globOne(fs, CliPaths.normalise(expanded)));
    }
    return new ArrayList<>(out);
  }

  private static List<String> globOne(FileSystem fs, String pattern) throws IOException {
    List<String> candidates = List.of("/");
    boolean lastLiteral = true;
    for (String component : components(pattern)) {
      List<String> next = new ArrayList<>();
      if (!GlobPattern.hasWildcard(component)) {
        String name = GlobPattern.unescape(component);
        for (String c : candidates) {
          next.add(CliPaths.child(c, name));
        }
        lastLiteral = true;
      } else {
        GlobPattern glob = GlobPattern.compile(component, false);
        for (String dir : candidates) {
          for (URIStatus child : childrenOrNone(fs, dir)) {
            if (glob.matches(child.name())) {
              next.add(child.path());
            }
          }
        }
        lastLiteral = false;
      }
      candidates = next;
      if (candidates.isEmpty()) {
        return candidates;
      }
    }
    if (!lastLiteral) {
      return candidates;
    }
    List<String> existing = new ArrayList<>();
    for (String c : candidates) {
      if (fs.exists(c)) {
        existing.add(c);
      }
    }
    return existing;
  }

  /** The children of {@code dir}; none when it is missing or a file (whose listing is itself). */
  private static List<URIStatus> childrenOrNone(FileSystem fs, String dir) throws IOException {
    List<URIStatus> listing;
    try {
      listing = fs.listStatus(dir);
    } catch (NotFoundException e) {
      return List.of();
    }
    List<URIStatus> children = new ArrayList<>(listing.size());
    for (URIStatus s : listing) {
      if (!s.path().equals(dir)) {
        children.add(s);
      }
    }
    return children;
  }

  private static List<String> components(String path) {
    List<String> parts = new ArrayList<>();
    for (String p : path.split("/")) {
      if (!p.isEmpty()) {
        parts.add(p);
      }
    }
    return parts;
  }
}
