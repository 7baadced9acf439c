package io.strata.hadoop;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.master.MasterInquireClient;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;

/**
 * The Strata client configuration behind a {@code strata://} file system: the process's own
 * ({@link StrataConf#load()}: site file, environment, system properties), then every Hadoop
 * {@link Configuration} key that starts with {@code strata.}, then what the URI's authority names, which
 * wins because it names the cluster:
 * <ul>
 *   <li>none ({@code strata:///path}): the configured master (or masters, or ZooKeeper);</li>
 *   <li>{@code host} or {@code host:port}: that one master ({@code strata.master.hostname},
 *       {@code strata.master.rpc.port});</li>
 *   <li>{@code host1:port1,host2:port2,...}: the masters to poll for the leader
 *       ({@code strata.master.rpc.addresses});</li>
 *   <li>{@code zk@host:port[,host:port...]}: the ZooKeeper ensemble the masters elect their leader in
 *       ({@code strata.zookeeper.address}).</li>
 * </ul>
 * A URI authority replaces the other two ways to find the master, so a site file's ZooKeeper setting
 * cannot redirect {@code strata://host:port/} elsewhere. Stateless.
 */
final class ClientConfs {
  /** Hadoop keys with this prefix are Strata client keys. */
  static final String PREFIX = "strata.";
  /** The authority prefix that names a ZooKeeper ensemble. */
  static final String ZK_PREFIX = "zk@";

  private ClientConfs() {}

  /** The client configuration for {@code uri} over {@code base}, with {@code hadoop}'s strata.* keys. */
  static StrataConf of(URI uri, Configuration hadoop, StrataConf base) {
    Map<String, String> values = new HashMap<>(base.explicitValues());
    values.putAll(strataKeys(hadoop));
    String authority = uri.getRawAuthority();
    if (authority == null || authority.isEmpty()) {
      return StrataConf.of(values);
    }
    values.remove(CommonKeys.ZOOKEEPER_ADDRESS.name());
    values.remove(CommonKeys.MASTER_RPC_ADDRESSES.name());
    if (authority.startsWith(ZK_PREFIX)) {
      String ensemble = authority.substring(ZK_PREFIX.length());
      values.put(CommonKeys.ZOOKEEPER_ADDRESS.name(), String.join(",", hostPorts(uri, ensemble)));
    } else if (authority.indexOf('@') >= 0) {
      throw new IllegalArgumentException("Bad strata URI " + uri + ": the authority is host:port, "
          + "host1:port1,host2:port2 or zk@host:port; a user name is not part of it");
    } else if (authority.indexOf(',') >= 0) {
      values.put(CommonKeys.MASTER_RPC_ADDRESSES.name(), String.join(",", hostPorts(uri, authority)));
    } else {
      int colon = authority.lastIndexOf(':');
      if (colon < 0) {
        values.put(CommonKeys.MASTER_HOSTNAME.name(), authority);
      } else {
        java.net.InetSocketAddress a = parse(uri, authority);
        values.put(CommonKeys.MASTER_HOSTNAME.name(), a.getHostString());
        values.put(CommonKeys.MASTER_RPC_PORT.name(), Integer.toString(a.getPort()));
      }
    }
    return StrataConf.of(values);
  }

  /** Every {@code strata.*} key of the Hadoop configuration with its value (variables expanded). */
  static Map<String, String> strataKeys(Configuration hadoop) {
    Map<String, String> out = new HashMap<>();
    for (Map.Entry<String, String> e : hadoop) {
      if (e.getKey().startsWith(PREFIX)) {
        out.put(e.getKey(), hadoop.get(e.getKey()));
      }
    }
    return out;
  }

  private static List<String> hostPorts(URI uri, String list) {
    List<String> out = new ArrayList<>();
    for (String part : list.split(",", -1)) {
      java.net.InetSocketAddress a = parse(uri, part);
      out.add(a.getHostString() + ":" + a.getPort());
    }
    return out;
  }

  private static java.net.InetSocketAddress parse(URI uri, String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    String port = colon < 0 ? "" : hostPort.substring(colon + 1);
    if (port.matches("[0-9]{1,9}") && (Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535)) {
      throw new IllegalArgumentException("Bad strata URI " + uri + ": port " + port + " in '" + hostPort
          + "' is not between 1 and 65535");
    }
    try {
      return MasterInquireClient.parse(hostPort);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("Bad strata URI " + uri + ": '" + hostPort + "' is not host:port", e);
    }
  }
}
