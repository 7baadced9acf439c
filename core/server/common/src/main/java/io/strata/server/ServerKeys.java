package io.strata.server;

import io.strata.common.conf.PropertyKey;

/** Keys every server process reads. */
public final class ServerKeys {
  private ServerKeys() {}

  public static final PropertyKey<String> LOGS_DIR = PropertyKey.stringKey("strata.logs.dir")
      .defaultValue("logs")
      .doc("Directory of server logs (relative to strata.home).")
      .build();

  public static final PropertyKey<String> DATA_DIR = PropertyKey.stringKey("strata.data.dir")
      .defaultValue("data")
      .doc("Directory of server state: pid files, ready markers, later the journal (relative to strata.home).")
      .build();

  public static final PropertyKey<Integer> RPC_THREADS = PropertyKey.intKey("strata.server.rpc.threads")
      .defaultValue(256)
      .validate(v -> v >= 1, "at least 1")
      .doc("Threads that run a server's RPC handlers (master and worker each). The pool never grows past "
          + "this; see strata.server.rpc.queue.max.")
      .build();

  public static final PropertyKey<Integer> RPC_QUEUE_MAX = PropertyKey.intKey("strata.server.rpc.queue.max")
      .defaultValue(2048)
      .validate(v -> v >= 1, "at least 1")
      .doc("RPC callbacks that may wait for a handler thread; when every thread is busy and this many wait, "
          + "new calls are refused with RESOURCE_EXHAUSTED.")
      .build();

  public static final PropertyKey<Integer> RPC_STREAMS_PER_CONNECTION_MAX =
      PropertyKey.intKey("strata.server.rpc.streams.per.connection.max")
          .defaultValue(1000)
          .validate(v -> v >= 1, "at least 1")
          .doc("Concurrent calls (HTTP/2 streams) one client connection may have open; more wait at the client "
              + "until one ends.")
          .build();

  public static final PropertyKey<java.time.Duration> RPC_KEEPALIVE_TIME =
      PropertyKey.durationKey("strata.server.rpc.keepalive.time")
          .defaultValue("1min")
          .validate(d -> d.toMillis() >= 1000, "at least 1s")
          .doc("A server pings a connection idle for this long, and closes it when no answer comes within "
              + "strata.server.rpc.keepalive.timeout: a vanished client does not hold its calls for ever.")
          .build();

  public static final PropertyKey<java.time.Duration> RPC_KEEPALIVE_TIMEOUT =
      PropertyKey.durationKey("strata.server.rpc.keepalive.timeout")
          .defaultValue("20s")
          .validate(d -> d.toMillis() >= 100, "at least 100ms")
          .doc("How long a server waits for the answer to its keepalive ping before it closes the connection.")
          .build();

  public static final PropertyKey<java.time.Duration> RPC_KEEPALIVE_PERMIT_MIN =
      PropertyKey.durationKey("strata.server.rpc.keepalive.permit.min")
          .defaultValue("10s")
          .validate(d -> d.toMillis() >= 0, "0 or more")
          .doc("The most often a client may ping a server; a client pinging more often is disconnected.")
          .build();

  public static final PropertyKey<java.time.Duration> RPC_CONNECTION_IDLE_MAX =
      PropertyKey.durationKey("strata.server.rpc.connection.idle.max")
          .defaultValue("30min")
          .validate(d -> d.toMillis() >= 1000, "at least 1s")
          .doc("A connection with no call for this long is closed by the server (the client reconnects when "
              + "it needs to).")
          .build();

  public static final PropertyKey<Integer> UFS_CLIENTS_MAX = PropertyKey.intKey("strata.ufs.clients.max")
      .defaultValue(64)
      .validate(v -> v >= 1, "at least 1")
      .doc("Most under file system clients (one per file system and mount option set) a server keeps open; "
          + "when full, the least recently used idle one that no stream uses is closed, and if there is none a new one "
          + "is refused.")
      .build();

  public static final PropertyKey<java.time.Duration> UFS_CLIENT_IDLE_TIMEOUT =
      PropertyKey.durationKey("strata.ufs.client.idle.timeout")
          .defaultValue("10min")
          .validate(d -> d.toMillis() >= 0, "0 or more")
          .doc("An under file system client unused for this long may be closed to make room for another "
              + "(strata.ufs.clients.max).")
          .build();
}
