package io.strata.common.conf;

import java.time.Duration;

/** Keys every process reads: where the master is, message limits. */
public final class CommonKeys {
  private CommonKeys() {}

  public static final PropertyKey<String> MASTER_HOSTNAME = PropertyKey.stringKey("strata.master.hostname")
      .defaultValue("localhost")
      .doc("Host name clients and workers use to reach the master, and the name the master advertises.")
      .build();

  public static final PropertyKey<Integer> MASTER_RPC_PORT = PropertyKey.intKey("strata.master.rpc.port")
      .defaultValue(19998)
      .validate(p -> p >= 0 && p <= 65535, "a port number between 0 and 65535")
      .doc("The master's gRPC port.")
      .build();

  public static final PropertyKey<Long> NETWORK_MAX_MESSAGE_SIZE =
      PropertyKey.bytesKey("strata.network.max.message.size")
          .defaultValue("8MB")
          .validate(v -> v >= 64 * 1024 && v <= 256L * 1024 * 1024, "between 64KB and 256MB")
          .doc("Largest gRPC message a server or client accepts; larger messages are refused "
              + "with RESOURCE_EXHAUSTED.")
          .build();

  public static final PropertyKey<Long> NETWORK_FLOW_CONTROL_WINDOW =
      PropertyKey.bytesKey("strata.network.flow.control.window")
          .defaultValue("16MB")
          .validate(v -> v >= 64 * 1024 && v <= 1L << 30, "between 64KB and 1GB")
          .doc("HTTP/2 flow-control window of a client's channel to a worker: the bytes of a block read a "
              + "worker may send before the client acknowledges them. gRPC's default (1MB) allows about one "
              + "chunk in flight, so every chunk waited for a round trip between four threads; see "
              + "docs/PERFORMANCE.md for the measurement.")
          .build();

  public static final PropertyKey<Duration> RPC_TIMEOUT = PropertyKey.durationKey("strata.network.rpc.timeout")
      .defaultValue("30s")
      .doc("Deadline of a unary RPC (metadata calls, block commits, heartbeats).")
      .build();

  public static final PropertyKey<String> HOME = PropertyKey.stringKey("strata.home")
      .defaultValue(".")
      .doc("Install directory; relative data and log dirs are resolved against it.")
      .build();

  public static final PropertyKey<java.util.List<String>> MASTER_RPC_ADDRESSES =
      PropertyKey.listKey("strata.master.rpc.addresses")
          .doc("host:port of every master, for clients and workers to poll for the leader (HA without "
              + "ZooKeeper discovery). Unset: strata.master.hostname and strata.master.rpc.port.")
          .build();

  public static final PropertyKey<String> WORKER_SECRET = PropertyKey.stringKey("strata.security.worker.secret")
      .defaultValue("")
      .doc("A secret the master and every worker share: when set on the master, a worker registers only by showing "
          + "it (set it on the workers too). A registered worker gets the mount options, credentials included, of the "
          + "files it reads and persists; without a secret any caller that can reach the master can register as one "
          + "(the wire is not encrypted, so keep the cluster's network private either way). Empty: none asked.")
      .build();

  public static final PropertyKey<java.util.List<String>> WEB_ALLOWED_HOSTS =
      PropertyKey.listKey("strata.web.allowed.hosts")
          .defaultValue("")
          .doc("Extra names a request's Host header may carry at the masters' and workers' web ports (the web UI, "
              + "/metrics, /api), comma-separated; * for any. Always allowed: an IP address, localhost, the process's "
              + "bind host and the hostname it advertises. Any other name gets 403, so a web page whose own name "
              + "was made to resolve to this host (DNS rebinding) cannot read the pages; add the names a proxy or "
              + "a browser uses for the hosts here.")
          .build();

  public static final PropertyKey<String> ZOOKEEPER_ADDRESS = PropertyKey.stringKey("strata.zookeeper.address")
      .doc("ZooKeeper connect string (host:port,...). Set: masters elect their leader there, and clients and "
          + "workers find the leader there.")
      .build();

  public static final PropertyKey<String> ZOOKEEPER_LEADER_PATH =
      PropertyKey.stringKey("strata.zookeeper.leader.path")
          .defaultValue("/strata/leader")
          .doc("ZooKeeper path of the masters' leader election.")
          .build();

  public static final PropertyKey<Duration> ZOOKEEPER_SESSION_TIMEOUT =
      PropertyKey.durationKey("strata.zookeeper.session.timeout")
          .defaultValue("10s")
          // ZooKeeper takes an int of milliseconds: a longer timeout would wrap negative.
          .validate(d -> d.toMillis() >= 1 && d.toMillis() <= Integer.MAX_VALUE,
              "between 1ms and " + Integer.MAX_VALUE + "ms (about 24 days)")
          .doc("ZooKeeper session timeout: how long a leader that lost its connection stays leader.")
          .build();

  public static final PropertyKey<Duration> MASTER_RETRY_WINDOW =
      PropertyKey.durationKey("strata.user.master.retry.window")
          .defaultValue("60s")
          .doc("How long clients and workers keep retrying a master call that finds no leader (a failover), "
              + "before they give up with UNAVAILABLE.")
          .build();
}
