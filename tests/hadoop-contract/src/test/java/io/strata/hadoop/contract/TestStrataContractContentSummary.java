package io.strata.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.fs.contract.AbstractContractContentSummaryTest;

/** Hadoop's ContentSummary contract suite on strata://. */
public class TestStrataContractContentSummary extends AbstractContractContentSummaryTest {
  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf);
  }
}
