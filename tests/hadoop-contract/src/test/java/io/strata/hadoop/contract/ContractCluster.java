package io.strata.hadoop.contract;

import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The one Strata cluster every contract suite of a test JVM runs against: started by the first suite,
 * closed when the JVM exits (suites run one after another, each under its own test dir; the root directory
 * suite empties the root, which the others tolerate since each makes its dirs afresh). A master and two
 * workers on loopback; clients write 1MB blocks (set through the Hadoop configuration, see
 * {@link StrataContract}), so a file of a few MB crosses block boundaries; the master takes blocks down to
 * 1 KB, which some suites ask for. Thread-safe (one monitor).
 */
final class ContractCluster {
  private static LocalStrataCluster cluster;

  private ContractCluster() {}

  static synchronized LocalStrataCluster get() {
    if (cluster == null) {
      try {
        cluster = LocalStrataCluster.builder().workers(2)
            .set("strata.worker.tier.0.quota", "256MB")
            // Hadoop's suites create files with 1 KB and 8 KB blocks; HDFS's own contract tests lift its minimum
            // (dfs.namenode.fs-limits.min-block-size) the same way.
            .set("strata.master.block.size.min", "1KB")
            .build().start();
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot start the contract tests' Strata cluster", e);
      }
      LocalStrataCluster started = cluster;
      Runtime.getRuntime().addShutdownHook(new Thread(started::close, "contract-cluster-close"));
    }
    return cluster;
  }
}
