package io.strata.common.master;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.UnavailableException;
import java.io.Closeable;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * How clients and workers find the leading master: one configured address; a list of masters to poll;
 * or ZooKeeper, where the masters elect their leader. Implementations are thread-safe.
 */
public interface MasterInquireClient extends Closeable {
  /** The leader's RPC address, as best known now; UnavailableException when none can be found. */
  InetSocketAddress leader() throws UnavailableException;

  /** Every master address this client may try (for messages and polling). */
  List<InetSocketAddress> candidates();

  @Override
  default void close() {}

  /** The discovery the configuration asks for: ZooKeeper, else a master list, else one address. */
  static MasterInquireClient create(StrataConf conf) {
    return create(conf, null);
  }

  /** As {@link #create(StrataConf)}, polling masters over channels on {@code loops} (null: gRPC's shared ones). */
  static MasterInquireClient create(StrataConf conf, io.strata.common.grpc.ClientEventLoops loops) {
    if (conf.isSet(CommonKeys.ZOOKEEPER_ADDRESS)) {
      return new ZkMasterInquireClient(conf.get(CommonKeys.ZOOKEEPER_ADDRESS),
          conf.get(CommonKeys.ZOOKEEPER_LEADER_PATH), conf.get(CommonKeys.ZOOKEEPER_SESSION_TIMEOUT));
    }
    if (conf.isSet(CommonKeys.MASTER_RPC_ADDRESSES)) {
      List<InetSocketAddress> list = new ArrayList<>();
      for (String a : conf.get(CommonKeys.MASTER_RPC_ADDRESSES)) {
        list.add(parse(a));
      }
      return new PollingMasterInquireClient(list, conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE), loops);
    }
    InetSocketAddress single = InetSocketAddress.createUnresolved(conf.get(CommonKeys.MASTER_HOSTNAME),
        conf.get(CommonKeys.MASTER_RPC_PORT));
    return new MasterInquireClient() {
      @Override
      public InetSocketAddress leader() {
        return single;
      }

      @Override
      public List<InetSocketAddress> candidates() {
        return List.of(single);
      }
    };
  }

  /** {@code host:port} → address (unresolved: the channel resolves it). */
  static InetSocketAddress parse(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    if (colon <= 0 || colon == hostPort.length() - 1) {
      throw new IllegalArgumentException("'" + hostPort + "' is not host:port");
    }
    int port;
    try {
      port = Integer.parseInt(hostPort.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + hostPort + "' is not host:port", e);
    }
    return InetSocketAddress.createUnresolved(hostPort.substring(0, colon), port);
  }

  /** {@code host:port} of an address. */
  static String format(InetSocketAddress a) {
    return a.getHostString() + ":" + a.getPort();
  }
}
