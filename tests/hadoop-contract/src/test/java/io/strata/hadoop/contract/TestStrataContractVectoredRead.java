package io.strata.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.fs.contract.AbstractContractVectoredReadTest;

/** Hadoop's VectoredRead contract suite on strata://, run for each buffer type the suite names. */
public class TestStrataContractVectoredRead extends AbstractContractVectoredReadTest {
  public TestStrataContractVectoredRead(String bufferType) {
    super(bufferType);
  }

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf);
  }
}
