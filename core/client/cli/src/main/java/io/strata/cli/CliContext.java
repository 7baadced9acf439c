package io.strata.cli;

import io.strata.client.FileSystem;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.time.Clock;
import java.time.ZoneId;
import java.util.function.Function;

/**
 * What the commands of one CLI run share: the configuration, the standard streams, the clock and time
 * zone used to print times, and the {@link FileSystem} client, created on first use (so {@code --help}
 * and usage errors never open a channel) and closed by {@link #close()} at the end of the run.
 *
 * <p>A {@code strata://authority/path} argument picks the master of the run ({@link #selectMaster}):
 * every URI of one run must name the same one, and it must be named before the client is opened.
 *
 * <p>Not thread-safe: one run, one thread.
 */
final class CliContext implements AutoCloseable {
  private StrataConf conf;
  /** The authority the run's URIs named, or null while none did. */
  private String selectedAuthority;
  private final InputStream in;
  private final PrintStream out;
  private final PrintStream err;
  private final Clock clock;
  private final ZoneId zone;
  private final boolean debug;
  private final Function<StrataConf, FileSystem> fsFactory;
  private FileSystem fs;
  private boolean progress;

  CliContext(StrataConf conf, InputStream in, PrintStream out, PrintStream err, Clock clock, ZoneId zone,
      boolean debug, Function<StrataConf, FileSystem> fsFactory) {
    this.conf = conf;
    this.in = in;
    this.out = out;
    this.err = err;
    this.clock = clock;
    this.zone = zone;
    this.debug = debug;
    this.fsFactory = fsFactory;
  }

  StrataConf conf() {
    return conf;
  }

  /** Standard input, for {@code put -}. Commands never close it. */
  InputStream in() {
    return in;
  }

  PrintStream out() {
    return out;
  }

  PrintStream err() {
    return err;
  }

  Clock clock() {
    return clock;
  }

  /** The zone {@code ls} prints times in (the user's). */
  ZoneId zone() {
    return zone;
  }

  /**
   * {@code host:port} of the leading master's web port: {@code webPort}, or by default the one it says it serves
   * (its configured web port, or the free port it fell back to), or from a master that does not say, its RPC port
   * + 1. Asks the master who leads.
   */
  String masterWebAddress(Integer webPort) throws IOException {
    io.strata.client.ClusterInfo info = fs().getClusterInfo();
    String master = info.masterAddress();
    if (master.isEmpty()) {
      master = masterAddress();
    }
    int colon = master.lastIndexOf(':');
    int port = webPort != null ? webPort
        : info.masterWebPort() > 0 ? info.masterWebPort() : Integer.parseInt(master.substring(colon + 1)) + 1;
    return master.substring(0, colon) + ":" + port;
  }

  /** True when long copies draw a progress bar on stderr (stderr is a terminal; see {@link Progress}). */
  boolean showProgress() {
    return progress;
  }

  CliContext showProgress(boolean show) {
    this.progress = show;
    return this;
  }

  /** True when STRATA_DEBUG is set: failures print their stack trace too. */
  boolean debug() {
    return debug;
  }

  /** The client, created on the first call. */
  FileSystem fs() {
    if (fs == null) {
      fs = fsFactory.apply(conf);
    }
    return fs;
  }

  /** Where the master this run talks to is: host:port, or the HA addresses or ZooKeeper it is found by. */
  String masterAddress() {
    if (conf.isSet(CommonKeys.ZOOKEEPER_ADDRESS)) {
      return "zk@" + conf.get(CommonKeys.ZOOKEEPER_ADDRESS);
    }
    if (conf.isSet(CommonKeys.MASTER_RPC_ADDRESSES)) {
      return String.join(",", conf.get(CommonKeys.MASTER_RPC_ADDRESSES));
    }
    return conf.get(CommonKeys.MASTER_HOSTNAME) + ":" + conf.get(CommonKeys.MASTER_RPC_PORT);
  }

  /**
   * Makes the master a {@code strata://} URI names the one this run talks to: {@code host:port} (a host
   * alone keeps strata.master.rpc.port), {@code host1:port1,host2:port2} (HA masters, polled for the
   * leader) or {@code zk@host:port[,host:port]} (found through ZooKeeper). A second, different authority
   * in the same run, or one named after the client was opened for another master, throws
   * IllegalArgumentException: one run talks to one master.
   */
  void selectMaster(String authority) {
    String normalised = authority.toLowerCase(java.util.Locale.ROOT);
    if (normalised.equals(selectedAuthority)) {
      return;
    }
    if (selectedAuthority != null) {
      throw new IllegalArgumentException("strata://" + authority + " names another master than strata://"
          + selectedAuthority + " did: one command works with one master");
    }
    StrataConf selected = withMaster(conf, authority);
    if (fs != null) {
      throw new IllegalArgumentException("strata://" + authority + " comes after paths of the master at "
          + masterAddress() + ": one command works with one master");
    }
    conf = selected;
    selectedAuthority = normalised;
  }

  /** {@code base} with its master settings replaced by the ones {@code authority} names. */
  static StrataConf withMaster(StrataConf base, String authority) {
    java.util.Map<String, String> values = new java.util.HashMap<>(base.explicitValues());
    values.remove(CommonKeys.ZOOKEEPER_ADDRESS.name());
    values.remove(CommonKeys.MASTER_RPC_ADDRESSES.name());
    if (authority.startsWith("zk@")) {
      String quorum = authority.substring(3);
      for (String hp : quorum.split(",", -1)) {
        hostAndPort(authority, hp, true);
      }
      values.put(CommonKeys.ZOOKEEPER_ADDRESS.name(), quorum);
    } else if (authority.contains(",")) {
      for (String hp : authority.split(",", -1)) {
        hostAndPort(authority, hp, true);
      }
      values.put(CommonKeys.MASTER_RPC_ADDRESSES.name(), authority);
    } else {
      String[] hp = hostAndPort(authority, authority, false);
      values.put(CommonKeys.MASTER_HOSTNAME.name(), hp[0]);
      if (hp[1] != null) {
        values.put(CommonKeys.MASTER_RPC_PORT.name(), hp[1]);
      }
    }
    return StrataConf.of(values);
  }

  /** {host, port or null}; a malformed one throws IllegalArgumentException naming the authority. */
  private static String[] hostAndPort(String authority, String hp, boolean portRequired) {
    int colon = hp.lastIndexOf(':');
    String host = colon < 0 ? hp : hp.substring(0, colon);
    String port = colon < 0 ? null : hp.substring(colon + 1);
    boolean portOk = port == null ? !portRequired : port.matches("\\d{1,5}") && Integer.parseInt(port) <= 65535;
    if (host.isEmpty() || host.contains("@") || !portOk) {
      throw new IllegalArgumentException("strata://" + authority + ": the authority is not "
          + (portRequired ? "host:port,host:port or zk@host:port"
              : "host, host:port, host:port,host:port or zk@host:port"));
    }
    return new String[] {host, port};
  }

  /** Prints a failure's stack trace when debugging; never otherwise. */
  void debugTrace(Throwable t) {
    if (debug) {
      t.printStackTrace(err);
    }
  }

  @Override
  public void close() {
    out.flush();
    if (fs != null) {
      try {
        fs.close();
      } catch (IOException | RuntimeException e) {
        debugTrace(e);
      }
      fs = null;
    }
    err.flush();
  }
}
