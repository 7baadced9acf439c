package io.strata.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.fs.contract.AbstractContractCopyFromLocalTest;

/** Hadoop's CopyFromLocal contract suite on strata://. */
public class TestStrataContractCopyFromLocal extends AbstractContractCopyFromLocalTest {
  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf);
  }
}
