package io.strata.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.fs.contract.AbstractContractStreamIOStatisticsTest;

/** Hadoop's StreamIOStatistics contract suite on strata://. */
public class TestStrataContractStreamIOStatistics extends AbstractContractStreamIOStatisticsTest {
  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf);
  }
}
