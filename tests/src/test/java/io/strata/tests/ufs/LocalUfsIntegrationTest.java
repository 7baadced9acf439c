package io.strata.tests.ufs;

import io.strata.minicluster.LocalStrataCluster;
import io.strata.server.ufs.UfsManager;

/** The UFS end-to-end contract over the cluster's root mount: a local dir. */
class LocalUfsIntegrationTest extends UfsEndToEndContract {
  @Override
  protected LocalStrataCluster startCluster() throws Exception {
    return baseCluster().build().start();
  }

  @Override
  protected String strataRoot() {
    return "/local";
  }

  @Override
  protected String ufsRoot() {
    try {
      return UfsManager.normalize(cluster.rootUfsDir().resolve("local").toString(), cluster.rootUfsDir());
    } catch (io.strata.common.exception.InvalidArgumentException e) {
      throw new IllegalStateException(e);
    }
  }
}
