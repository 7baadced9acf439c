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

  /** Where drivers keep their liveness markers ({@link #driverMarker}); no app id can name it (they start alnum). */
  public static final String DRIVERS = ROOT + "/.drivers";

  /**
   * The marker of application {@code appId}'s driver: an incomplete file the driver holds the write lease of while it
   * runs. When the master recovers it (the driver stopped renewing: it crashed), it deletes {@code ROOT/<appId>}, the
   * application's shuffle files, which nobody would remove otherwise.
   */
  public static String driverMarker(String appId) {
    return DRIVERS + "/" + appId;
  }

  /**
   * Where the master notes, one empty directory per application, the applications whose driver marker it recovered and
   * whose files it is to delete (a note in the journal, so a failover before that delete does not forget it).
   */
  public static final String ENDED = ROOT + "/.ended";

  /** The application whose driver marker {@code path} is, or null when it is none. */
  public static String appOfDriverMarker(String path) {
    if (!path.startsWith(DRIVERS + "/")) {
      return null;
    }
    String app = path.substring(DRIVERS.length() + 1);
    return APP_ID.matcher(app).matches() && !app.contains("..") ? app : null;
  }

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
