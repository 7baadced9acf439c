package io.strata.master.file;

import io.strata.common.exception.InvalidArgumentException;
import io.strata.server.ufs.UfsManager;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * Names of the temporary UFS files a file is written to before it is renamed into place (CACHE_THROUGH,
 * THROUGH, persistence): {@code .<name>.strata-<fileId>-<nonce>.tmp} beside the final name, so the rename
 * stays inside one directory. Every write stream and every persist attempt gets its own nonce, so two
 * streams never write into one temp file. Metadata loads never show such names, and users cannot create
 * them ({@link #refuseUserName}), so a user's file never collides with a temp file. Stateless.
 */
final class UfsTempNames {
  /** Also matches the names of older versions ({@code .<name>.strata-<fileId>.tmp}), still hidden. */
  private static final Pattern TEMP = Pattern.compile("^\\..*\\.strata-\\d+(-[0-9a-f]+)?\\.tmp$");

  private UfsTempNames() {}

  static String tempName(String name, long fileId, String nonce) {
    return "." + name + ".strata-" + fileId + "-" + nonce + ".tmp";
  }

  /** A fresh nonce: 16 hex digits. */
  static String nonce() {
    return String.format("%016x", ThreadLocalRandom.current().nextLong());
  }

  /** Where file {@code fileId}, to be placed at {@code ufsUri}, is written first: beside it, under a new nonce. */
  static String tempUri(String ufsUri, String name, long fileId) {
    return UfsManager.join(UfsManager.parent(ufsUri), tempName(name, fileId, nonce()));
  }

  static boolean isTemp(String name) {
    return TEMP.matcher(name).matches();
  }

  /** True when {@code name} is a temp name of file {@code fileId} (any nonce). */
  static boolean isTempOf(String name, String fileName, long fileId) {
    return isTemp(name) && name.startsWith("." + fileName + ".strata-" + fileId + "-");
  }

  /** Refuses a user path whose last component is shaped like a temp name. */
  static void refuseUserName(String path, String name) throws InvalidArgumentException {
    if (isTemp(name)) {
      throw new InvalidArgumentException("Invalid path " + path + ": names shaped like .<name>.strata-<id>.tmp or "
          + ".<name>.strata-<id>-<hex>.tmp are reserved for Strata's temporary under file system files");
    }
  }
}
