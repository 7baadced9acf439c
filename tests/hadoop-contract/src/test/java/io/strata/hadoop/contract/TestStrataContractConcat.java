package io.strata.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.fs.contract.AbstractContractConcatTest;

/** Hadoop's Concat contract suite on strata://. */
public class TestStrataContractConcat extends AbstractContractConcatTest {
  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf);
  }
}
