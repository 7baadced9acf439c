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
 * <p>Not thread-safe: one run, one thread.
 */
final class CliContext implements AutoCloseable {
  private final StrataConf conf;
  private final InputStream in;
  private final PrintStream out;
  private final PrintStream err;
  private final Clock clock;
  private final ZoneId zone;
  private final boolean debug;
  private final Function<StrataConf, FileSystem> fsFactory;
  private FileSystem fs;

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

  /** host:port of the master this run talks to, as configured. */
  String masterAddress() {
    return conf.get(CommonKeys.MASTER_HOSTNAME) + ":" + conf.get(CommonKeys.MASTER_RPC_PORT);
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
