package io.strata.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.fs.contract.AbstractContractLeaseRecoveryTest;

/** Hadoop's LeaseRecovery contract suite on strata://. */
public class TestStrataContractLeaseRecovery extends AbstractContractLeaseRecoveryTest {
  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf);
  }
}
