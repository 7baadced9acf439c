package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileSystem;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.DeadlineExceededException;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FileSystem.Factory#get} while the first caller's making of the shared client hangs on a real master process
 * (bin/strata-start.sh master) frozen with SIGSTOP: it keeps its port open and answers nothing, so the first caller's
 * leader look-up (a ping with its own 2 s deadline, the client naming the master in strata.master.rpc.addresses) takes
 * that long. A second caller gives up after strata.network.rpc.timeout with an error naming the key, an interrupted
 * caller leaves at once with InterruptedIOException, neither keeps a reference, and the next caller makes the client
 * again rather than waiting for the stuck making; once the master runs again a get gives a working client.
 */
class FileSystemFactoryWaitIT {
  @TempDir
  static Path tmp;
  private static final Map<String, String> env = new HashMap<>();

  @AfterAll
  static void stopAll() throws Exception {
    Scripts.run(tmp, env, "bin/strata-stop.sh", "all");
  }

  private static void signal(String sig, long pid) throws Exception {
    assertThat(new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).start().waitFor()).isZero();
  }

  /** Whether {@code t} waits (parked, or in a timed wait) inside a method of class {@code in}. */
  private static boolean waitingIn(Thread t, String in) {
    Thread.State s = t.getState();
    return (s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING)
        && java.util.Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getClassName().equals(in));
  }

  /** Runs {@code get} on a thread of its own; the thread is put in {@code thread}. */
  private static CompletableFuture<FileSystem> getOnThread(StrataConf conf, AtomicReference<Thread> thread,
      AtomicBoolean interruptedAfter) {
    CompletableFuture<FileSystem> got = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        got.complete(FileSystem.Factory.get(conf));
      } catch (Throwable e) {
        got.completeExceptionally(e);
      } finally {
        interruptedAfter.set(Thread.currentThread().isInterrupted());
      }
    }, "factory-get");
    thread.set(t);
    t.setDaemon(true);
    t.start();
    return got;
  }

  @Test
  void waitForAStuckMaking_isBoundedAndInterruptible_andTheNextGetMakesItAgain() throws Exception {
    long pid = Scripts.startMaster(tmp, env, "256m");
    String port = env.get("STRATA_MASTER_RPC_PORT");
    StrataConf conf = StrataConf.of(Map.of(
        "strata.master.rpc.addresses", "localhost:" + port,
        "strata.network.rpc.timeout", "700ms",
        "strata.user.master.retry.window", "0s"));
    signal("STOP", pid);
    FileSystem maker = null;
    FileSystem again = null;
    try {
      AtomicReference<Thread> makerThread = new AtomicReference<>();
      CompletableFuture<FileSystem> made = getOnThread(conf, makerThread, new AtomicBoolean());
      // the first caller is in the making (its leader look-up, which the stopped master holds for 2 s)
      await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5))
          .until(() -> waitingIn(makerThread.get(), "io.strata.client.FileSystemContext"));

      // Two waiters at once, so both are done well within the making's 2 s: one gives up after the RPC timeout,
      // the other is interrupted and leaves at once, its interrupt flag kept.
      long t0 = System.nanoTime();
      AtomicReference<Thread> timedThread = new AtomicReference<>();
      CompletableFuture<FileSystem> timed = getOnThread(conf, timedThread, new AtomicBoolean());
      AtomicReference<Thread> waiterThread = new AtomicReference<>();
      AtomicBoolean flagKept = new AtomicBoolean();
      CompletableFuture<FileSystem> interrupted = getOnThread(conf, waiterThread, flagKept);
      await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5))
          .until(() -> waitingIn(waiterThread.get(), "io.strata.client.FileSystemCache"));
      long w0 = System.nanoTime();
      waiterThread.get().interrupt();
      assertThatThrownBy(() -> interrupted.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
          .cause().isInstanceOf(InterruptedIOException.class).hasMessageContaining("localhost:" + port);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - w0)).as("the interrupted waiter's stay")
          .isLessThan(700);
      waiterThread.get().join(5_000);
      assertThat(flagKept.get()).as("interrupt flag kept").isTrue();

      assertThatThrownBy(() -> timed.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).cause()
          .isInstanceOf(DeadlineExceededException.class)
          .hasMessageContaining("strata.network.rpc.timeout").hasMessageContaining("700 ms")
          .hasMessageContaining("localhost:" + port);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("the waiter's wait")
          .isGreaterThanOrEqualTo(690).isLessThan(5_000);
      assertThat(made).as("the first making, still stuck").isNotDone();

      // The next caller does not wait for the stuck making: it makes the client itself (with its own settings, the
      // master still answering nothing), a different instance.
      again = FileSystem.Factory.get(conf);
      maker = made.get(10, TimeUnit.SECONDS);
      assertThat(again).isNotSameAs(maker);
      assertThat(FileSystem.Factory.references(maker)).as("the waiters that gave up hold no reference").isEqualTo(1);
      assertThat(FileSystem.Factory.references(again)).isEqualTo(1);
    } finally {
      signal("CONT", pid);
    }

    // The master runs again: a get gives a client that works (the live instance of the key), and so do the others.
    try (FileSystem later = FileSystem.Factory.get(conf)) {
      assertThat(later).isSameAs(again);
      // A master just let run again catches up first (its timers, the connections it accepted meanwhile): its first
      // answers may take longer than the short RPC timeout used here.
      await().atMost(Duration.ofSeconds(30)).ignoreException(DeadlineExceededException.class)
          .until(() -> later.exists("/"));
      // (a create that timed out may have been applied: one that finds it done is not made again)
      await().atMost(Duration.ofSeconds(30)).ignoreException(DeadlineExceededException.class).until(() -> {
        if (!later.exists("/after")) {
          later.createDirectory("/after");
        }
        return later.exists("/after");
      });
      FileSystem first = maker;
      await().atMost(Duration.ofSeconds(30)).ignoreException(DeadlineExceededException.class)
          .until(() -> first.exists("/after"));
    }
    maker.close();
    again.close();
    assertThat(FileSystem.Factory.references(maker)).isZero();
    assertThat(FileSystem.Factory.references(again)).isZero();
  }
}
