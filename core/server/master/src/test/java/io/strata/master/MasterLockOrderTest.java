package io.strata.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.master.block.BlockReport;
import io.strata.master.file.FileInfo;
import io.strata.master.file.FileSystemMaster;
import io.strata.master.journal.Journal;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's locks are taken in one order (docs/ARCHITECTURE.md, "Concurrency"): completes (tree write
 * lock, then the block master), worker heartbeats and registrations reporting blocks the master does not
 * know (which ask the namespace about their files) and checkpoints (tree, block master, journal) run
 * concurrently on the real classes over a real journal and all finish within a bound. On a lock-order
 * inversion the test fails with every thread's stack and the locks it holds and waits for.
 */
class MasterLockOrderTest {
  private static final Duration WORKER_TIMEOUT = Duration.ofMinutes(5);
  private static final long BLOCK = 1024;
  private static final int FILES = 300;
  private static final int BEATS = 300;
  private static final int CHECKPOINTS = 30;
  private static final long TIMEOUT_S = 30;

  @TempDir
  Path tmp;
  private Journal journal;
  private final ExecutorService pool = Executors.newFixedThreadPool(5, r -> {
    Thread t = new Thread(r, "lock-order-" + r.hashCode());
    t.setDaemon(true); // a deadlocked thread must not keep the test JVM alive
    return t;
  });

  @AfterEach
  void close() {
    pool.shutdownNow();
    if (journal != null) {
      journal.close();
    }
  }

  @Test
  void completes_heartbeatsWithUnknownBlocks_andCheckpoints_neverDeadlock() throws Exception {
    journal = new Journal(tmp.resolve("journal"), 1 << 20);
    FileSystemMaster fs = new FileSystemMaster(new MutableClock(1_700_000_000_000L), WORKER_TIMEOUT, 1 << 20,
        journal);
    journal.replay(e -> { });
    journal.startWriting();
    fs.createDirectory("/d", false, false, 0755);
    long writer = fs.blockMaster().register(new WorkerAddress("writer", 29999), 1L << 40, 0, List.of(), 0);
    long reporter = fs.blockMaster().register(new WorkerAddress("reporter", 29999), 1L << 40, 0, List.of(), 0);
    CountDownLatch start = new CountDownLatch(1);
    AtomicBoolean stop = new AtomicBoolean();
    List<Future<?>> tasks = new ArrayList<>();
    List<Long> completed = new ArrayList<>();

    // Writers: create, commit one block, complete (tree write lock, then the block master's lengths).
    for (int w = 0; w < 2; w++) {
      int lane = w;
      tasks.add(pool.submit(() -> {
        start.await();
        for (int i = 0; i < FILES; i++) {
          FileInfo f = fs.createFile("/d/f-" + lane + "-" + i, BLOCK, false, 0644);
          fs.commitBlock(writer, BlockId.of(f.id(), 0), 10, "MEM");
          fs.completeFile(f.path(), f.id(), 10);
          synchronized (completed) {
            completed.add(f.id());
          }
        }
        return null;
      }));
    }
    // Heartbeats reporting blocks the master does not know (it asks the namespace about each file),
    // and registrations with such a report.
    tasks.add(pool.submit(() -> {
      start.await();
      for (int i = 0; i < BEATS; i++) {
        List<BlockReport> unknown = new ArrayList<>();
        for (int j = 0; j < 50; j++) {
          unknown.add(new BlockReport(BlockId.of(1_000_000 + i * 50L + j, 0), 10, "MEM"));
        }
        fs.workerHeartbeat(reporter, 1L << 40, 0, unknown, List.of(), null, 0, List.of());
        if (i % 50 == 0) {
          fs.blockMaster().register(new WorkerAddress("registrar", 29999), 1L << 40, 0, unknown, 0);
        }
      }
      return null;
    }));
    // Checkpoints (tree, block master and journal together).
    tasks.add(pool.submit(() -> {
      start.await();
      for (int i = 0; i < CHECKPOINTS && !stop.get(); i++) {
        fs.checkpoint();
      }
      return null;
    }));
    // A stream of other writers queueing for the tree's write lock (the three-way case).
    tasks.add(pool.submit(() -> {
      start.await();
      for (int i = 0; i < FILES && !stop.get(); i++) {
        fs.createDirectory("/m-" + i, false, false, 0755);
      }
      return null;
    }));

    start.countDown();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
    for (Future<?> t : tasks) {
      long left = deadline - System.nanoTime();
      try {
        t.get(Math.max(1, left), TimeUnit.NANOSECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        stop.set(true);
        throw new AssertionError("Master operations did not finish within " + TIMEOUT_S + " s (a lock-order "
            + "deadlock?); threads:\n" + allThreads());
      }
    }
    assertThat(completed).hasSize(2 * FILES);
    for (long id : completed) {
      assertThat(fs.blockMaster().blockLength(BlockId.of(id, 0))).isEqualTo(10);
    }
  }

  /** Every thread's stack with the monitors and locks it holds and waits for. */
  static String allThreads() {
    StringBuilder sb = new StringBuilder();
    long[] deadlocked = ManagementFactory.getThreadMXBean().findDeadlockedThreads();
    sb.append("deadlocked thread ids: ").append(deadlocked == null ? "none" : java.util.Arrays.toString(deadlocked))
        .append('\n');
    for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
      sb.append('"').append(t.getThreadName()).append("\" id=").append(t.getThreadId()).append(' ')
          .append(t.getThreadState());
      if (t.getLockName() != null) {
        sb.append(" waiting for ").append(t.getLockName()).append(" held by ").append(t.getLockOwnerName());
      }
      sb.append('\n');
      for (StackTraceElement e : t.getStackTrace()) {
        sb.append("    at ").append(e).append('\n');
      }
      for (var m : t.getLockedMonitors()) {
        sb.append("    holds monitor ").append(m).append('\n');
      }
      for (var l : t.getLockedSynchronizers()) {
        sb.append("    holds lock ").append(l).append('\n');
      }
    }
    return sb.toString();
  }
}
