package io.strata.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.contract.AbstractContractPathHandleTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/** Hadoop's PathHandle contract suite on strata://, for each handle option set the suite names. */
public class TestStrataContractPathHandle extends AbstractContractPathHandleTest {
  public TestStrataContractPathHandle(String name, Options.HandleOpt[] opts, boolean serialized) {
    super(name, opts, serialized);
  }

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf);
  }
}
