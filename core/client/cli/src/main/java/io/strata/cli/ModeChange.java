package io.strata.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code chmod} mode as {@code hdfs dfs -chmod} reads it: octal digits ({@code 755}, {@code 1777}), which
 * set the mode outright, or comma-separated symbolic clauses {@code [ugoa]*[+-=][rwxXt]*} ({@code u+x},
 * {@code go-w}, {@code a=r}, {@code o+t}), which change the current mode. No letter before the operator
 * means {@code a}, as in Hadoop (no umask is applied); {@code X} is execute only for a directory or a mode
 * that already has an execute bit; {@code t} is the sticky bit (01000).
 *
 * <p>Immutable and thread-safe.
 */
final class ModeChange {
  private static final Pattern OCTAL = Pattern.compile("[0-7]{1,4}");
  private static final Pattern CLAUSE = Pattern.compile("([ugoa]*)([-+=])([rwxXt]*)");
  private static final int STICKY = 01000;

  /** One clause: who it touches (a mask of the rwx positions), its operator and its letters. */
  private record Clause(int whoMask, char op, String perms) {}

  private final Integer octal;
  private final List<Clause> clauses;

  private ModeChange(Integer octal, List<Clause> clauses) {
    this.octal = octal;
    this.clauses = clauses;
  }

  /** Parses a mode; a malformed one throws IllegalArgumentException saying which forms are understood. */
  static ModeChange parse(String mode) {
    if (OCTAL.matcher(mode).matches()) {
      return new ModeChange(Integer.parseInt(mode, 8), List.of());
    }
    List<Clause> clauses = new ArrayList<>();
    for (String part : mode.split(",", -1)) {
      Matcher m = CLAUSE.matcher(part);
      if (!m.matches() || (m.group(3).isEmpty() && !m.group(2).equals("="))) {
        throw new IllegalArgumentException("'" + mode + "' is not a mode: give octal digits (755, 1777) or "
            + "comma-separated clauses [ugoa][+-=][rwxXt] (u+x,go-w)");
      }
      int who = 0;
      String letters = m.group(1).isEmpty() ? "a" : m.group(1);
      for (char c : letters.toCharArray()) {
        who |= switch (c) {
          case 'u' -> 0700;
          case 'g' -> 0070;
          case 'o' -> 0007;
          default -> 0777;
        };
      }
      clauses.add(new Clause(who, m.group(2).charAt(0), m.group(3)));
    }
    return new ModeChange(null, List.copyOf(clauses));
  }

  /** True when the result does not depend on the current mode (octal): one recursive call does for a tree. */
  boolean isAbsolute() {
    return octal != null;
  }

  /** The mode that results from applying this change to {@code current} on a file or a directory. */
  int apply(int current, boolean directory) {
    if (octal != null) {
      return octal;
    }
    int mode = current & 07777;
    for (Clause c : clauses) {
      boolean execute = directory || (mode & 0111) != 0;
      int bits = 0;
      boolean sticky = false;
      for (char p : c.perms().toCharArray()) {
        switch (p) {
          case 'r' -> bits |= 0444;
          case 'w' -> bits |= 0222;
          case 'x' -> bits |= 0111;
          case 'X' -> bits |= execute ? 0111 : 0;
          default -> sticky = true; // 't'
        }
      }
      bits &= c.whoMask();
      // The sticky bit belongs to "others" (o+t, a+t, +t), as in chmod(1).
      int stickyBit = sticky && (c.whoMask() & 0007) != 0 ? STICKY : 0;
      switch (c.op()) {
        case '+' -> mode |= bits | stickyBit;
        case '-' -> mode &= ~(bits | stickyBit);
        default -> {
          mode &= ~c.whoMask();
          if ((c.whoMask() & 0007) != 0) {
            mode &= ~STICKY;
          }
          mode |= bits | stickyBit;
        }
      }
    }
    return mode;
  }
}
