package io.strata.worker;

import io.strata.common.conf.StrataConf;
import io.strata.server.Startup;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Entry point of {@code bin/strata-start.sh worker}: runs a worker until the JVM is told to stop. A bad
 * configuration or a failed start exits 1 with one line on stderr ({@link Startup}).
 */
public final class WorkerMain {
  private WorkerMain() {}

  public static void main(String[] args) throws Exception {
    StrataConf conf = Startup.loadConf("worker", List.of(WorkerKeys.class),
        List.of("strata.master.", "strata.user."));
    WorkerProcess worker = Startup.start("worker", () -> new WorkerProcess(conf, Clock.systemUTC())
        .onFatal(() -> {
          System.err.println("Every storage dir of this worker has failed, or the master refused it (see the log); "
              + "exiting");
          new Thread(() -> System.exit(1), "worker-exit").start(); // the caller may hold what the shutdown needs
        }).start());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      worker.close();
      stopped.countDown();
    }, "worker-shutdown"));
    stopped.await();
  }
}
