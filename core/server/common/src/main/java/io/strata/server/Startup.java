package io.strata.server;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.ConfigCheck;
import io.strata.common.conf.StrataConf;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the process mains ({@code MasterMain}, {@code WorkerMain}, {@code LocalMain}) share before and while
 * they start: the configuration is loaded and checked ({@link ConfigCheck}: a bad value fails the start,
 * an unknown {@code strata.} key is warned about with the nearest known one), and a start that fails ends
 * the JVM with exit code 1 and ONE line on stderr, {@code Cannot start the <process>: <why>}, which
 * {@code bin/strata-start.sh} shows as is; the stack trace goes to the log file only.
 *
 * <p>Warnings go to stderr as lines starting {@code Warning: } (the start script repeats them) and to the
 * log. Called from a main thread; stateless.
 */
public final class Startup {
  private static final Logger LOG = LoggerFactory.getLogger(Startup.class);

  /** Starts a process part; may throw anything a start can. */
  @FunctionalInterface
  public interface Starter<T> {
    T start() throws Exception;
  }

  private Startup() {}

  /**
   * Loads the configuration and checks it against the keys of {@code keysClasses} (besides
   * {@link CommonKeys} and {@link ServerKeys}, which every server reads); exits with one line when one of
   * their values is bad. Names under {@code otherPrefixes} belong to other processes and are not checked.
   */
  public static StrataConf loadConf(String process, List<Class<?>> keysClasses, List<String> otherPrefixes) {
    try {
      StrataConf conf = StrataConf.load();
      List<Class<?>> classes = new java.util.ArrayList<>(List.of(CommonKeys.class, ServerKeys.class));
      classes.addAll(keysClasses);
      List<String> warnings = ConfigCheck.check(conf, ConfigCheck.keysOf(classes.toArray(new Class<?>[0])),
          otherPrefixes);
      for (String w : warnings) {
        LOG.warn(w);
        System.err.println("Warning: " + w);
      }
      return conf;
    } catch (RuntimeException e) {
      return fail(process, e);
    }
  }

  /** Runs {@code starter}; exits with one line when it throws. */
  public static <T> T start(String process, Starter<T> starter) {
    try {
      return starter.start();
    } catch (Exception e) {
      return fail(process, e);
    }
  }

  /** The one line a failed start prints: the message of the failure, on one line. */
  public static String failureLine(String process, Throwable e) {
    String why = e.getMessage() == null || e.getMessage().isBlank() ? e.toString() : e.getMessage();
    return "Cannot start the " + process + ": " + why.replaceAll("\\s*\\R\\s*", " ").trim();
  }

  private static <T> T fail(String process, Throwable e) {
    LOG.error("Cannot start the {}", process, e);
    System.err.println(failureLine(process, e));
    System.err.flush();
    System.exit(1);
    throw new AssertionError("exit returned");
  }
}
