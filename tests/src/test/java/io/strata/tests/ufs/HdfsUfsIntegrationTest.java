package io.strata.tests.ufs;

import io.strata.client.options.MountOptions;
import io.strata.minicluster.LocalStrataCluster;
import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * The UFS end-to-end contract over a real HDFS (Hadoop's MiniDFSCluster: a NameNode and a DataNode in
 * this JVM, on 127.0.0.1 only), mounted at {@code /hdfs}.
 */
class HdfsUfsIntegrationTest extends UfsEndToEndContract {
  private MiniDFSCluster dfs;
  private String hdfsRoot;

  @Override
  protected LocalStrataCluster startCluster() throws Exception {
    dfs = startMiniDfs();
    hdfsRoot = "hdfs://127.0.0.1:" + dfs.getNameNodePort() + "/strata";
    LocalStrataCluster c = baseCluster().build().start();
    c.client().mount("/hdfs", hdfsRoot, MountOptions.defaults().withProperties(Map.of("dfs.replication", "1")));
    return c;
  }

  /** A NameNode and a DataNode in this JVM, on 127.0.0.1 only, with {@code /strata} made. */
  static MiniDFSCluster startMiniDfs() throws Exception {
    File base = Files.createTempDirectory(java.nio.file.Path.of("target"), "minidfs-").toFile().getAbsoluteFile();
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getPath());
    for (String key : new String[] {"dfs.namenode.rpc-address", "dfs.namenode.http-address",
        "dfs.namenode.https-address", "dfs.namenode.secondary.http-address", "dfs.namenode.secondary.https-address",
        "dfs.namenode.backup.address", "dfs.namenode.backup.http-address", "dfs.datanode.address",
        "dfs.datanode.http.address", "dfs.datanode.https.address", "dfs.datanode.ipc.address"}) {
      conf.set(key, "127.0.0.1:0");
    }
    conf.set("dfs.datanode.hostname", "localhost");
    conf.setBoolean("dfs.namenode.datanode.registration.ip-hostname-check", false);
    conf.setBoolean("dfs.permissions.enabled", false);
    conf.setInt("dfs.replication", 1);
    conf.set("hadoop.http.authentication.signer.secret.provider", "random");
    MiniDFSCluster dfs = new MiniDFSCluster.Builder(conf, base).numDataNodes(1).nameNodePort(0).nameNodeHttpPort(0)
        .checkDataNodeAddrConfig(true).format(true).build();
    dfs.waitActive();
    try (FileSystem hdfs = FileSystem.newInstance(URI.create("hdfs://127.0.0.1:" + dfs.getNameNodePort()), conf)) {
      hdfs.mkdirs(new Path("/strata"));
    }
    return dfs;
  }

  @Override
  protected void stopUfs() {
    if (dfs != null) {
      dfs.shutdown(true);
    }
  }

  @Override
  protected String strataRoot() {
    return "/hdfs";
  }

  @Override
  protected String ufsRoot() {
    return hdfsRoot;
  }
}
