package io.strata.master;

import io.strata.common.conf.StrataConf;
import io.strata.server.Startup;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Entry point of {@code bin/strata-start.sh master}: runs a master until the JVM is told to stop. A bad
 * configuration or a failed start exits 1 with one line on stderr ({@link Startup}).
 */
public final class MasterMain {
  private MasterMain() {}

  public static void main(String[] args) throws Exception {
    StrataConf conf = Startup.loadConf("master", List.of(MasterKeys.class),
        List.of("strata.worker.", "strata.user."));
    MasterProcess master = Startup.start("master", () -> new MasterProcess(conf, Clock.systemUTC())
        .onFatal(() -> {
          System.err.println("This master lost its leadership, cannot take over, or cannot write its journal; "
              + "exiting");
          // On a thread of its own: the exit runs the shutdown hook, which closes the master, and the caller may
          // hold what that close needs.
          new Thread(() -> System.exit(1), "master-exit").start();
        }).start());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      master.close();
      stopped.countDown();
    }, "master-shutdown"));
    stopped.await();
  }
}
