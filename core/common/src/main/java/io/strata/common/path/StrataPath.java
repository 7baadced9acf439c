package io.strata.common.path;

import io.strata.common.exception.InvalidPathException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A validated absolute path in the Strata namespace. The rules, each reported by name when broken:
 * <ul>
 *   <li>not empty, and at most {@value #MAX_LENGTH} characters;</li>
 *   <li>absolute: starts with {@code /};</li>
 *   <li>normalised: no empty component ({@code //}), no trailing {@code /} except the root itself;</li>
 *   <li>no {@code .} or {@code ..} component;</li>
 *   <li>no control characters (U+0000-U+001F, U+007F);</li>
 *   <li>each component at most {@value #MAX_COMPONENT_LENGTH} characters.</li>
 * </ul>
 * Immutable and thread-safe.
 */
public final class StrataPath {
  public static final int MAX_LENGTH = 4096;
  public static final int MAX_COMPONENT_LENGTH = 255;
  public static final StrataPath ROOT = new StrataPath("/", List.of());

  private final String path;
  private final List<String> components;

  private StrataPath(String path, List<String> components) {
    this.path = path;
    this.components = components;
  }

  /** Validates {@code path} against every rule. */
  public static StrataPath of(String path) throws InvalidPathException {
    if (path == null || path.isEmpty()) {
      throw new InvalidPathException("Path is empty: a path must be absolute, like /dir/file");
    }
    if (path.length() > MAX_LENGTH) {
      throw invalid(path.substring(0, 64) + "...", "it is " + path.length()
          + " characters long, longer than the limit of " + MAX_LENGTH);
    }
    for (int i = 0; i < path.length(); i++) {
      char c = path.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        throw invalid(path, String.format("it contains the control character U+%04X at index %d", (int) c, i));
      }
    }
    if (path.charAt(0) != '/') {
      throw invalid(path, "it is not absolute (it must start with /)");
    }
    if (path.equals("/")) {
      return ROOT;
    }
    if (path.endsWith("/")) {
      throw invalid(path, "it is not normalised (it ends with /)");
    }
    List<String> parts = new ArrayList<>();
    int start = 1;
    while (start <= path.length()) {
      int end = path.indexOf('/', start);
      if (end < 0) {
        end = path.length();
      }
      String part = path.substring(start, end);
      if (part.isEmpty()) {
        throw invalid(path, "it is not normalised (it has an empty component, //)");
      }
      if (part.equals(".") || part.equals("..")) {
        throw invalid(path, "it has a '" + part + "' component");
      }
      if (part.length() > MAX_COMPONENT_LENGTH) {
        throw invalid(path, "the component '" + part.substring(0, 32) + "...' is " + part.length()
            + " characters long, longer than the limit of " + MAX_COMPONENT_LENGTH);
      }
      parts.add(part);
      start = end + 1;
    }
    return new StrataPath(path, Collections.unmodifiableList(parts));
  }

  private static InvalidPathException invalid(String path, String rule) {
    return new InvalidPathException("Invalid path '" + path + "': " + rule);
  }

  /**
   * Turns user input into a normalised path string: collapses {@code //}, drops a trailing {@code /}
   * and {@code .} components, resolves {@code ..}. Used by the CLI, never by the servers, which accept
   * only normalised paths. Relative input is resolved against {@code /}.
   */
  public static String normalise(String input) {
    if (input == null || input.isEmpty()) {
      return input;
    }
    List<String> out = new ArrayList<>();
    for (String part : input.split("/")) {
      if (part.isEmpty() || part.equals(".")) {
        continue;
      }
      if (part.equals("..")) {
        if (!out.isEmpty()) {
          out.remove(out.size() - 1);
        }
        continue;
      }
      out.add(part);
    }
    return "/" + String.join("/", out);
  }

  public boolean isRoot() {
    return components.isEmpty();
  }

  public List<String> components() {
    return components;
  }

  public int depth() {
    return components.size();
  }

  /** The last component; empty for the root. */
  public String name() {
    return isRoot() ? "" : components.get(components.size() - 1);
  }

  /** The parent path; the root's parent is null. */
  public StrataPath parent() {
    if (isRoot()) {
      return null;
    }
    if (components.size() == 1) {
      return ROOT;
    }
    int cut = path.lastIndexOf('/');
    return new StrataPath(path.substring(0, cut), components.subList(0, components.size() - 1));
  }

  /** The direct child {@code name}; the name is one component, so it may not contain {@code /}. */
  public StrataPath child(String name) throws InvalidPathException {
    if (name != null && name.indexOf('/') >= 0) {
      throw invalid(name, "a child name is one component and must not contain /");
    }
    return of(isRoot() ? "/" + name : path + "/" + name);
  }

  /** True when this path is {@code other} or lies under it. */
  public boolean isUnder(StrataPath other) {
    if (other.isRoot()) {
      return true;
    }
    return path.equals(other.path) || path.startsWith(other.path + "/");
  }

  @Override
  public String toString() {
    return path;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StrataPath && ((StrataPath) o).path.equals(path);
  }

  @Override
  public int hashCode() {
    return path.hashCode();
  }
}
