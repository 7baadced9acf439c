package io.strata.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.fs.contract.AbstractContractGetEnclosingRoot;

/** Hadoop's GetEnclosingRoot contract suite on strata://. */
public class TestStrataContractGetEnclosingRoot extends AbstractContractGetEnclosingRoot {
  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf);
  }
}
