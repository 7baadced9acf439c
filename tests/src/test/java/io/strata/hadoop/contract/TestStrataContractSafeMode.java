package io.strata.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.fs.contract.AbstractContractSafeModeTest;

/** Hadoop's SafeMode contract suite on strata://. */
public class TestStrataContractSafeMode extends AbstractContractSafeModeTest {
  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf);
  }
}
