package io.strata.common.conf;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the string forms of configuration values: sizes, durations, lists. Stateless. */
public final class ValueParser {
  private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([a-zA-Z]*)");
  private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*([a-zA-Z]*)");

  private ValueParser() {}

  static Object parse(PropertyKey<?> key, String raw) {
    String s = raw.trim();
    try {
      switch (key.type()) {
        case STRING:
          return s;
        case INT:
          return Integer.parseInt(s);
        case LONG:
          return Long.parseLong(s);
        case DOUBLE:
          return Double.parseDouble(s);
        case BOOLEAN:
          if (s.equalsIgnoreCase("true")) {
            return true;
          }
          if (s.equalsIgnoreCase("false")) {
            return false;
          }
          throw new IllegalArgumentException("expected true or false");
        case BYTES:
          return parseBytes(s);
        case DURATION:
          return parseDuration(s);
        case LIST:
          return parseList(s);
        default:
          throw new AssertionError(key.type());
      }
    } catch (NumberFormatException e) {
      // Java's own message ("For input string") says nothing useful: say what is expected.
      throw new IllegalArgumentException("Invalid value '" + raw + "' for " + key.name() + ": expected "
          + expected(key.type()), e);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("Invalid value '" + raw + "' for " + key.name() + ": " + e.getMessage(), e);
    }
  }

  private static String expected(PropertyKey.Type type) {
    switch (type) {
      case INT: return "an integer between " + Integer.MIN_VALUE + " and " + Integer.MAX_VALUE;
      case LONG: return "an integer between " + Long.MIN_VALUE + " and " + Long.MAX_VALUE;
      case DOUBLE: return "a number such as 0.5";
      default: return "a " + type.name().toLowerCase(Locale.ROOT);
    }
  }

  /** {@code 64MB}, {@code 64MiB}, {@code 64m}, {@code 1.5GB}, {@code 4096}: binary units (1KB = 1024). */
  public static long parseBytes(String raw) {
    Matcher m = SIZE.matcher(raw.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("'" + raw + "' is not a size such as 4096, 64MB or 1GB");
    }
    double number = Double.parseDouble(m.group(1));
    String unit = m.group(2).toUpperCase(Locale.ROOT);
    long multiplier;
    switch (unit) {
      case "": case "B": multiplier = 1L; break;
      case "K": case "KB": case "KIB": multiplier = 1L << 10; break;
      case "M": case "MB": case "MIB": multiplier = 1L << 20; break;
      case "G": case "GB": case "GIB": multiplier = 1L << 30; break;
      case "T": case "TB": case "TIB": multiplier = 1L << 40; break;
      case "P": case "PB": case "PIB": multiplier = 1L << 50; break;
      default:
        throw new IllegalArgumentException("unknown size unit '" + m.group(2) + "' in '" + raw + "'");
    }
    double bytes = number * multiplier;
    // (double) Long.MAX_VALUE rounds up to 2^63, so compare against 2^63 itself: anything at or above
    // it would be clamped to Long.MAX_VALUE by the cast below.
    if (bytes >= 0x1p63) {
      throw new IllegalArgumentException("'" + raw + "' is too large");
    }
    return (long) bytes;
  }

  /** The longest duration a key or a command accepts: {@code Long.MAX_VALUE} milliseconds. */
  public static final Duration MAX_DURATION = Duration.ofMillis(Long.MAX_VALUE);

  /**
   * {@code 500ms}, {@code 10s}, {@code 5min}, {@code 2h}, {@code 1d}; a bare number is milliseconds. The
   * result is never negative and always fits in a long of milliseconds: a larger value is refused with
   * a message giving the maximum ({@link #MAX_DURATION}), never wrapped.
   */
  public static Duration parseDuration(String raw) {
    Matcher m = DURATION.matcher(raw.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("'" + raw + "' is not a duration such as 500ms, 10s or 5min");
    }
    long unitMs;
    switch (m.group(2).toLowerCase(Locale.ROOT)) {
      case "": case "ms": unitMs = 1L; break;
      case "s": case "sec": unitMs = 1_000L; break;
      case "m": case "min": unitMs = 60_000L; break;
      case "h": unitMs = 3_600_000L; break;
      case "d": unitMs = 86_400_000L; break;
      default:
        throw new IllegalArgumentException("unknown duration unit '" + m.group(2) + "' in '" + raw + "'");
    }
    try {
      return Duration.ofMillis(Math.multiplyExact(Long.parseLong(m.group(1)), unitMs));
    } catch (ArithmeticException | NumberFormatException e) {
      throw new IllegalArgumentException("'" + raw + "' is too large: the maximum is " + Long.MAX_VALUE
          + "ms (about 292 million years)", e);
    }
  }

  static List<String> parseList(String raw) {
    List<String> out = new ArrayList<>();
    for (String part : raw.split(",")) {
      String p = part.trim();
      if (!p.isEmpty()) {
        out.add(p);
      }
    }
    return List.copyOf(out);
  }
}
