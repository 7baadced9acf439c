package io.strata.master.file;

import io.strata.server.ufs.UfsManager;
import java.util.regex.Pattern;

/**
 * Names of the temporary UFS files a file is written to before it is renamed into place (CACHE_THROUGH,
 * THROUGH, persistence): {@code .<name>.strata-<fileId>.tmp} beside the final name, so the rename stays
 * inside one directory. Metadata loads never show them. Stateless.
 */
final class UfsTempNames {
  private static final Pattern TEMP = Pattern.compile("^\\..*\\.strata-\\d+\\.tmp$");

  private UfsTempNames() {}

  static String tempName(String name, long fileId) {
    return "." + name + ".strata-" + fileId + ".tmp";
  }

  /** Where file {@code fileId}, to be placed at {@code ufsUri}, is written first: beside it. */
  static String tempUri(String ufsUri, String name, long fileId) {
    return UfsManager.join(UfsManager.parent(ufsUri), tempName(name, fileId));
  }

  static boolean isTemp(String name) {
    return TEMP.matcher(name).matches();
  }
}
