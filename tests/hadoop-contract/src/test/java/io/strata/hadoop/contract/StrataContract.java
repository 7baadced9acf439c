package io.strata.hadoop.contract;

import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's contract binding for strata://: the options of {@code contract/strata.xml} (HDFS's strict
 * semantics; what Strata lacks is declared there and explained in docs/HADOOP.md) and a file system on the
 * shared {@link ContractCluster}, reached through the service file (no fs.strata.impl) at
 * {@code strata://localhost:<port>/}. The client's block size comes in as a {@code strata.} key of the Hadoop
 * configuration. Used by one suite at a time.
 */
public class StrataContract extends AbstractFSContract {
  public static final String RESOURCE = "contract/strata.xml";
  private FileSystem fs;

  public StrataContract(Configuration conf) {
    super(conf);
    addConfResource(RESOURCE);
  }

  static URI clusterUri() {
    return URI.create("strata://localhost:" + ContractCluster.get().masterPort() + "/");
  }

  @Override
  public void init() throws IOException {
    super.init();
    getConf().set("strata.user.block.size.default", "1MB");
    fs = FileSystem.get(clusterUri(), getConf());
  }

  @Override
  public FileSystem getTestFileSystem() {
    return fs;
  }

  @Override
  public String getScheme() {
    return "strata";
  }

  @Override
  public Path getTestPath() {
    return new Path("/test");
  }
}
