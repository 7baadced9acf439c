package io.strata.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.fs.contract.AbstractContractEtagTest;

/** Hadoop's Etag contract suite on strata://. */
public class TestStrataContractEtag extends AbstractContractEtagTest {
  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf);
  }
}
