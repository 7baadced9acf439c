package io.strata.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A glob over one path component, with the syntax of Hadoop's {@code GlobPattern} (which is what
 * {@code hdfs dfs} users type): {@code *} any run of characters, {@code ?} one character, {@code [abc]},
 * {@code [a-z]} and {@code [^a]} / {@code [!a]} character classes, {@code {a,b}} alternatives (nestable),
 * and {@code \} to take the next character literally. Dot files are matched like any other name, as
 * Hadoop does.
 *
 * <p>Also {@link #expandSlashBraces}: alternatives that hold a {@code /} ({@code /a/{b/c,d}}) are spread
 * over whole paths first, as Hadoop's GlobExpander does, so that every other pattern is per component.
 *
 * <p>Immutable and thread-safe; the static helpers are pure.
 */
final class GlobPattern {
  private final Pattern regex;

  private GlobPattern(Pattern regex) {
    this.regex = regex;
  }

  /** True when {@code s} holds an unescaped {@code * ? [ {}: a pattern rather than a literal name. */
  static boolean hasWildcard(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\') {
        i++;
      } else if (c == '*' || c == '?' || c == '[' || c == '{') {
        return true;
      }
    }
    return false;
  }

  /** {@code s} with its backslash escapes removed: the literal name a wildcard-free component stands for. */
  static String unescape(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        c = s.charAt(++i);
      }
      b.append(c);
    }
    return b.toString();
  }

  /**
   * Compiles {@code glob}; a malformed one (an unclosed {@code [} or {@code {}, a trailing {@code \})
   * throws IllegalArgumentException saying what is wrong and where.
   */
  static GlobPattern compile(String glob, boolean ignoreCase) {
    StringBuilder re = new StringBuilder(glob.length() * 2);
    int curlyOpen = 0;
    boolean inSet = false;
    for (int i = 0; i < glob.length(); i++) {
      char c = glob.charAt(i);
      if (c == '\\') {
        if (++i == glob.length()) {
          throw error(glob, i - 1, "a \\ at the end escapes nothing");
        }
        re.append(literal(glob.charAt(i)));
        continue;
      }
      if (inSet) {
        if (c == ']') {
          inSet = false;
          re.append(']');
        } else if (c == '[' || c == '&') {
          re.append('\\').append(c); // literal inside a class; regex would read them as nesting or &&
        } else {
          re.append(c);
        }
        continue;
      }
      switch (c) {
        case '*':
          re.append(".*");
          break;
        case '?':
          re.append('.');
          break;
        case '[':
          inSet = true;
          re.append('[');
          if (i + 1 < glob.length() && (glob.charAt(i + 1) == '!' || glob.charAt(i + 1) == '^')) {
            re.append('^');
            i++;
          }
          if (i + 1 < glob.length() && glob.charAt(i + 1) == ']') {
            re.append("\\]"); // a ] first in a class is a member, as in shells
            i++;
          }
          break;
        case '{':
          curlyOpen++;
          re.append("(?:");
          break;
        case ',':
          re.append(curlyOpen > 0 ? "|" : ",");
          break;
        case '}':
          if (curlyOpen > 0) {
            curlyOpen--;
            re.append(')');
          } else {
            re.append("\\}");
          }
          break;
        default:
          re.append(literal(c));
      }
    }
    if (inSet) {
      throw error(glob, glob.lastIndexOf('['), "the character class [ is not closed by ]");
    }
    if (curlyOpen > 0) {
      throw error(glob, glob.lastIndexOf('{'), "the group { is not closed by }");
    }
    try {
      return new GlobPattern(Pattern.compile(re.toString(),
          ignoreCase ? Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE : 0));
    } catch (PatternSyntaxException e) {
      // A class like [z-a]: regex's own words say what is wrong with it.
      throw new IllegalArgumentException("Illegal file pattern '" + glob + "': " + e.getDescription(), e);
    }
  }

  /** True when the whole of {@code name} matches. */
  boolean matches(String name) {
    return regex.matcher(name).matches();
  }

  /**
   * Spreads each {@code {...}} group that holds a {@code /} over whole patterns, left to right and
   * recursively: {@code /a/{b/c,d}/e} gives {@code /a/b/c/e} and {@code /a/d/e}. Groups without a slash
   * are left for {@link #compile}.
   */
  static List<String> expandSlashBraces(String pattern) {
    int open = -1;
    int depth = 0;
    boolean slash = false;
    for (int i = 0; i < pattern.length(); i++) {
      char c = pattern.charAt(i);
      if (c == '\\') {
        i++;
      } else if (c == '{') {
        if (depth++ == 0) {
          open = i;
          slash = false;
        }
      } else if (c == '/' && depth > 0) {
        slash = true;
      } else if (c == '}' && depth > 0 && --depth == 0 && slash) {
        List<String> out = new ArrayList<>();
        String head = pattern.substring(0, open);
        String tail = pattern.substring(i + 1);
        for (String alt : splitTopLevel(pattern.substring(open + 1, i))) {
          out.addAll(expandSlashBraces(head + alt + tail));
        }
        return out;
      }
    }
    return List.of(pattern);
  }

  /** Splits a group's body at its commas that are not inside a nested group. */
  private static List<String> splitTopLevel(String body) {
    List<String> parts = new ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < body.length(); i++) {
      char c = body.charAt(i);
      if (c == '\\') {
        i++;
      } else if (c == '{') {
        depth++;
      } else if (c == '}') {
        depth--;
      } else if (c == ',' && depth == 0) {
        parts.add(body.substring(start, i));
        start = i + 1;
      }
    }
    parts.add(body.substring(start));
    return parts;
  }

  /** {@code c} as a regex matching itself, inside or outside a class: non-alphanumerics get a backslash. */
  private static String literal(char c) {
    return Character.isLetterOrDigit(c) || Character.isSurrogate(c) ? String.valueOf(c) : "\\" + c;
  }

  private static IllegalArgumentException error(String glob, int index, String what) {
    return new IllegalArgumentException("Illegal file pattern '" + glob + "': " + what + " (at index " + index + ")");
  }
}
