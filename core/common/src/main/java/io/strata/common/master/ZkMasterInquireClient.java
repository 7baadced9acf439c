package io.strata.common.master;

import io.strata.common.exception.UnavailableException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Finds the leader from the masters' ZooKeeper election (Curator LeaderLatch): the participant whose
 * ephemeral sequential node has the lowest sequence is the leader, and its node data is its address.
 * Connects lazily. Thread-safe.
 */
final class ZkMasterInquireClient implements MasterInquireClient {
  private final String connect;
  private final String path;
  private final Duration sessionTimeout;
  private CuratorFramework zk;

  ZkMasterInquireClient(String connect, String path, Duration sessionTimeout) {
    this.connect = connect;
    this.path = path;
    this.sessionTimeout = sessionTimeout;
  }

  private synchronized CuratorFramework zk() {
    if (zk == null) {
      zk = CuratorFrameworkFactory.builder().connectString(connect)
          .sessionTimeoutMs((int) sessionTimeout.toMillis()).connectionTimeoutMs(5000)
          .retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
      zk.start();
    }
    return zk;
  }

  @Override
  public InetSocketAddress leader() throws UnavailableException {
    try {
      List<String> children = new ArrayList<>(zk().getChildren().forPath(path));
      // LeaderLatch nodes end in a 10-digit sequence; the lowest leads.
      children.sort(Comparator.comparing(c -> c.substring(Math.max(0, c.length() - 10))));
      for (String c : children) {
        byte[] data = zk().getData().forPath(path + "/" + c);
        if (data != null && data.length > 0) {
          return MasterInquireClient.parse(new String(data, StandardCharsets.UTF_8));
        }
      }
      throw new UnavailableException("No master is in the election at " + connect + path);
    } catch (UnavailableException e) {
      throw e;
    } catch (Exception e) {
      throw new UnavailableException("Cannot read the master election at " + connect + path + ": " + e, e);
    }
  }

  @Override
  public List<InetSocketAddress> candidates() {
    return List.of();
  }

  @Override
  public synchronized void close() {
    if (zk != null) {
      zk.close();
      zk = null;
    }
  }
}
