package io.strata.common.shuffle;

import io.strata.common.exception.InvalidArgumentException;
import java.util.regex.Pattern;

/**
 * The check of a shuffle's application id, which names a directory under {@code /.shuffle}: the driver
 * checks it before creating files and every worker before accepting it, so no id can name a path outside
 * that directory. Stateless, thread-safe.
 */
public final class AppIds {
  /** The directory every shuffle's partition files live under: {@code /.shuffle/<app>/<shuffle>/}. */
  public static final String ROOT = "/.shuffle";
  /** As Spark makes them: {@code local-1700000000000}, {@code app-20261202184000-0001}. */
  private static final Pattern APP_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");

  private AppIds() {}

  /** Whether {@code path} (normalised, absolute) names something under {@link #ROOT}. */
  public static boolean underRoot(String path) {
    return path.startsWith(ROOT + "/");
  }

  public static void check(String appId) throws InvalidArgumentException {
    if (appId == null || !APP_ID.matcher(appId).matches() || appId.contains("..")) {
      throw new InvalidArgumentException("Bad shuffle app id '" + appId + "': it must be 1 to 128 letters, "
          + "digits, '_', '.' or '-', start with a letter or digit and hold no '..' (it names a directory "
          + "under /.shuffle)");
    }
  }
}
