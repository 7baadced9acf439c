package io.strata.worker;

import io.strata.common.conf.StrataConf;
import java.time.Clock;
import java.util.concurrent.CountDownLatch;

/** Entry point of {@code bin/strata-start.sh worker}: runs a worker until the JVM is told to stop. */
public final class WorkerMain {
  private WorkerMain() {}

  public static void main(String[] args) throws Exception {
    StrataConf conf = StrataConf.load();
    WorkerProcess worker = new WorkerProcess(conf, Clock.systemUTC()).onFatal(() -> {
      System.err.println("Every storage dir of this worker has failed; exiting");
      System.exit(1);
    }).start();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      worker.close();
      stopped.countDown();
    }, "worker-shutdown"));
    stopped.await();
  }
}
